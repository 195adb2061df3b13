package kafka

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
)

// This file decodes the record batches of a fetch response (Kafka's v2
// format) in place: a record's key, value and header values are slices of
// the fetched (or decompressed) bytes and header keys are interned, so
// reading a range allocates per batch, never per record. What it keeps is
// what kgo.ProcessFetchPartition keeps at read_committed — records of
// committed transactions and of no transaction, no control records — and it
// moves the position as that function does; the tests hold the two side
// by side. Message sets older than v2 (magic 0 and 1) go through kgo.

// batchRecord is one decoded record. Its slices point into the fetched data and
// its Headers into the decoder's scratch space: both are valid only during
// the callback that receives it.
type batchRecord struct {
	Offset    int64
	Timestamp int64 // milliseconds
	Key       []byte
	Value     []byte
	Headers   []clock.Header
	// Size is the record's encoded size, what buffers are bounded by.
	Size int
	// buf is the bytes of the record's batch, which Key, Value and the
	// header values are slices of, with batch its sequence number; nil
	// when they lie in no one buffer (a legacy message set).
	buf   []byte
	batch uint64
}

// batchDecoder decodes fetched partitions. It is used by one goroutine at
// a time and keeps its scratch space between calls.
type batchDecoder struct {
	decompressor kgo.Decompressor
	aborts       []abortedTxn
	headers      []clock.Header
	keys         []string // interned header keys
	rec          batchRecord
	batches      uint64 // batches decoded
}

// abortedTxn is an aborted transaction of a fetched partition; done once
// its abort marker was read.
type abortedTxn struct {
	producer, first int64
	done            bool
}

// maxInternedKeys bounds the header keys kept for reuse: pipelines use a
// handful, and a topic with arbitrary keys must not grow the list forever.
const maxInternedKeys = 64

// Offsets into a v2 record batch header.
const (
	batchMagicAt      = 16
	batchCRCAt        = 17
	batchAttrsAt      = 21
	batchLastDeltaAt  = 23
	batchFirstTimeAt  = 27
	batchMaxTimeAt    = 35
	batchProducerAt   = 43
	batchNumRecordsAt = 57
	batchHeaderSize   = 61
)

// Batch attribute bits.
const (
	attrCodec         = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt marks a batch that does not decode.
var errCorrupt = errors.New("corrupt record batch")

// each calls fn for each record of rp at or after offset that a
// read_committed consumer receives, in offset order, until fn returns
// false. It returns the position after what it read — past aborted
// records, control records and trailing offsets of a compacted batch —
// or, when fn stopped it, the offset of the record fn refused. err says
// why it stopped early (a corrupt batch, a failed decompression); records
// before the failure are passed on all the same.
func (d *batchDecoder) each(rp *kmsg.FetchResponseTopicPartition, topic string, offset int64, fn func(*batchRecord) bool) (next int64, err error) {
	in := rp.RecordBatches
	if len(in) > batchMagicAt && in[batchMagicAt] != 2 {
		return d.legacy(rp, topic, offset, fn)
	}
	d.setAborts(rp.AbortedTransactions)
	next = offset
	yielded := false
	for len(in) > batchMagicAt {
		base := int64(binary.BigEndian.Uint64(in))
		length := int64(int32(binary.BigEndian.Uint32(in[8:]))) + 12
		if length < 12 || int64(len(in)) < length {
			break // the response ends inside this batch: read it next time
		}
		if in[batchMagicAt] != 2 {
			break // an older message set: the next fetch starts at it and takes kgo's path
		}
		b := in[:length]
		in = in[length:]
		if len(b) < batchHeaderSize {
			return next, fmt.Errorf("%w at offset %d: %d bytes", errCorrupt, base, len(b))
		}
		if crc32.Checksum(b[batchAttrsAt:], castagnoli) != binary.BigEndian.Uint32(b[batchCRCAt:]) {
			return next, fmt.Errorf("%w at offset %d: CRC mismatch", errCorrupt, base)
		}
		attrs := binary.BigEndian.Uint16(b[batchAttrsAt:])
		last := base + int64(int32(binary.BigEndian.Uint32(b[batchLastDeltaAt:])))
		if last < next {
			continue // wholly below the position
		}
		count := int(int32(binary.BigEndian.Uint32(b[batchNumRecordsAt:])))
		if count < 0 {
			return next, fmt.Errorf("%w at offset %d: negative record count", errCorrupt, base)
		}
		raw := b[batchHeaderSize:]
		if codec := attrs & attrCodec; codec != 0 {
			raw, err = d.decompressor.Decompress(raw, kgo.CompressionCodecType(codec))
			if err != nil {
				if yielded {
					return next, nil // a batch cut short at the end of the response
				}
				return next, fmt.Errorf("decompressing the batch at offset %d: %w", base, err)
			}
		}
		firstTime := int64(binary.BigEndian.Uint64(b[batchFirstTimeAt:]))
		maxTime := int64(binary.BigEndian.Uint64(b[batchMaxTimeAt:]))
		producer := int64(binary.BigEndian.Uint64(b[batchProducerAt:]))
		control := attrs&attrControl != 0
		aborted := attrs&attrTransactional != 0 && d.aborted(producer, base)
		markerSeen := false

		d.batches++
		buf := raw
		decoded := 0
		for ; decoded < count; decoded++ {
			r, rest, ok := d.decode(raw)
			if !ok {
				break
			}
			raw = rest
			r.buf, r.batch = buf, d.batches
			off := base + r.Offset // decode leaves the offset delta
			if control {
				// A control batch holds one marker; an abort marker ends
				// its producer's aborted transaction.
				if aborted && !markerSeen && len(r.Key) >= 4 && r.Key[2] == 0 && r.Key[3] == 0 {
					d.endAbort(producer)
					markerSeen = true
				}
				next = max(next, off+1)
				continue
			}
			if off < next {
				continue // below the position, in a batch that straddles it
			}
			next = off + 1
			if aborted {
				continue
			}
			r.Offset = off
			if attrs&attrLogAppendTime != 0 {
				r.Timestamp = maxTime
			} else {
				r.Timestamp += firstTime // decode leaves the delta
			}
			yielded = true
			if !fn(r) {
				return off, nil
			}
		}
		if decoded < count {
			break // cut short: what follows is read next time
		}
		// A compacted batch keeps its last offset even when its last
		// record is gone: the position moves past the whole batch.
		next = max(next, last+1)
	}
	return next, nil
}

// decode reads one record from raw, returning it (with the offset and
// timestamp deltas in Offset and Timestamp) and the bytes after it.
func (d *batchDecoder) decode(raw []byte) (*batchRecord, []byte, bool) {
	length, n := binary.Varint(raw)
	if n <= 0 || length < 0 || int64(len(raw)-n) < length {
		return nil, nil, false
	}
	b := raw[n : n+int(length)]
	rest := raw[n+int(length):]
	if len(b) < 1 {
		return nil, nil, false
	}
	b = b[1:] // record attributes, unused
	var ok bool
	r := &d.rec
	*r = batchRecord{Size: n + int(length)}
	if r.Timestamp, b, ok = varint(b); !ok {
		return nil, nil, false
	}
	if r.Offset, b, ok = varint(b); !ok {
		return nil, nil, false
	}
	if r.Key, b, ok = bytesField(b); !ok {
		return nil, nil, false
	}
	if r.Value, b, ok = bytesField(b); !ok {
		return nil, nil, false
	}
	nh, b, ok := varint(b)
	if !ok || nh < 0 || nh > int64(len(b)) {
		return nil, nil, false
	}
	d.headers = d.headers[:0]
	for range nh {
		var k, v []byte
		if k, b, ok = bytesField(b); !ok {
			return nil, nil, false
		}
		if v, b, ok = bytesField(b); !ok {
			return nil, nil, false
		}
		d.headers = append(d.headers, clock.Header{Key: d.intern(k), Value: v})
	}
	r.Headers = d.headers
	return r, rest, true
}

func varint(b []byte) (int64, []byte, bool) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, false
	}
	return v, b[n:], true
}

