package kafka

import (
	"context"
	"io"
	"math"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// This file is what a read holds between the fetch and its caller: per
// channel, the items read and not yet taken, in chunks — one chunk a
// channel a fetch — whose storage is reused once taken, so that a steady
// read allocates nothing per record. A chunk holds records as spans of
// their batch's bytes, not as items: an item (160 bytes, with pointers
// the collector scans) is made of one as it is taken, into the channel's
// one item, or into the chunk's own items for a Follower, whose items
// stay valid. What is buffered is bounded by bytes:
// a channel with data buffered is fetched again only while it holds less
// than bufferedFetches fetches' worth and the whole read less than
// maxBufferedBytes; a channel with nothing buffered may always be fetched
// (a caller waiting for it could wait for nothing else).
//
// Per channel the bound is in fetches (each at most FetchPartitionBytes on
// the wire, or one batch), for the whole read in record bytes as decoded:
// a well-compressed topic may fetch many more records than its fetch size
// suggests, and memory holds them decompressed. 16 MiB keeps a fetch round
// in flight for every channel of a typical read while the caller takes the
// last one (docs/performance.md has the figures behind it).

// Bounds of what a read buffers.
const (
	bufferedFetches  = 2        // per channel
	maxBufferedBytes = 16 << 20 // for the whole read
)

// chunk is a run of items of one channel, read from one fetch. It holds
// its records compactly and without pointers — offsets, timestamps, and
// where their keys, values and header values lie in the batch bytes they
// were decoded from (bufs) — so that buffering a record costs little more
// than its bytes and the collector need not scan what a read buffers. An
// item is made of a record when it is taken.
type chunk struct {
	slots []slot
	hdrs  []hdr
	keys  []string      // the header keys of hdrs, each once
	bufs  [][]byte      // the batch bytes slots lie in
	slab  []byte        // copies of records that lie in no batch (legacy message sets)
	other []record.Item // log-facts items
	bytes int           // the records' encoded size
	batch uint64        // the batch the last of bufs is of

	// A Follower's items stay valid: they are made here once, on first
	// take, and the chunk is never reused.
	items []record.Item
	hvals []clock.Header
}

// slot is a buffered item: a record, a position, or (KindLogFacts) one of
// its chunk's other items.
type slot struct {
	offset, timestamp int64
	key, value        span
	hdr0, nhdr        int32 // its headers, hdrs[hdr0 : hdr0+nhdr]
	// idx is, for a record, its bytes: bufs[idx], or the slab when −1; for
	// log facts, its item in other.
	idx  int32
	kind record.Kind
	// other says the item is other[idx] (log facts, a position over a gap).
	other bool
}

// hdr is a buffered header: its key in the chunk's keys, its value's span.
type hdr struct {
	key   int32
	value span
}

// span is where a byte field lies in its buffer; n is −1 for null.
type span struct{ off, n int32 }

// spanIn returns where b lies in buf, when b is a slice of buf's backing
// array within buf (as the decoder's fields are of their batch's bytes).
func spanIn(buf, b []byte) (span, bool) {
	switch {
	case b == nil:
		return span{n: -1}, true
	case len(b) == 0:
		return span{}, true
	}
	off := cap(buf) - cap(b)
	if off < 0 || off+len(b) > len(buf) || &buf[off] != &b[0] {
		return span{}, false
	}
	return span{int32(off), int32(len(b))}, true
}

// slice returns the field sp of buf, its capacity its length.
func (sp span) slice(buf []byte) []byte {
	switch {
	case sp.n < 0:
		return nil
	case sp.n == 0:
		return []byte{} // empty, not null, even from an empty slab
	}
	end := sp.off + sp.n
	return buf[sp.off:end:end]
}

// addRecord adds r, whose slices are valid only during this call: they
// are kept as spans of r's batch bytes, or copied to the slab when they lie
// in no batch.
func (c *chunk) addRecord(r *batchRecord) {
	x := slot{kind: record.KindRecord, offset: r.Offset, timestamp: r.Timestamp, hdr0: int32(len(c.hdrs)), nhdr: int32(len(r.Headers))}
	if !c.addSpans(&x, r) {
		c.hdrs = c.hdrs[:x.hdr0]
		c.copySpans(&x, r)
	}
	c.slots = append(c.slots, x)
	c.bytes += r.Size
}

// addSpans sets x's spans in r's batch bytes; false when a field lies
// outside them.
func (c *chunk) addSpans(x *slot, r *batchRecord) bool {
	buf := r.buf
	if buf == nil || cap(buf) > math.MaxInt32 {
		return false
	}
	var ok bool
	if x.key, ok = spanIn(buf, r.Key); !ok {
		return false
	}
	if x.value, ok = spanIn(buf, r.Value); !ok {
		return false
	}
	for _, h := range r.Headers {
		v, ok := spanIn(buf, h.Value)
		if !ok {
			return false
		}
		c.hdrs = append(c.hdrs, hdr{key: c.key(h.Key), value: v})
	}
	if len(c.bufs) == 0 || c.batch != r.batch {
		c.bufs, c.batch = append(c.bufs, buf), r.batch
	}
	x.idx = int32(len(c.bufs) - 1)
	return true
}

// copySpans copies r's fields to the slab and sets x's spans there.
func (c *chunk) copySpans(x *slot, r *batchRecord) {
	add := func(b []byte) span {
		if b == nil {
			return span{n: -1}
		}
		sp := span{int32(len(c.slab)), int32(len(b))}
		c.slab = append(c.slab, b...)
		return sp
	}
	x.idx, x.key, x.value = -1, add(r.Key), add(r.Value)
	for _, h := range r.Headers {
		c.hdrs = append(c.hdrs, hdr{key: c.key(h.Key), value: add(h.Value)})
	}
}

// key returns the index of k in keys, adding it.
func (c *chunk) key(k string) int32 {
	for i, s := range c.keys {
		if s == k {
			return int32(i)
		}
	}
	c.keys = append(c.keys, k)
	return int32(len(c.keys) - 1)
}

// itemOf sets *it to the item of slots[i], of channel ch, appending its
// headers to hs; it returns hs.
func (c *chunk) itemOf(i int, ch *rchan, it *record.Item, hs []clock.Header) []clock.Header {
	x := &c.slots[i]
	switch {
	case x.other:
		*it = c.other[x.idx]
		return hs
	case x.kind == record.KindPosition:
		*it = record.Item{Kind: record.KindPosition, Topic: ch.Topic, TopicID: ch.TopicID, Partition: ch.Partition, Offset: x.offset}
		return hs
	}
	buf := c.slab
	if x.idx >= 0 {
		buf = c.bufs[x.idx]
	}
	var headers []clock.Header
	if x.nhdr > 0 {
		start := len(hs)
		for _, h := range c.hdrs[x.hdr0 : x.hdr0+x.nhdr] {
			hs = append(hs, clock.Header{Key: c.keys[h.key], Value: h.value.slice(buf)})
		}
		headers = hs[start:len(hs):len(hs)]
	}
	*it = record.Item{
		Kind:         record.KindRecord,
		Topic:        ch.Topic,
		TopicID:      ch.TopicID,
		Partition:    ch.Partition,
		Offset:       x.offset,
		Timestamp:    x.timestamp,
		HasTimestamp: x.timestamp >= 0,
		Headers:      headers,
		Key:          x.key.slice(buf),
		Value:        x.value.slice(buf),
	}
	return hs
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
	b.cur.slots = append(b.cur.slots, slot{kind: record.KindPosition, offset: p})
}

// addItem adds an item that is no record and no plain position: log
// facts, or a position over a gap.
func (b *buffers) addItem(it *record.Item) {
	c := b.cur
	c.slots = append(c.slots, slot{kind: it.Kind, idx: int32(len(c.other)), other: true})
	c.other = append(c.other, *it)
}

// commit hands the chunk being filled to ch's buffer, unless it is empty.
func (b *buffers) commit(ch *rchan) {
	c := b.cur
	b.cur = nil
	if len(c.slots) == 0 {
		b.free = append(b.free, c)
		return
	}
	ch.buf = append(ch.buf, c)
	ch.bufBytes += c.bytes
	b.bytes += c.bytes
	b.ready += len(c.slots)
	if !b.byChannel {
		b.order = append(b.order, ch.index)
	}
}

// pop returns ch's next buffered item, or nil when ch's oldest chunk is
// used up: that chunk is then released (its last item, returned by the
// call before, is no longer in use). The item is ch's, valid until the
// next pop of ch, or for ever when b.keep.
func (b *buffers) pop(ch *rchan) *record.Item {
	c := ch.buf[0]
	if ch.head == len(c.slots) {
		ch.buf[0] = nil
		ch.buf, ch.head = ch.buf[1:], 0
		ch.bufBytes -= c.bytes
		b.bytes -= c.bytes
		b.release(c)
		return nil
	}
	i := ch.head
	ch.head++
	b.ready--
	if b.keep {
		if c.items == nil {
			c.items, c.hvals = make([]record.Item, len(c.slots)), make([]clock.Header, 0, len(c.hdrs))
		}
		c.hvals = c.itemOf(i, ch, &c.items[i], c.hvals)
		return &c.items[i]
	}
	ch.hdrs = c.itemOf(i, ch, &ch.item, ch.hdrs[:0])
	return &ch.item
}

// release recycles a used-up chunk, clearing what it points to so that
// fetched data is not kept alive by it.
func (b *buffers) release(c *chunk) {
	if b.keep {
		return
	}
	clear(c.keys)
	clear(c.bufs)
	clear(c.other)
	c.slots, c.hdrs, c.keys, c.bufs, c.slab, c.other = c.slots[:0], c.hdrs[:0], c.keys[:0], c.bufs[:0], c.slab[:0], c.other[:0]
	c.bytes, c.batch = 0, 0
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
func (rd *reader) emit(ch *rchan, r *batchRecord) {
	if r.Offset > ch.emitted {
		rd.addPosition(ch, r.Offset)
	}
	rd.cur.addRecord(r)
	ch.emitted = r.Offset + 1
	ch.LastOffset = r.Offset
	ch.Records++
}

// decodeBelow adds the records of a fetched partition below end to the
// chunk being filled, and returns the position after them.
func (rd *reader) decodeBelow(ch *rchan, p fetched, end int64) (int64, error) {
	return rd.decodeWhile(ch, p, func(r *batchRecord) bool { return r.Offset < end })
}

// decodeAll adds every record of a fetched partition to the chunk being
// filled, and returns the position after them: a followed channel has no end.
func (rd *reader) decodeAll(ch *rchan, p fetched) (int64, error) {
	return rd.decodeWhile(ch, p, func(*batchRecord) bool { return true })
}

// decodeWhile adds the records of a fetched partition to the chunk being
// filled for as long as keep accepts them, and returns the position after
// the last one added.
func (rd *reader) decodeWhile(ch *rchan, p fetched, keep func(*batchRecord) bool) (int64, error) {
	if p.rp == nil {
		return p.next, nil
	}
	return rd.dec.each(p.rp, ch.Topic, ch.Position, func(r *batchRecord) bool {
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
func (rd *reader) next(ctx context.Context, sink partSink) (*record.Item, error) {
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
func (rd *reader) nextOf(ctx context.Context, sink partSink, i int, ended func(int) bool) (*record.Item, error) {
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
