// Package record holds the unit every record source of causalctl yields —
// a capture file or a broker range — so that replay, decode and the
// diagnosis treat both alike: Item (a record, a position or log facts) and
// LogFacts, what the brokers said of a channel's log. It sits below both
// the broker client (internal/kafka) and the file format (internal/capture),
// so that neither imports the other and the diagnosis imports neither.
package record

import (
	"bytes"

	"github.com/causalctl/causalctl/internal/clock"
)

// Kind tells a record from a position.
type Kind uint8

const (
	// KindRecord is a Kafka record at Offset.
	KindRecord Kind = iota + 1
	// KindPosition says the consumer's position on the channel reached
	// Offset with no record below it still to come.
	KindPosition
	// KindLogFacts carries what the brokers said of the channel's log
	// (Facts); it is no input of the gate.
	KindLogFacts
)

// String returns "record", "position", "log-facts" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindRecord:
		return "record"
	case KindPosition:
		return "position"
	case KindLogFacts:
		return "log-facts"
	}
	return "unknown"
}

// Item is one item of a source: a record, a position or log facts (in a
// capture, one line).
type Item struct {
	Kind Kind
	// Line is the 1-based line number in the file it came from; 0 when the
	// item did not come from a file.
	Line int64

	// The channel. At least one of Topic and TopicID is set.
	Topic     string        // topic name; "" when unknown
	TopicID   clock.TopicID // zero when unknown
	Partition int32

	// Offset is the record's offset, or for KindPosition the position.
	Offset int64

	// The rest is set for records only.
	Timestamp    int64 // milliseconds since the epoch, when HasTimestamp
	HasTimestamp bool
	Headers      []clock.Header // in record order, duplicates kept; a nil Value is null
	Key, Value   []byte         // nil is null

	// Facts is set for KindLogFacts only.
	Facts *LogFacts

	// Gap is set on a KindPosition item whose position moved over offsets
	// deleted before they were read; Gap.To is Offset.
	Gap *Gap
}

// Gap, on a position item, says that the offsets From ≤ o < To of the
// channel were deleted (by retention or DeleteRecords) before the read
// reached them, so their records, if any, were never seen: the position
// moved to To over offsets that are unknown, not over offsets known to
// hold no record. A reader that was asked to read past such a gap
// (--allow-gaps) records it; one that was not fails instead.
type Gap struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Clone returns a copy of it that shares no storage with it, for keeping
// an item that its source reuses on the next call.
func (it *Item) Clone() *Item {
	c := *it
	c.Key, c.Value = bytes.Clone(it.Key), bytes.Clone(it.Value) // nil stays nil
	if it.Headers != nil {
		c.Headers = make([]clock.Header, len(it.Headers))
		for i, h := range it.Headers {
			c.Headers[i] = clock.Header{Key: h.Key, Value: bytes.Clone(h.Value)}
		}
	}
	return &c
}
