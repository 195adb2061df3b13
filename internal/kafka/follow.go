package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// Follower is a live, never-ending read_committed read of some channels —
// what `watch` and `demo` consume. It yields the item stream of a Range (a
// start position per channel, the committed records, position items over
// offsets that carried no record) but never ends: at the end of the log it
// waits for new records. A Follower is read by one goroutine at a time;
// LogEnds may be called from any goroutine.
type Follower struct {
	rd *reader

	// mu guards the latest ends of the channels' logs — the stable end
	// (ends) and the high watermark (hws) — which LogEnds and
	// HighWatermarks read from other goroutines.
	mu       sync.Mutex
	ends     map[clock.Channel]int64
	hws      map[clock.Channel]int64
	retrying time.Time // see Retrying
	failing  error     // see Failing

	grower *grower // with OnNewChannel
}

// Follow resolves the selected channels and their start positions now and
// returns a Follower reading them from there on, without end. Only the
// start of spec is used: its end must be the log end (the default of every
// offsets expression with no end, such as "start", "end", "-100" or
// "@-1h"). A start of "end" follows only records written from now on.
//
// Errors are those of OpenRange. The channels are fixed when Follow
// returns — partitions added to a topic later are not read — unless
// OnNewChannel is given.
func (c *Client) Follow(ctx context.Context, sels []TopicSel, spec OffsetSpec, opts ...ReadOption) (*Follower, error) {
	if spec.End.Kind != BoundLogEnd {
		return nil, errors.New("offsets: a follower has no end: give a start only (e.g. start, end, -100, @-1h)")
	}
	rd, err := c.open(ctx, sels, spec, DefaultFollowWait, opts)
	if err != nil {
		return nil, err
	}
	rd.keep = true // items go on to other goroutines: each stays valid
	f := &Follower{rd: rd, ends: make(map[clock.Channel]int64, len(rd.chans)), hws: make(map[clock.Channel]int64, len(rd.chans))}
	for _, ch := range rd.chans {
		f.setEnd(ch.Channel(), ch.stableEnd(), ch.HighWatermark)
	}
	rd.observe = f.noteFailing
	if rd.cfg.onNew != nil {
		f.startGrowing(ctx, sels)
	}
	return f, nil
}

// noteFailing keeps, for Retrying, since when the longest-failing channel
// has been failing; zero when none is.
func (f *Follower) noteFailing(active []*rchan) {
	var since time.Time
	var failing *rchan
	for _, ch := range active {
		if !ch.failingSince.IsZero() && (since.IsZero() || ch.failingSince.Before(since)) {
			since, failing = ch.failingSince, ch
		}
	}
	var err error
	if failing != nil {
		cause := failing.lastErr
		if cause == nil {
			cause = errors.New("the fetch made no progress")
		}
		err = f.rd.rangeError(failing, fmt.Errorf("retrying since %s: %w", since.UTC().Format(time.RFC3339), cause))
	}
	f.mu.Lock()
	f.retrying, f.failing = since, err
	f.mu.Unlock()
}

// Retrying returns since when the follower has been unable to read — the
// broker gone or silent, a leader moving — and retrying: the time its
// longest-failing channel first failed, or zero while every channel reads.
// A read that fails for the RetryFor time ends with a *RangeError. It may
// be called from any goroutine, while Next waits.
func (f *Follower) Retrying() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.retrying
}

// Failing returns, while the follower is Retrying, a *RangeError naming
// its longest-failing channel, the position it is stuck at, since when
// and the last cause; nil while every channel reads. Unlike the error
// that ends a read, it is a report: the follower goes on retrying. It may
// be called from any goroutine.
func (f *Follower) Failing() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failing
}

// setEnd notes ch's stable end and high watermark; a negative one is
// unknown and changes nothing.
func (f *Follower) setEnd(ch clock.Channel, end, hwm int64) {
	f.mu.Lock()
	if end >= 0 {
		f.ends[ch] = end
	}
	if hwm >= 0 {
		f.hws[ch] = hwm
	}
	f.mu.Unlock()
}

// Next returns the next item, waiting for one as long as it takes: until a
// record is committed or a position moves, ctx is done (ctx.Err()), or the
// read fails. Per channel, in offset order, it yields a KindPosition item
// at the start, each committed record as a KindRecord item, and a
// KindPosition item wherever the position moved past offsets that carried
// no record (transaction markers, aborted records), as soon as it did.
// Items of different channels interleave in fetch order. A read never
// passes a channel's last stable offset, so records of an open transaction
// are yielded once it commits.
//
// A failing broker is retried as for a Range; a channel that makes no
// progress for the RetryFor time, or a fatal error (authorization, topic
// deleted or recreated), ends the follower with a *RangeError, returned by
// this and every later call.
func (f *Follower) Next(ctx context.Context) (*record.Item, error) {
	return f.rd.next(ctx, f)
}

// active returns every channel, new ones first adopted: a followed
// channel never ends.
func (f *Follower) active() []*rchan {
	f.adopt()
	return f.rd.chans
}

// take queues every record of a fetch and notes the log end it reports. A
// fetch that moved nowhere because the position is at the end of what may
// be read is the normal state of a follower with nothing new, not a
// failure. When the position moved past offsets that carried no record, a
// position item says so at once (a Range says so only before its next
// record or at its end), so that a live gate settles them without waiting
// for more records.
func (f *Follower) take(now time.Time, ch *rchan, p fetched) {
	f.setEnd(ch.Channel(), p.end, p.hwm)
	rd := f.rd
	rd.begin()
	defer rd.commit(ch)
	next, err := rd.decodeAll(ch, p)
	if next <= ch.Position {
		if err == nil && p.end >= 0 && ch.Position >= p.end {
			ch.ok() // at the end of the log: nothing new yet
			return
		}
		ch.failNoProgress(now, err)
		return
	}
	if p.gap {
		rd.addGap(ch, ch.Position, next)
	}
	ch.advance(next)
	rd.settle(ch)
}

// Buffered returns the number of items Next can return without waiting
// for the broker. A reader that batches items hands its batch on when it
// reaches zero.
func (f *Follower) Buffered() int { return f.rd.ready }

// Channels returns every channel followed, in selection order, with how
// far it has been read; the offsets from LogStart to LastStable are those
// of when Follow was called (LogEnds has the latest ends).
func (f *Follower) Channels() []ChannelProgress { return f.rd.progress() }

// LogEnds returns the latest end of each channel's log seen: the last
// stable offset (the end a read_committed reader may read up to) or, when
// a broker does not report one, the high watermark. It starts with the
// ends listed when Follow was called and moves with every fetch. A
// not-received requirement below a channel's log end is lagging (written,
// not yet read); at or beyond it, it is not yet written (or not yet
// committed). The map is a copy, safe to keep.
func (f *Follower) LogEnds() map[clock.Channel]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.ends)
}

// HighWatermarks returns the latest high watermark of each channel seen:
// the end of its log, committed or not (the last stable offset stays
// below it while a transaction is open). Like LogEnds it starts with the
// values listed when Follow was called, moves with every fetch, and is a
// copy.
func (f *Follower) HighWatermarks() map[clock.Channel]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.hws)
}
