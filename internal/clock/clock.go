// Package clock holds the vocabulary of causal delivery: channels (a topic
// UUID and a partition), dependency clocks (a map from channel to position)
// and the codecs that read and write them — the parsley.causes header, the
// legacy parsley-clock header and the text form people type.
//
// A Clock is an immutable value whose entries are kept sorted by channel, the
// same order the parsley.causes wire format uses, so decoding fills it in one
// pass and comparisons are linear merges that never allocate.
package clock

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
)

// MaxPosition is the largest position a clock entry may hold. The value one
// above it (2^63−1) is reserved by Parsley as a deleted-channel marker.
const MaxPosition = math.MaxInt64 - 1

// TopicID is a Kafka topic UUID: 16 bytes, most significant first.
type TopicID [16]byte

// ParseTopicID parses the canonical 8-4-4-4-12 hex form, in any case.
func ParseTopicID(s string) (TopicID, error) {
	var id TopicID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, fmt.Errorf("topic UUID %q: want 8-4-4-4-12 hex digits", s)
	}
	var digits [32]byte
	n := 0
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		digits[n] = s[i]
		n++
	}
	if _, err := hex.Decode(id[:], digits[:]); err != nil {
		return TopicID{}, fmt.Errorf("topic UUID %q: not hexadecimal", s)
	}
	return id, nil
}

// String returns the lowercase canonical form.
func (t TopicID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], t[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], t[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], t[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], t[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], t[10:16])
	return string(b[:])
}

// IsZero reports whether t is the all-zero UUID, which names no topic.
func (t TopicID) IsZero() bool { return t == TopicID{} }

// Channel is one Kafka topic-partition, identified by topic UUID so that a
// topic deleted and recreated under the same name is a different channel.
type Channel struct {
	Topic     TopicID
	Partition int32
}

