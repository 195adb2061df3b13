package kafka

import (
	"context"
	"errors"
	"maps"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
)

// How long the broker may hold a fetch open waiting for new records.
const (
	// DefaultFollowWait is a Follower's long-poll wait: it bounds how
	// late a record on one leader is seen while another leader's fetch
	// of the same round waits.
	DefaultFollowWait = 500 * time.Millisecond
	// defaultRangeWait is a Range's: every channel of a range has
	// committed data below its end, so its fetches rarely wait at all.
	defaultRangeWait = 100 * time.Millisecond
)

// followEnd is the end of a followed channel: none.
const followEnd = math.MaxInt64

// FetchWait sets how long the broker may hold a fetch open waiting for new
// records, overriding the default: 100ms for a Range, DefaultFollowWait for
// a Follower. A shorter wait sees records on other leaders sooner and costs
// more idle fetches.
func FetchWait(d time.Duration) RangeOption {
	return rangeOpt{func(c *rangeConfig) { c.maxWait = d }}
}

// Follower is a live, never-ending read_committed read of some channels —
// what `watch` and `demo` consume. It yields the item stream of a Range (a
// start position per channel, the committed records, position items over
// offsets that carried no record) but never ends: at the end of the log it
// waits for new records. A Follower is read by one goroutine at a time;
// LogEnds may be called from any goroutine.
type Follower struct {
	r  *Range
	st *followState
}

// followState is what a Range read by a Follower keeps beyond a Range: the
// latest end of each channel's log. Its mutex guards ends only, which
// LogEnds reads from other goroutines.
type followState struct {
	mu   sync.Mutex
	ends map[clock.Channel]int64
}

func (s *followState) setEnd(ch clock.Channel, end int64) {
	if end < 0 {
		return
	}
	s.mu.Lock()
	s.ends[ch] = end
	s.mu.Unlock()
}

// stableEnd is the end a read_committed reader sees in a fetch response:
// the last stable offset, or the high watermark when the broker gives none.
func stableEnd(rp *kmsg.FetchResponseTopicPartition) int64 {
	if rp.LastStableOffset >= 0 {
		return rp.LastStableOffset
	}
	return rp.HighWatermark
}

// fetched notes the log end a fetch response reports for ch.
func (s *followState) fetched(ch *rchan, rp *kmsg.FetchResponseTopicPartition) {
	s.setEnd(ch.Channel(), stableEnd(rp))
}

// idle reports whether a fetch that moved ch's position nowhere did so
// because the position is at the end of what may be read: the normal state
// of a follower with nothing new, not a failure.
func (s *followState) idle(ch *rchan, rp *kmsg.FetchResponseTopicPartition, err error) bool {
	end := stableEnd(rp)
	return err == nil && end >= 0 && ch.Position >= end
}

// followed queues a position item when a fetch moved ch's position past
// offsets that carried no record (transaction markers, aborted records):
// a Range says so only before its next record or at its end, a Follower at
// once, so that a live gate settles them without waiting for more records.
func (r *Range) followed(ch *rchan) {
	if ch.Position > ch.emitted {
		r.queue = append(r.queue, ch.position(ch.Position))
		ch.emitted = ch.Position
	}
}

// Follow resolves the selected channels and their start positions now and
// returns a Follower reading them from there on, without end. Only the
// start of spec is used: its end must be the log end (the default of every
// offsets expression with no end, such as "start", "end", "-100" or
// "@-1h"). A start of "end" follows only records written from now on.
//
// Errors are those of OpenRange. The channels are fixed when Follow
// returns: partitions added to a topic later are not read.
func (c *Client) Follow(ctx context.Context, sels []TopicSel, spec OffsetSpec, opts ...RangeOption) (*Follower, error) {
	if spec.End.Kind != BoundLogEnd {
		return nil, errors.New("offsets: a follower has no end: give a start only (e.g. start, end, -100, @-1h)")
	}
	st := &followState{ends: make(map[clock.Channel]int64)}
	r, err := c.openRange(ctx, sels, spec, st, opts)
	if err != nil {
		return nil, err
	}
	return &Follower{r: r, st: st}, nil
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
func (f *Follower) Next(ctx context.Context) (*capture.Item, error) {
	return f.r.Next(ctx)
}

// Buffered returns the number of items Next can return without waiting
// for the broker. A reader that batches items hands its batch on when it
// reaches zero.
func (f *Follower) Buffered() int { return len(f.r.queue) }

// Channels returns every channel followed, in selection order, with how
// far it has been read. End is math.MaxInt64 (never reached); the offsets
// from LogStart to LastStable are those of when Follow was called.
func (f *Follower) Channels() []RangeChannel { return f.r.Channels() }

// LogEnds returns the latest end of each channel's log seen: the last
// stable offset (the end a read_committed reader may read up to) or, when
// a broker does not report one, the high watermark. It starts with the
// ends listed when Follow was called and moves with every fetch. A
// not-received requirement below a channel's log end is lagging (written,
// not yet read); at or beyond it, it is not yet written (or not yet
// committed). The map is a copy, safe to keep.
func (f *Follower) LogEnds() map[clock.Channel]int64 {
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	return maps.Clone(f.st.ends)
}
