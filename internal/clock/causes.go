package clock

import (
	"encoding/binary"
	"math"
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

// DecodeOption changes how a value is decoded.
type DecodeOption func(*decodeConfig)

type decodeConfig struct{ maxSize int }

// MaxSize sets the metadata budget in bytes (default DefaultMaxSize). A value
// longer than n is refused with CodeTooLarge. n ≤ 0 means no budget.
func MaxSize(n int) DecodeOption { return func(c *decodeConfig) { c.maxSize = n } }

func newDecodeConfig(opts []DecodeOption) decodeConfig {
	cfg := decodeConfig{maxSize: DefaultMaxSize}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// Decode reads a parsley.causes v1 value. A nil value is CodeNullValue; any
// other violation of SPEC §2 is a *DecodeError with the first rule broken in
// reading order. Decode allocates once, exactly the entries found, however
// large the counts in the value claim to be.
func Decode(b []byte, opts ...DecodeOption) (Clock, error) {
	if b == nil {
		return Clock{}, fail(CodeNullValue, 0, "header value is null")
	}
	cfg := newDecodeConfig(opts)
	if cfg.maxSize > 0 && len(b) > cfg.maxSize {
		return Clock{}, fail(CodeTooLarge, 0, "%d bytes exceed the budget of %d", len(b), cfg.maxSize)
	}
	// First pass: validate everything and count the pairs, so that the
	// one allocation is sized by what is there, not by what is claimed.
	n, err := scanCauses(b, nil)
	if err != nil {
		return Clock{}, err
	}
	if n == 0 {
		return Clock{}, nil
	}
	entries := make([]Entry, 0, n)
	_, _ = scanCauses(b, &entries)
	return Clock{entries: entries}, nil
}

// scanCauses validates b and returns the number of pairs. When out is not
// nil it also appends the pairs to *out.
func scanCauses(b []byte, out *[]Entry) (int, error) {
	r := reader{b: b}
	if len(b) == 0 {
		return 0, fail(CodeTruncated, 0, "empty value")
	}
	if v := b[0]; v != causesVersion {
		return 0, fail(CodeUnknownVersion, 0, "version %d, want 1", v)
	}
	r.off = 1
	topics, err := r.varint("topic count")
	if err != nil {
		return 0, err
	}
	pairs := 0
	var prev TopicID
	for g := uint32(0); g < topics; g++ {
		at := r.off
		if r.remaining() < 16 {
			return 0, fail(CodeTruncated, r.off, "group %d of %d: topic ID needs 16 bytes, %d left", g+1, topics, r.remaining())
		}
		var id TopicID
		copy(id[:], b[r.off:r.off+16])
		r.off += 16
		if id.IsZero() {
			return 0, fail(CodeZeroTopicID, at, "group %d: topic ID is all zeros", g+1)
		}
		if g > 0 && string(id[:]) <= string(prev[:]) {
			return 0, fail(CodeTopicsNotAscending, at, "group %d: topic %s does not follow %s", g+1, id, prev)
		}
		prev = id
		parts, err := r.varint("partition count")
		if err != nil {
			return 0, err
		}
		if parts == 0 {
			return 0, fail(CodeZeroPartitions, r.off-1, "group %d (%s) has no partitions", g+1, id)
		}
		last := int64(-1)
		for p := uint32(0); p < parts; p++ {
			at := r.off
			part, err := r.varint("partition")
			if err != nil {
				return 0, err
			}
			if int64(part) <= last {
				return 0, fail(CodePartitionsNotAscending, at, "topic %s: partition %d does not follow %d", id, part, last)
			}
			last = int64(part)
			at = r.off
			if r.remaining() < 8 {
				return 0, fail(CodeTruncated, r.off, "topic %s partition %d: position needs 8 bytes, %d left", id, part, r.remaining())
			}
			u := binary.BigEndian.Uint64(b[r.off:])
			r.off += 8
			switch {
			case u > math.MaxInt64:
				return 0, fail(CodeNegativePosition, at, "topic %s partition %d: position %d", id, part, int64(u))
			case u == math.MaxInt64:
				return 0, fail(CodeReservedPosition, at, "topic %s partition %d: position 2^63-1 is reserved", id, part)
			}
			if out != nil {
				*out = append(*out, Entry{Channel{id, int32(part)}, int64(u)})
			}
			pairs++
		}
	}
	if r.remaining() > 0 {
		return 0, fail(CodeTrailingBytes, r.off, "%d bytes after the last group", r.remaining())
	}
	return pairs, nil
}

type reader struct {
	b   []byte
	off int
}

func (r *reader) remaining() int { return len(r.b) - r.off }

// varint reads an unsigned LEB128 value restricted to 0…2^31−1 in its
// minimal spelling.
func (r *reader) varint(what string) (uint32, error) {
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