// bytesField reads a varint-length byte field; length −1 is null (nil).
// An empty field is an empty, non-nil slice. The field keeps the capacity
// of b, so that the buffer knows where in its batch it lies (spanIn).
func bytesField(b []byte) ([]byte, []byte, bool) {
	n, b, ok := varint(b)
	switch {
	case !ok || n < -1 || n > int64(len(b)):
		return nil, nil, false
	case n == -1:
		return nil, b, true
	}
	return b[:n], b[n:], true
}

// intern returns k as a string, reusing the string of a key seen before.
func (d *batchDecoder) intern(k []byte) string {
	for _, s := range d.keys {
		if string(k) == s { // compared without allocating
			return s
		}
	}
	s := string(k)
	if len(d.keys) < maxInternedKeys {
		d.keys = append(d.keys, s)
	}
	return s
}

// setAborts takes a partition's aborted transactions, each producer's in
// order of first offset (brokers need not send them sorted).
func (d *batchDecoder) setAborts(txns []kmsg.FetchResponseTopicPartitionAbortedTransaction) {
	d.aborts = d.aborts[:0]
	for _, t := range txns {
		d.aborts = append(d.aborts, abortedTxn{producer: t.ProducerID, first: t.FirstOffset})
	}
	slices.SortFunc(d.aborts, func(a, b abortedTxn) int {
		return cmp.Or(cmp.Compare(a.producer, b.producer), cmp.Compare(a.first, b.first))
	})
}

// aborted reports whether a transactional batch of producer starting at
// first belongs to an aborted transaction: its producer's earliest
// aborted transaction not yet ended began at or before it.
func (d *batchDecoder) aborted(producer, first int64) bool {
	for i := range d.aborts {
		a := &d.aborts[i]
		if a.producer == producer && !a.done {
			return first >= a.first
		}
	}
	return false
}

// endAbort ends producer's earliest aborted transaction.
func (d *batchDecoder) endAbort(producer int64) {
	for i := range d.aborts {
		if a := &d.aborts[i]; a.producer == producer && !a.done {
			a.done = true
			return
		}
	}
}

// legacy reads a partition of pre-v2 message sets through kgo.
func (d *batchDecoder) legacy(rp *kmsg.FetchResponseTopicPartition, topic string, offset int64, fn func(*batchRecord) bool) (int64, error) {
	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset:         offset,
		IsolationLevel: kgo.ReadCommitted(),
		Topic:          topic,
		Partition:      rp.Partition,
	}, rp, d.decompressor, nil)
	for _, kr := range fp.Records {
		d.headers = d.headers[:0]
		for _, h := range kr.Headers {
			d.headers = append(d.headers, clock.Header{Key: h.Key, Value: h.Value})
		}
		r := &d.rec
		*r = batchRecord{Offset: kr.Offset, Timestamp: kr.Timestamp.UnixMilli(), Key: kr.Key, Value: kr.Value, Headers: d.headers,
			Size: len(kr.Key) + len(kr.Value)}
		if !fn(r) {
			return kr.Offset, nil
		}
	}
	return next, fp.Err
}
