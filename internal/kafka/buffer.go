package kafka

import (
	"context"
	"io"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
)

// This file is what a read holds between the fetch and its caller: per
// channel, the items read and not yet taken, in chunks — one chunk a
// channel a fetch — whose storage is reused once taken, so that a steady
// read allocates nothing per record. What is buffered is bounded by bytes:
// a channel with data buffered is fetched again only while it holds less
// than bufferedFetches fetches' worth and the whole read less than
// maxBufferedBytes; a channel with nothing buffered may always be fetched
// (a caller waiting for it could wait for nothing else).
//
// Per channel the bound is in fetches (each at most FetchPartitionBytes on
// the wire, or one batch), for the whole read in record bytes as decoded:
// a well-compressed topic may fetch many more records than its fetch size
// suggests, and memory holds them decompressed.

// Bounds of what a read buffers.
const (
	bufferedFetches  = 2        // per channel
	maxBufferedBytes = 32 << 20 // for the whole read
)

// chunk is a run of items of one channel, read from one fetch.
type chunk struct {
	items []capture.Item
	hdrs  []clock.Header // the items' headers
	bytes int            // the records' encoded size
}

// buffers is the reader's buffered state.
type buffers struct {
	// order is the channel of each buffered chunk in the order read: the
	// order next yields items in. A read taken channel by channel
	// (nextOf) keeps none.
	order     []int
	byChannel bool
	// keep says items must stay valid after the next call (a Follower's
	// are handed to other goroutines): chunks are then never reused.
	keep  bool
	free  []*chunk
	cur   *chunk // the chunk being filled
	ready int    // items buffered
	bytes int    // record bytes buffered
}

// begin starts filling a chunk.
func (b *buffers) begin() {
	if n := len(b.free); n > 0 {
		b.cur, b.free = b.free[n-1], b.free[:n-1]
		return
	}
	b.cur = new(chunk)
}

// addPosition adds a position item at p.
func (b *buffers) addPosition(ch *rchan, p int64) {
	b.cur.items = append(b.cur.items, capture.Item{Kind: capture.KindPosition, Topic: ch.Topic, TopicID: ch.TopicID, Partition: ch.Partition, Offset: p})
}

// commit hands the chunk being filled to ch's buffer, unless it is empty.
func (b *buffers) commit(ch *rchan) {
	c := b.cur
	b.cur = nil
	if len(c.items) == 0 {
		b.free = append(b.free, c)
		return
	}
	ch.buf = append(ch.buf, c)
	ch.bufBytes += c.bytes
	b.bytes += c.bytes
	b.ready += len(c.items)
	if !b.byChannel {
		b.order = append(b.order, ch.index)
	}
}

// pop returns ch's next buffered item, or nil when ch's oldest chunk is
// used up: that chunk is then released (its last item, returned by the
// call before, is no longer in use).
func (b *buffers) pop(ch *rchan) *capture.Item {
	c := ch.buf[0]
	if ch.head == len(c.items) {
		ch.buf[0] = nil
		ch.buf, ch.head = ch.buf[1:], 0
		ch.bufBytes -= c.bytes
		b.bytes -= c.bytes
		b.release(c)
		return nil
	}
	ch.head++
	b.ready--
	return &c.items[ch.head-1]
}

// release recycles a used-up chunk, clearing what it points to so that
// fetched data is not kept alive by it.
func (b *buffers) release(c *chunk) {
	if b.keep {
		return
	}
	clear(c.items)
	clear(c.hdrs)
	c.items, c.hdrs, c.bytes = c.items[:0], c.hdrs[:0], 0
	if len(b.free) < 64 {
		b.free = append(b.free, c)
	}
}

// eligible returns the channels of active with room for another fetch.
func (rd *reader) eligible(active []*rchan) []*rchan {
	var out []*rchan
	for _, ch := range active {
		if len(ch.buf) == 0 || (len(ch.buf) < bufferedFetches && rd.bytes < maxBufferedBytes) {
			out = append(out, ch)
		}
	}
	return out
}

