package clock

import (
	"encoding/binary"
	"math"
)

const (
	legacyVersion   = 0x01
	legacyHeaderLen = 5  // version + int32 count
	legacyEntryLen  = 28 // int64 msb, int64 lsb, int32 partition, int64 offset
)

// DecodeLegacy reads a value of the legacy parsley-clock header (SPEC §2.1).
// It returns the entries in wire order, which the layout does not require to
// be sorted; New or FromLegacy turns them into a Clock. The checks run in
// reading order: null, version, count, length, then each entry.
func DecodeLegacy(b []byte, opts ...DecodeOption) ([]Entry, error) {
	if b == nil {
		return nil, fail(CodeNullValue, 0, "header value is null")
	}
	cfg := newDecodeConfig(opts)
	if cfg.maxSize > 0 && len(b) > cfg.maxSize {
		return nil, fail(CodeTooLarge, 0, "%d bytes exceed the budget of %d", len(b), cfg.maxSize)
	}
	if len(b) == 0 {
		return nil, fail(CodeTruncated, 0, "empty value")
	}
	if b[0] != legacyVersion {
		return nil, fail(CodeUnknownVersion, 0, "version %d, want 1", b[0])
	}
	if len(b) < legacyHeaderLen {
		return nil, fail(CodeTruncated, len(b), "entry count needs 4 bytes, %d left", len(b)-1)
	}
	count := int32(binary.BigEndian.Uint32(b[1:]))
	if count < 0 {
		return nil, fail(CodeNegativeCount, 1, "entry count %d", count)
	}
	// Compare in int64: the count times 28 must not overflow an int.
	want := int64(legacyHeaderLen) + int64(legacyEntryLen)*int64(count)
	switch {
	case int64(len(b)) < want:
		return nil, fail(CodeTruncated, len(b), "%d entries need %d bytes, value has %d", count, want, len(b))
	case int64(len(b)) > want:
		return nil, fail(CodeTrailingBytes, int(want), "%d bytes after %d entries", int64(len(b))-want, count)
	}
	if count == 0 {
		return nil, nil
	}
	entries := make([]Entry, count)
	for i := range entries {
		off := legacyHeaderLen + i*legacyEntryLen
		var e Entry
		copy(e.Channel.Topic[:], b[off:off+16])
		part := int32(binary.BigEndian.Uint32(b[off+16:]))
		pos := int64(binary.BigEndian.Uint64(b[off+20:]))
		if part < 0 {
			return nil, fail(CodeNegativePartition, off+16, "entry %d: partition %d", i+1, part)
		}
		if pos < 0 {
			return nil, fail(CodeNegativePosition, off+20, "entry %d: offset %d", i+1, pos)
		}
		e.Channel.Partition, e.Position = part, pos
		entries[i] = e
	}
	return entries, nil
}

// FromLegacy turns decoded legacy entries into a Clock: sorted by channel, a
// channel named twice keeping its highest position. Legacy values may name
// the zero topic or position 2^63−1, which the current format cannot carry;
// such entries are kept, so the clock claims exactly what the sender wrote.
func FromLegacy(entries []Entry) Clock {
	return fromUnsorted(append([]Entry(nil), entries...))
}

// EncodeLegacy writes entries in the legacy parsley-clock layout, in the
// order given. EncodeLegacy(DecodeLegacy(v)) == v for every accepted v.
func EncodeLegacy(entries []Entry) []byte {
	if len(entries) > math.MaxInt32 {
		panic("clock: too many entries for the legacy layout")
	}
	b := make([]byte, 0, legacyHeaderLen+legacyEntryLen*len(entries))
	b = append(b, legacyVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = append(b, e.Channel.Topic[:]...)
		b = binary.BigEndian.AppendUint32(b, uint32(e.Channel.Partition))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Position))
	}
	return b
}
