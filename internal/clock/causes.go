package clock

import (
	"encoding/binary"
	"math"
	"slices"
)

// Header keys Parsley writes.
const (
	HeaderCauses = "parsley.causes" // current format, SPEC §2
	HeaderLegacy = "parsley-clock"  // older releases, SPEC §2.1
)

// DefaultMaxSize is the default metadata budget: a longer value is refused
// as too-large before any of it is read.
const DefaultMaxSize = 256 << 10

const causesVersion = 0x01

// DecodeOption changes how a value is decoded. Options are plain values,
// not functions: applying them costs no allocation on the decode path.
type DecodeOption struct {
	maxSize int // when set: the budget; ≤ 0 means none
	set     bool
}

type decodeConfig struct{ maxSize int }

// MaxSize sets the metadata budget in bytes (default DefaultMaxSize). A value
// longer than n is refused with CodeTooLarge. n ≤ 0 means no budget.
func MaxSize(n int) DecodeOption { return DecodeOption{maxSize: n, set: true} }

func newDecodeConfig(opts []DecodeOption) decodeConfig {
	cfg := decodeConfig{maxSize: DefaultMaxSize}
	for _, o := range opts {
		if o.set {
			cfg.maxSize = o.maxSize
		}
	}
	return cfg
}

// Decode reads a parsley.causes v1 value. A nil value is CodeNullValue; any
// other violation of SPEC §2 is a *DecodeError with the first rule broken in
// reading order. Decode allocates once: the entries it returns, exactly for
// short values, or for long ones a buffer sized by the bytes present (a pair
// takes at least 9 of them) — never by what the counts claim.
func Decode(b []byte, opts ...DecodeOption) (Clock, error) {
	if b == nil {
		return Clock{}, fail(CodeNullValue, 0, "header value is null")
	}
	cfg := newDecodeConfig(opts)
	if cfg.maxSize > 0 && len(b) > cfg.maxSize {
		return Clock{}, fail(CodeTooLarge, 0, "%d bytes exceed the budget of %d", len(b), cfg.maxSize)
	}
	// Decode into a buffer on the stack, then keep an exact copy: one
	// allocation, no larger than the clock, for the clocks most records
	// carry. Longer clocks spill to a buffer sized by the bytes present.
	if len(b)/minPairSize > stackEntries {
		es, err := decodeCauses(nil, b)
		if err != nil || len(es) == 0 {
			return Clock{}, err
		}
		return Clock{entries: es}, nil
	}
	var stack [stackEntries]Entry
	es, err := decodeCauses(stack[:0], b)
	if err != nil || len(es) == 0 {
		return Clock{}, err
	}
	return Clock{entries: slices.Clone(es)}, nil
}

// stackEntries is the most entries Decode collects on the stack before
// keeping an exact copy.
const stackEntries = 32

// AppendDecode is Decode for hot loops: it appends the entries of value b
// to dst, in wire order (which is channel order), and returns the extended
// slice; with a dst reused across calls it does not allocate. A Clock made
// from the result with FromSorted must not outlive the next reuse of dst.
// The metadata budget is the caller's to check.
func AppendDecode(dst []Entry, b []byte) ([]Entry, error) {
	if b == nil {
		return dst, fail(CodeNullValue, 0, "header value is null")
	}
	es, err := decodeCauses(dst, b)
	if err != nil {
		return dst, err
	}
	return es, nil
}

// FromSorted wraps entries that are already valid, sorted by channel and
// free of duplicates — as AppendDecode returns them — in a Clock without
// copying. The Clock aliases es.
func FromSorted(es []Entry) Clock {
	if len(es) == 0 {
		return Clock{}
	}
	return Clock{entries: es}
}

// minPairSize is the fewest bytes a pair takes: a one-byte partition varint
// and an 8-byte position.
const minPairSize = 1 + 8

