package gate

import (
	"fmt"

	"github.com/causalctl/causalctl/internal/clock"
)

// EventKind tells a delivery from a replay-guard drop.
type EventKind uint8

const (
	// EventDeliver: the record was delivered (appended to the delivery
	// sequence).
	EventDeliver EventKind = iota + 1
	// EventDrop: the record was at or below its channel's settled position
	// and was dropped by the replay guard without effect.
	EventDrop
)

// String returns "deliver" or "drop", the type names of replay's NDJSON.
func (k EventKind) String() string {
	switch k {
	case EventDeliver:
		return "deliver"
	case EventDrop:
		return "drop"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one output of the gate.
type Event struct {
	Kind    EventKind
	Channel clock.Channel
	// Seq is the 1-based position of a delivery in the delivery sequence;
	// 0 for drops.
	Seq    int64
	Offset int64
}

// String returns e in a compact form, e.g. "deliver #3 UUID/0@41".
func (e Event) String() string {
	if e.Kind == EventDeliver {
		return fmt.Sprintf("%v #%d %v@%d", e.Kind, e.Seq, e.Channel, e.Offset)
	}
	return fmt.Sprintf("%v %v@%d", e.Kind, e.Channel, e.Offset)
}

// Stats counts what the gate did. Received = Delivered + Dropped + Held: a
// record that failed the gate closed is not counted.
type Stats struct {
	Received  int64 // records accepted by Receive, drops included
	Delivered int64
	Dropped   int64 // by the replay guard
	Held      int64 // records in hold queues now
}