// Compare orders channels by topic UUID (as unsigned bytes), then partition:
// the order of the parsley.causes wire format.
func (c Channel) Compare(d Channel) int {
	// Big-endian words compare like the bytes, without a call into
	// bytes.Compare: this sits on the hot path of every clock merge.
	x, y := binary.BigEndian.Uint64(c.Topic[:8]), binary.BigEndian.Uint64(d.Topic[:8])
	if x == y {
		x, y = binary.BigEndian.Uint64(c.Topic[8:]), binary.BigEndian.Uint64(d.Topic[8:])
		if x == y {
			x, y = uint64(c.Partition), uint64(d.Partition) // never negative in a clock
		}
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// String returns UUID/PARTITION. Use Names.Channel for the resolved form.
func (c Channel) String() string { return fmt.Sprintf("%s/%d", c.Topic, c.Partition) }

// PartitionCount is the partition count that partition p implies, p+1,
// saturated at math.MaxInt32: Kafka counts partitions in an int32, so no
// topic has a partition 2^31−1, and one that a capture or a broker names
// must not wrap the count to −2^31.
func PartitionCount(p int32) int32 {
	if p == math.MaxInt32 {
		return p
	}
	return p + 1
}

// Entry is one claim of a clock: every record on Channel at or below
// Position happened before the record carrying the clock.
type Entry struct {
	Channel  Channel
	Position int64
}

// Clock is a finite map from channel to position, sorted by channel. The zero
// value is the empty clock. Clocks are values: no method modifies its
// receiver, and the slice from Entries must not be modified.
type Clock struct {
	entries []Entry
}

// New builds a clock from entries in any order. A channel named twice keeps
// its highest position (the join). It fails on an entry that no header could
// carry: a zero topic UUID, a negative partition or an out-of-range position.
func New(entries ...Entry) (Clock, error) {
	for _, e := range entries {
		if err := checkEntry(e); err != nil {
			return Clock{}, err
		}
	}
	return fromUnsorted(slices.Clone(entries)), nil
}

// NewShared is New for entries nobody modifies afterwards (a decoded
// store's causes): when they are in clock order already — sorted by
// channel, no channel twice — the clock shares them instead of copying
// them. Otherwise, and on an invalid entry, it is New.
func NewShared(entries []Entry) (Clock, error) {
	for i, e := range entries {
		if err := checkEntry(e); err != nil {
			return Clock{}, err
		}
		if i > 0 && entries[i-1].Channel.Compare(e.Channel) >= 0 {
			return New(entries...)
		}
	}
	if len(entries) == 0 {
		return Clock{}, nil
	}
	return Clock{entries: entries[:len(entries):len(entries)]}, nil
}

// MustNew is New for tests and literals; it panics on an invalid entry.
func MustNew(entries ...Entry) Clock {
	c, err := New(entries...)
	if err != nil {
		panic(err)
	}
	return c
}

func checkEntry(e Entry) error {
	switch {
	case e.Channel.Topic.IsZero():
		return fmt.Errorf("entry %v: zero topic UUID", e.Channel)
	case e.Channel.Partition < 0:
		return fmt.Errorf("entry %v: negative partition", e.Channel)
	case e.Position < 0:
		return fmt.Errorf("entry %v=%d: negative position", e.Channel, e.Position)
	case e.Position > MaxPosition:
		return fmt.Errorf("entry %v=%d: position reserved", e.Channel, e.Position)
	}
	return nil
}

// fromUnsorted sorts es in place and folds duplicate channels to their max.
func fromUnsorted(es []Entry) Clock {
	slices.SortFunc(es, func(a, b Entry) int {
		if r := a.Channel.Compare(b.Channel); r != 0 {
			return r
		}
		return cmp.Compare(a.Position, b.Position)
	})
	out := es[:0]
	for _, e := range es {
		if n := len(out); n > 0 && out[n-1].Channel == e.Channel {
			out[n-1].Position = e.Position // sorted ascending: the last is the max
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return Clock{}
	}
	return Clock{entries: out}
}

// Clone returns a copy of c that shares no storage with it: for keeping a
// clock whose entries alias a buffer that will be reused (AppendDecode).
func (c Clock) Clone() Clock {
	if len(c.entries) == 0 {
		return Clock{}
	}
	return Clock{entries: slices.Clone(c.entries)}
}

// Len returns the number of entries.
func (c Clock) Len() int { return len(c.entries) }

// IsEmpty reports whether c claims nothing.
func (c Clock) IsEmpty() bool { return len(c.entries) == 0 }

// Entries returns the entries sorted by channel. The slice is shared with
// the clock and must not be modified.
func (c Clock) Entries() []Entry { return c.entries }

// Get returns the position c claims for ch, if any.
func (c Clock) Get(ch Channel) (int64, bool) {
	i, ok := slices.BinarySearchFunc(c.entries, ch, func(e Entry, ch Channel) int {
		return e.Channel.Compare(ch)
	})
	if !ok {
		return -1, false
	}
	return c.entries[i].Position, true
}

// Equal reports whether c and d make the same claims.
func (c Clock) Equal(d Clock) bool { return slices.Equal(c.entries, d.entries) }

// Dominates reports whether c ≥ d pointwise: every entry of d is matched by
// an entry of c on the same channel with at least its position. It never
// allocates.
func (c Clock) Dominates(d Clock) bool {
	ce := c.entries
	if len(ce) < len(d.entries) {
		return false // some entry of d has no match
	}
	i := 0
	for k := range d.entries {
		e := &d.entries[k]
		r := -1
		for i < len(ce) {
			if r = ce[i].Channel.Compare(e.Channel); r >= 0 {
				break
			}
			i++
		}
		if r != 0 || ce[i].Position < e.Position {
			return false
		}
		i++
	}
	return true
}

// Join returns the pointwise maximum of c and d. When one side already
// dominates the other it is returned as is, without allocating.
func (c Clock) Join(d Clock) Clock {
	switch {
	case c.Dominates(d):
		return c
	case d.Dominates(c):
		return d
	}
	out := make([]Entry, 0, len(c.entries)+len(d.entries))
	i, j := 0, 0
	for i < len(c.entries) && j < len(d.entries) {
		a, b := c.entries[i], d.entries[j]
		switch r := a.Channel.Compare(b.Channel); {
		case r < 0:
			out = append(out, a)
			i++
		case r > 0:
			out = append(out, b)
			j++
		default:
			out = append(out, Entry{a.Channel, max(a.Position, b.Position)})
			i++
			j++
		}
	}
	out = append(out, c.entries[i:]...)
	out = append(out, d.entries[j:]...)
	return Clock{entries: out}
}

// Restrict returns the entries of c whose channel satisfies keep. It returns
// c itself, without allocating, when every entry is kept.
func (c Clock) Restrict(keep func(Channel) bool) Clock {
	for i, e := range c.entries {
		if keep(e.Channel) {
			continue
		}
		out := slices.Clone(c.entries[:i])
		for _, e := range c.entries[i+1:] {
			if keep(e.Channel) {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return Clock{}
		}
		return Clock{entries: out}
	}
	return c
}

// Without returns c less its entry for ch, if it has one.
func (c Clock) Without(ch Channel) Clock {
	return c.Restrict(func(x Channel) bool { return x != ch })
}

// With returns c with the entry (ch, pos) joined in.
func (c Clock) With(ch Channel, pos int64) Clock {
	return c.Join(Clock{entries: []Entry{{ch, pos}}})
}

// String returns the text form with UUID channel names; see Names.Format.
func (c Clock) String() string { return (*Names)(nil).Format(c) }
