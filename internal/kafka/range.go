package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/causalctl/causalctl/internal/record"
)

// RangeChannel describes one channel of a range and how far it was read.
type RangeChannel struct {
	ChannelProgress
	// End bounds the range: it reads offsets Start ≤ o < End.
	End int64
	// Done is true once the channel's final position item is queued.
	Done bool
	// BehindTransaction says the read stopped at Position, below End,
	// because an open transaction kept the last stable offset there for
	// the whole wait (ToHighWatermark): what lies from Position to End was
	// not read.
	BehindTransaction bool
}

// Range is a finite, read_committed read of some channels: see OpenRange.
// A Range is read by one goroutine at a time.
type Range struct {
	rd   *reader
	ends []int64 // by channel index
	done []bool
	// With ToHighWatermark: since when each channel has been held below
	// its end by an open transaction (zero while not), and whether the
	// wait ran out.
	heldSince []time.Time
	behind    []bool
}

// ToHighWatermark ends each channel of a range at its high watermark when
// the range opens, rather than its last stable offset, as a reader of a
// Kafka Streams changelog must (SPEC §6): entries committed after a
// transaction that is still open are read once it ends. The range stays
// read_committed, so where an open transaction keeps the last stable offset
// below the end, the channel waits for it at most wait (from the first
// fetch that finds it held), then ends where it stands, with its
// RangeChannel.BehindTransaction set. Nothing of an open or aborted
// transaction is ever yielded. The spec's end is ignored.
func ToHighWatermark(wait time.Duration) ReadOption {
	return readOpt(func(c *readConfig) { c.toHWM, c.txnWait = true, wait })
}

// OpenRange resolves the selected channels and their range bounds once, now,
// and returns a Range to read them with Next.
//
// Every channel's end is at most its last stable offset at this moment (the
// range reads committed data only, so it ends below any open transaction),
// which makes every range finite: Next reaches io.EOF even when a channel
// ends in transaction markers, aborted records or an open transaction.
// Starts are clamped to [log start, end] and ends to [start, end].
//
// Unknown topics and partitions, topics the credentials may not describe,
// and topics whose UUID changed since an earlier lookup of this client are
// errors naming the topic.
func (c *Client) OpenRange(ctx context.Context, sels []TopicSel, spec OffsetSpec, opts ...ReadOption) (*Range, error) {
	rd, err := c.open(ctx, sels, spec, defaultRangeWait, opts)
	if err != nil {
		return nil, err
	}
	endTimes, err := rd.listTimes(ctx, spec.End)
	if err != nil {
		return nil, err
	}
	n := len(rd.chans)
	r := &Range{rd: rd, ends: make([]int64, n), done: make([]bool, n), heldSince: make([]time.Time, n), behind: make([]bool, n)}
	for i, ch := range rd.chans {
		end := ch.stableEnd()
		r.ends[i] = clamp(resolveBound(spec.End, ch.LogStart, end, endTimes[ch.key()]), ch.Start, end)
		if rd.cfg.toHWM {
			r.ends[i] = max(ch.HighWatermark, ch.Start)
		}
		r.done[i] = ch.Start == r.ends[i] // one position item is both start and end
	}
	return r, nil
}

// EmptyRange is a range of no channel: Next says io.EOF at once. An
// attach to a process whose every bound topic was deleted reads on
// nothing, and its state says why, where opening a range of nothing is
// an error ("no topic selected").
func EmptyRange() *Range { return &Range{rd: &reader{}} }

func checkSpec(spec OffsetSpec) error {
	switch spec.Start.Kind {
	case BoundLogStart, BoundLogEnd, BoundOffset, BoundAfterStart, BoundBeforeEnd, BoundTime:
	default:
		return errors.New("offsets: invalid start (use ParseOffsets)")
	}
	switch spec.End.Kind {
	case BoundLogEnd, BoundOffset, BoundTime:
	default:
		return errors.New("offsets: invalid end (use ParseOffsets)")
	}
	return nil
}

func findTopic(meta map[string]*topicMeta, s TopicSel) (*topicMeta, error) {
	if s.Topic != "" {
		if tm, ok := meta[s.Topic]; ok {
			return tm, nil
		}
		return nil, &UnknownTopicError{Topic: s.Topic}
	}
	for _, tm := range meta {
		if tm.id == s.ID {
			return tm, nil
		}
	}
	return nil, &UnknownTopicError{ID: s.ID}
}

