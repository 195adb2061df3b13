package parsley

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/causalctl/causalctl/internal/clock"
)

// HeldRecord is the value of a held key: the record a task holds, as
// Parsley stored it (SPEC §6, held record v1).
type HeldRecord struct {
	// Timestamp is the record's own Kafka timestamp in milliseconds since
	// the epoch: an age from it is the time since the record was written,
	// not since it was held.
	Timestamp int64
	// Key and Value are the record's; nil is null.
	Key, Value []byte
	// Headers in record order; a nil Value is a null header value.
	Headers []clock.Header
	// Causes are the record's decoded clock, in stored order (sorted by
	// channel as Parsley writes them; kept as stored so that encoding gives
	// back the same bytes).
	Causes []clock.Entry
}

// KeySize is the key's length; −1 for a null key.
func (r *HeldRecord) KeySize() int { return sizeOf(r.Key) }

// ValueSize is the value's length; −1 for a null value.
func (r *HeldRecord) ValueSize() int { return sizeOf(r.Value) }

func sizeOf(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// Clock returns the causes as a clock, sharing them when they are in clock
// order (clock.NewShared): a record's causes are never modified once
// parsed.
func (r *HeldRecord) Clock() (clock.Clock, error) { return clock.NewShared(r.Causes) }

const (
	flagKeyNull   = 0x01
	flagValueNull = 0x02
	causeSize     = 28 // topic UUID, int32 partition, int64 position
)

// errShort is what every length or count that runs past the bytes left is
// reported as, with the field named by the caller.
var errShort = errors.New("runs past the end")

// reader walks a value, refusing any read past its end.
type reader struct{ b []byte }

func (r *reader) n(k int) ([]byte, bool) {
	if k < 0 || k > len(r.b) {
		return nil, false
	}
	s := r.b[:k:k]
	r.b = r.b[k:]
	return s, true
}

func (r *reader) u8() (byte, bool) {
	s, ok := r.n(1)
	if !ok {
		return 0, false
	}
	return s[0], true
}

func (r *reader) i32() (int32, bool) {
	s, ok := r.n(4)
	if !ok {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(s)), true
}

func (r *reader) i64() (int64, bool) {
	s, ok := r.n(8)
	if !ok {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(s)), true
}

// bytesField reads an int32 length and that many bytes; −1 is null when
// nullable. The slice aliases the input.
func (r *reader) bytesField(what string, nullable bool) ([]byte, error) {
	n, ok := r.i32()
	if !ok {
		return nil, fmt.Errorf("%s length %w", what, errShort)
	}
	if n == -1 && nullable {
		return nil, nil
	}
	if n < 0 {
		return nil, fmt.Errorf("negative %s length %d", what, n)
	}
	b, ok := r.n(int(n))
	if !ok {
		return nil, fmt.Errorf("%s length %d %w (%d bytes left)", what, n, errShort, len(r.b))
	}
	return b, nil
}

// ParseHeldRecord decodes a held-record value. The slices of the result
// alias b; Clone it to keep it past b's reuse.
func ParseHeldRecord(b []byte) (HeldRecord, error) { return parseHeldRecord(b, nil) }

// causeBlock is the most causes parseHeldRecord allocates at once when it
// is given a block to carve from: the blocks double from firstCauseBlock,
// so a store of a few held records (the common case: the exporter decodes
// thousands of them) does not pay for a big one.
const (
	firstCauseBlock = 16
	causeBlock      = 1024
)

// parseHeldRecord is ParseHeldRecord; with block non-nil, the causes are
// carved from *block (a new one allocated when it has no room), so that a
// store's worth of records costs a few allocations, not one each.
func parseHeldRecord(b []byte, block *[]clock.Entry) (HeldRecord, error) {
	var rec HeldRecord
	r := reader{b}
	v, ok := r.u8()
	if !ok {
		return rec, fmt.Errorf("empty held record")
	}
	if v != StoreVersion {
		return rec, fmt.Errorf("unknown held-record version %d", v)
	}
	if rec.Timestamp, ok = r.i64(); !ok {
		return rec, fmt.Errorf("timestamp %w", errShort)
	}
	flags, ok := r.u8()
	if !ok {
		return rec, fmt.Errorf("flags %w", errShort)
	}
	if flags&^(flagKeyNull|flagValueNull) != 0 {
		return rec, fmt.Errorf("unknown flags 0x%02x", flags)
	}
	var err error
	if flags&flagKeyNull == 0 {
		if rec.Key, err = r.bytesField("key", false); err != nil {
			return rec, err
		}
		if rec.Key == nil {
			rec.Key = []byte{}
		}
	}
	if flags&flagValueNull == 0 {
		if rec.Value, err = r.bytesField("value", false); err != nil {
			return rec, err
		}
		if rec.Value == nil {
			rec.Value = []byte{}
		}
	}
	nh, ok := r.i32()
	if !ok {
		return rec, fmt.Errorf("header count %w", errShort)
	}
	// Each header takes at least 8 bytes: a count beyond what is left is
	// refused before anything is allocated for it.
	if nh < 0 || int64(nh)*8 > int64(len(r.b)) {
		return rec, fmt.Errorf("header count %d beyond the %d bytes left", nh, len(r.b))
	}
	if nh > 0 {
		rec.Headers = make([]clock.Header, nh)
	}
	for i := range rec.Headers {
		name, err := r.bytesField("header name", false)
		if err != nil {
			return rec, fmt.Errorf("header %d: %w", i, err)
		}
		val, err := r.bytesField("header value", true)
		if err != nil {
			return rec, fmt.Errorf("header %d: %w", i, err)
		}
		if val == nil {
			// A null value reads as nil; an empty one stays empty.
		} else if len(val) == 0 {
			val = []byte{}
		}
		rec.Headers[i] = clock.Header{Key: string(name), Value: val}
	}
	nc, ok := r.i32()
	if !ok {
		return rec, fmt.Errorf("cause count %w", errShort)
	}
	if nc < 0 || int64(nc)*causeSize > int64(len(r.b)) {
		return rec, fmt.Errorf("cause count %d beyond the %d bytes left", nc, len(r.b))
	}
	switch {
	case nc > 0 && block != nil:
		if cap(*block)-len(*block) < int(nc) {
			size := min(max(2*cap(*block), firstCauseBlock), causeBlock)
			*block = make([]clock.Entry, 0, max(size, int(nc)))
		}
		n := len(*block)
		*block = (*block)[:n+int(nc)]
		rec.Causes = (*block)[n : n+int(nc) : n+int(nc)]
	case nc > 0:
		rec.Causes = make([]clock.Entry, nc)
	}
	for i := range rec.Causes {
		s, _ := r.n(causeSize)
		ch, err := parseChannel(s[:channelSize])
		if err != nil {
			return rec, fmt.Errorf("cause %d: %w", i, err)
		}
		pos := int64(binary.BigEndian.Uint64(s[channelSize:]))
		if err := checkPosition(pos); err != nil {
			return rec, fmt.Errorf("cause %d: %w", i, err)
		}
		rec.Causes[i] = clock.Entry{Channel: ch, Position: pos}
	}
	if len(r.b) != 0 {
		return rec, fmt.Errorf("%d bytes after the last cause", len(r.b))
	}
	return rec, nil
}

// AppendHeldRecord appends the encoding of rec to dst.
func AppendHeldRecord(dst []byte, rec *HeldRecord) []byte {
	dst = append(dst, StoreVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(rec.Timestamp))
	var flags byte
	if rec.Key == nil {
		flags |= flagKeyNull
	}
	if rec.Value == nil {
		flags |= flagValueNull
	}
	dst = append(dst, flags)
	if rec.Key != nil {
		dst = appendBytes(dst, rec.Key)
	}
	if rec.Value != nil {
		dst = appendBytes(dst, rec.Value)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(rec.Headers)))
	for _, h := range rec.Headers {
		dst = appendBytes(dst, []byte(h.Key))
		if h.Value == nil {
			dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
		} else {
			dst = appendBytes(dst, h.Value)
		}
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(rec.Causes)))
	for _, e := range rec.Causes {
		dst = appendChannel(dst, e.Channel)
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.Position))
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// ParseVersion decodes the value of the version key.
func ParseVersion(b []byte) (int, error) {
	if len(b) != 1 {
		return 0, fmt.Errorf("version value of %d bytes, want 1", len(b))
	}
	if b[0] != StoreVersion {
		return int(b[0]), fmt.Errorf("unknown store version %d", b[0])
	}
	return int(b[0]), nil
}

// ParsePosition decodes the int64 value of a fed-up-to, frontier or
// delivered-past key. −1 (nothing known, from older releases) and
// DeletedPosition are accepted; other negatives are refused.
func ParsePosition(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("position value of %d bytes, want 8", len(b))
	}
	p := int64(binary.BigEndian.Uint64(b))
	if p < -1 {
		return p, fmt.Errorf("negative position %d", p)
	}
	return p, nil
}

// AppendPosition appends the encoding of a position value.
func AppendPosition(dst []byte, p int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(p))
}

// ParseNameValue decodes the value of a name key: the topic ID bound to
// the name (the channel's partition is not used).
func ParseNameValue(b []byte) (clock.TopicID, error) {
	if len(b) != channelSize {
		return clock.TopicID{}, fmt.Errorf("name value of %d bytes, want %d", len(b), channelSize)
	}
	var id clock.TopicID
	copy(id[:], b[:16])
	if id.IsZero() {
		return id, fmt.Errorf("zero topic UUID")
	}
	return id, nil
}

// AppendNameValue appends the value of a name key binding id.
func AppendNameValue(dst []byte, id clock.TopicID) []byte {
	return appendChannel(dst, clock.Channel{Topic: id})
}