// decodeCauses appends the pairs of b to out. A nil out is allocated once,
// with room for as many pairs as the bytes left could hold.
func decodeCauses(out []Entry, b []byte) ([]Entry, error) {
	if len(b) == 0 {
		return nil, fail(CodeTruncated, 0, "empty value")
	}
	r := reader{b: b}
	if v := b[0]; v != causesVersion {
		return nil, fail(CodeUnknownVersion, 0, "version %d, want 1", v)
	}
	r.off = 1
	topics, err := r.varint("topic count")
	if err != nil {
		return nil, err
	}
	if topics > 0 {
		// Every pair takes at least minPairSize bytes, so this bounds the
		// pairs to come, whatever the counts claim; appends never regrow.
		if bound := r.remaining() / minPairSize; out == nil {
			out = make([]Entry, 0, bound)
		} else {
			out = slices.Grow(out, bound)
		}
	}
	var prev TopicID
	for g := uint32(0); g < topics; g++ {
		at := r.off
		if r.remaining() < 16 {
			return nil, fail(CodeTruncated, r.off, "group %d of %d: topic ID needs 16 bytes, %d left", g+1, topics, r.remaining())
		}
		var id TopicID
		copy(id[:], b[r.off:r.off+16])
		r.off += 16
		if id.IsZero() {
			return nil, fail(CodeZeroTopicID, at, "group %d: topic ID is all zeros", g+1)
		}
		if g > 0 && string(id[:]) <= string(prev[:]) {
			return nil, fail(CodeTopicsNotAscending, at, "group %d: topic %s does not follow %s", g+1, id, prev)
		}
		prev = id
		parts, err := r.varint("partition count")
		if err != nil {
			return nil, err
		}
		if parts == 0 {
			return nil, fail(CodeZeroPartitions, r.off-1, "group %d (%s) has no partitions", g+1, id)
		}
		last := int64(-1)
		for p := uint32(0); p < parts; p++ {
			at := r.off
			part, err := r.varint("partition")
			if err != nil {
				return nil, err
			}
			if int64(part) <= last {
				return nil, fail(CodePartitionsNotAscending, at, "topic %s: partition %d does not follow %d", id, part, last)
			}
			last = int64(part)
			at = r.off
			if r.remaining() < 8 {
				return nil, fail(CodeTruncated, r.off, "topic %s partition %d: position needs 8 bytes, %d left", id, part, r.remaining())
			}
			u := binary.BigEndian.Uint64(b[r.off:])
			r.off += 8
			switch {
			case u > math.MaxInt64:
				return nil, fail(CodeNegativePosition, at, "topic %s partition %d: position %d", id, part, int64(u))
			case u == math.MaxInt64:
				return nil, fail(CodeReservedPosition, at, "topic %s partition %d: position 2^63-1 is reserved", id, part)
			}
			// Field by field: a composite literal here costs an extra
			// 32-byte copy per pair.
			out = out[:len(out)+1]
			e := &out[len(out)-1]
			e.Channel.Topic = id
			e.Channel.Partition = int32(part)
			e.Position = int64(u)
		}
	}
	if r.remaining() > 0 {
		return nil, fail(CodeTrailingBytes, r.off, "%d bytes after the last group", r.remaining())
	}
	return out, nil
}

type reader struct {
	b   []byte
	off int
}

func (r *reader) remaining() int { return len(r.b) - r.off }

// varint reads an unsigned LEB128 value restricted to 0…2^31−1 in its
// minimal spelling.
func (r *reader) varint(what string) (uint32, error) {
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		// One byte: by far the most common spelling, kept inlinable.
		r.off++
		return uint32(r.b[r.off-1]), nil
	}
	return r.varintLong(what)
}

func (r *reader) varintLong(what string) (uint32, error) {
	start := r.off
	var v uint32
	for i := 0; ; i++ {
		if r.off >= len(r.b) {
			return 0, fail(CodeTruncated, r.off, "%s: value ends inside a varint", what)
		}
		c := r.b[r.off]
		r.off++
		if i == 4 && c&0xf8 != 0 {
			return 0, fail(CodeVarintOverflow, start, "%s: varint exceeds 2^31-1", what)
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i > 0 && c == 0 {
				return 0, fail(CodeNonMinimalVarint, start, "%s: varint of %d bytes ends in 0x00", what, i+1)
			}
			return v, nil
		}
	}
}

// Encode returns the parsley.causes v1 encoding of c. Every clock has exactly
// one encoding, so Encode(Decode(v)) == v for every accepted v.
func Encode(c Clock) []byte { return AppendEncode(nil, c) }

// AppendEncode appends the encoding of c to dst.
func AppendEncode(dst []byte, c Clock) []byte {
	es := c.entries
	groups := 0
	for i := range es {
		if i == 0 || es[i].Channel.Topic != es[i-1].Channel.Topic {
			groups++
		}
	}
	dst = append(dst, causesVersion)
	dst = binary.AppendUvarint(dst, uint64(groups))
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].Channel.Topic == es[i].Channel.Topic {
			j++
		}
		dst = append(dst, es[i].Channel.Topic[:]...)
		dst = binary.AppendUvarint(dst, uint64(j-i))
		for _, e := range es[i:j] {
			dst = binary.AppendUvarint(dst, uint64(e.Channel.Partition))
			dst = binary.BigEndian.AppendUint64(dst, uint64(e.Position))
		}
		i = j
	}
	return dst
}