// resolveBound turns a bound into an offset of a partition whose log runs
// from logStart to end (exclusive). at is the ListOffsets answer for a time
// bound: -1 means no record at or after the time, so the end.
func resolveBound(b Bound, logStart, end int64, at listed) int64 {
	switch b.Kind {
	case BoundLogStart:
		return logStart
	case BoundOffset:
		return b.N
	case BoundAfterStart:
		if b.N > end-logStart {
			return end
		}
		return logStart + b.N
	case BoundBeforeEnd:
		if b.N > end-logStart {
			return logStart
		}
		return end - b.N
	case BoundTime:
		if at.offset < 0 {
			return end
		}
		return at.offset
	}
	return end // BoundLogEnd
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// Channels returns every channel of the range, in selection order, with how
// far it has been read. Use it for progress reports and summaries.
func (r *Range) Channels() []RangeChannel {
	out := make([]RangeChannel, len(r.rd.chans))
	for i, ch := range r.rd.chans {
		out[i] = RangeChannel{ChannelProgress: ch.ChannelProgress, End: r.ends[i], Done: r.done[i], BehindTransaction: r.behind[i]}
	}
	return out
}

// Next returns the next item of the range, or io.EOF after the last one.
//
// Per channel, in offset order, it yields: a KindPosition item at the range
// start; each committed record as a KindRecord item; before a record, a
// KindPosition item at the record's offset when the offsets just below it
// carried no record (transaction markers, aborted records, compacted
// offsets); and a final KindPosition item at the range end (a range with
// start = end has the single start item). Items of different channels
// interleave in fetch order.
//
// A broker that fails is retried, with a fresh look at the partition
// leaders, until a channel has made no progress for the RetryFor time; then
// the items read so far are returned and after them a *RangeError naming
// the channel and how far it got. Authorization failures, unknown topics and
// topic identity changes fail at once.
//
// The item, and the slices it holds, are valid until the next call of Next
// or NextOf: a range reuses their storage, so that reading it allocates
// nothing per record. While the caller works on what one fetch read, the
// next fetch is already in flight.
func (r *Range) Next(ctx context.Context) (*record.Item, error) {
	return r.rd.next(ctx, r)
}

// NextOf returns the next item of channel i (an index into Channels), or
// io.EOF after the channel's end position item: the items Next yields for
// that channel, in the same order, for a caller that merges the channels
// itself (by timestamp, say) and so needs to read the one it is short of.
// Other channels are fetched on the way only while what they buffer stays
// within bounds (a few fetches' worth each).
//
// The item is valid until the next NextOf call for the same channel. A
// range is read with Next or with NextOf, not both.
func (r *Range) NextOf(ctx context.Context, i int) (*record.Item, error) {
	return r.rd.nextOf(ctx, r, i, func(i int) bool { return r.done[i] })
}

// active returns the channels not yet at their end.
func (r *Range) active() []*rchan {
	var out []*rchan
	for i, ch := range r.rd.chans {
		if !r.done[i] {
			out = append(out, ch)
		}
	}
	return out
}

// take adds the records of a fetch below the channel's end and ends the
// channel when its position reaches the end.
// waitTransaction handles a fetch that found ch at its last stable offset,
// below its end (which only ToHighWatermark sets): an open transaction
// holds it. It is no failure; the next fetch waits at the broker for it
// to end. Once the wait has run out, the channel ends where it stands.
func (r *Range) waitTransaction(now time.Time, ch *rchan) {
	i := ch.index
	if r.heldSince[i].IsZero() {
		r.heldSince[i] = now
	}
	ch.ok()
	if now.Sub(r.heldSince[i]) < r.rd.cfg.txnWait {
		return
	}
	r.behind[i] = true
	r.rd.addPosition(ch, ch.Position) // always: it says the channel ended
	ch.emitted = ch.Position
	r.done[i] = true
}

func (r *Range) take(now time.Time, ch *rchan, p fetched) {
	rd := r.rd
	end := r.ends[ch.index]
	rd.begin()
	defer rd.commit(ch)
	next, err := rd.decodeBelow(ch, p, end)
	if next <= ch.Position {
		if err == nil && p.end >= 0 && ch.Position >= p.end && ch.Position < end {
			r.waitTransaction(now, ch)
			return
		}
		ch.failNoProgress(now, err)
		return
	}
	if p.gap {
		rd.addGap(ch, ch.Position, min(next, end))
	}
	ch.advance(min(next, end))
	if ch.Position == end {
		rd.addPosition(ch, end) // always: it says the channel ended
		ch.emitted = end
		r.done[ch.index] = true
	}
}