// emit adds a record, preceded by a position item when offsets between the
// last item and the record carried no record.
func (rd *reader) emit(ch *rchan, r *record) {
	if r.Offset > ch.emitted {
		rd.addPosition(ch, r.Offset)
	}
	c := rd.cur
	var hs []clock.Header
	if len(r.Headers) > 0 {
		start := len(c.hdrs)
		c.hdrs = append(c.hdrs, r.Headers...)
		hs = c.hdrs[start:len(c.hdrs):len(c.hdrs)]
	}
	c.items = append(c.items, capture.Item{
		Kind:         capture.KindRecord,
		Topic:        ch.Topic,
		TopicID:      ch.TopicID,
		Partition:    ch.Partition,
		Offset:       r.Offset,
		Timestamp:    r.Timestamp,
		HasTimestamp: r.Timestamp >= 0,
		Headers:      hs,
		Key:          r.Key,
		Value:        r.Value,
	})
	c.bytes += r.Size
	ch.emitted = r.Offset + 1
	ch.LastOffset = r.Offset
	ch.Records++
}

// decodeBelow adds the records of a fetched partition below end to the
// chunk being filled, and returns the position after them.
func (rd *reader) decodeBelow(ch *rchan, p fetched, end int64) (int64, error) {
	return rd.decodeWhile(ch, p, func(r *record) bool { return r.Offset < end })
}

// decodeAll adds every record of a fetched partition to the chunk being
// filled, and returns the position after them: a followed channel has no end.
func (rd *reader) decodeAll(ch *rchan, p fetched) (int64, error) {
	return rd.decodeWhile(ch, p, func(*record) bool { return true })
}

// decodeWhile adds the records of a fetched partition to the chunk being
// filled for as long as keep accepts them, and returns the position after
// the last one added.
func (rd *reader) decodeWhile(ch *rchan, p fetched, keep func(*record) bool) (int64, error) {
	if p.rp == nil {
		return p.next, nil
	}
	return rd.dec.each(p.rp, ch.Topic, ch.Position, func(r *record) bool {
		if !keep(r) {
			return false
		}
		rd.emit(ch, r)
		return true
	})
}

// settle adds a position item at ch's position when it moved past offsets
// not yet told to the caller.
func (rd *reader) settle(ch *rchan) {
	if ch.Position > ch.emitted {
		rd.addPosition(ch, ch.Position)
		ch.emitted = ch.Position
	}
}

// next returns the next buffered item in the order read, fetching for
// sink's active channels until there is one; io.EOF when none is active.
// The item is valid until the next call (for ever when b.keep).
func (rd *reader) next(ctx context.Context, sink partSink) (*capture.Item, error) {
	for {
		for len(rd.order) > 0 {
			if it := rd.pop(rd.chans[rd.order[0]]); it != nil {
				return it, nil
			}
			rd.order = rd.order[1:]
		}
		if rd.err != nil {
			return nil, rd.err
		}
		if err := rd.fill(ctx, sink, func() bool { return len(rd.order) > 0 }); err != nil {
			return nil, err
		}
	}
}

// nextOf returns the next item of channel i, fetching until there is one;
// io.EOF once the channel has ended (ended reports that). The item is valid
// until the next call for the same channel.
func (rd *reader) nextOf(ctx context.Context, sink partSink, i int, ended func(int) bool) (*capture.Item, error) {
	if !rd.byChannel {
		rd.byChannel, rd.order = true, nil
	}
	ch := rd.chans[i]
	for {
		for len(ch.buf) > 0 {
			if it := rd.pop(ch); it != nil {
				return it, nil
			}
		}
		if rd.err != nil {
			return nil, rd.err
		}
		if ended(i) {
			return nil, io.EOF
		}
		if err := rd.fill(ctx, sink, func() bool { return len(ch.buf) > 0 }); err != nil {
			return nil, err
		}
	}
}

// fill fetches until have reports data, the read fails (latched in rd.err)
// or no channel is active (io.EOF). A round in flight is landed first; after
// each round the next one starts at once (prefetch) when the read is
// healthy, so it is in flight while the caller takes what was read.
func (rd *reader) fill(ctx context.Context, sink partSink, have func() bool) error {
	for !have() && rd.err == nil {
		f := rd.flight
		rd.flight = nil
		if f == nil {
			active := sink.active()
			if len(active) == 0 {
				return io.EOF
			}
			var err error
			if f, err = rd.launch(ctx, active); err != nil {
				return rd.latch(ctx, err)
			}
			if f == nil {
				continue
			}
		}
		if err := rd.land(ctx, f, sink); err != nil {
			return rd.latch(ctx, err)
		}
		rd.prefetch(ctx, sink.active())
	}
	return nil
}

// latch keeps a failure for when the buffers are drained; an ended ctx is
// returned at once instead.
func (rd *reader) latch(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rd.err = err
	return nil
}
