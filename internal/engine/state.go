package engine

// RunState is what the feed of a gate is doing; internal/view says it
// in words (view.StateText).
type RunState uint8

const (
	// StateRunning: items are being fed (a live watch, or a running stepper).
	StateRunning RunState = iota
	// StatePaused: a stepper waiting for the next key.
	StatePaused
	// StateFinished: the input ended; nothing more will be fed.
	StateFinished
	// StateFailedClosed: the gate failed closed (Snapshot.Failure says
	// where and why); nothing after it is processed.
	StateFailedClosed
	// StateError: the feed stopped on an error that is not the gate's:
	// a malformed capture line, a broker or I/O error (Snapshot.Err).
	StateError
	// StateDisconnected: a live feed cannot reach its brokers and is
	// retrying (Snapshot.RetryingFor says for how long); the gate keeps
	// what it holds.
	StateDisconnected
)

// Position is where a stepper stands.
type Position struct {
	Item  int64 // items fed so far
	Total int64 // items in the input, −1 unknown
	Line  int64 // capture line of the last item fed, 0 unknown
	// Running is set while the stepper runs on its own.
	Running bool
	Speed   float64 // items per second when running
	// Notice is what the stepper's last jump says, e.g. where it landed.
	Notice Notice
}

// Notice is what a stepper's last jump or step-to says of where it
// landed, as values; internal/view says it in words (view.NoticeText).
type Notice struct {
	Kind NoticeKind
	Item int64 // the item the stepper stands at
	// Line is the capture line of that item, 0 unknown (NoticeAtOffset).
	Line int64
	// Target is the item (NoticeItemNotReached) or the offset on Channel
	// (NoticeAtOffset, NoticeOffsetNotReached) that was asked for.
	Target  int64
	Channel string
	// Event is the type a step-to looked for from item From
	// (NoticeNoEvent).
	Event EventType
	From  int64
}

// NoticeKind says which move a Notice reports.
type NoticeKind uint8

const (
	// NoticeNone: the last move was no jump.
	NoticeNone NoticeKind = iota
	// NoticeStart and NoticeEnd: a jump to the start or the end.
	NoticeStart
	NoticeEnd
	// NoticeAtItem: a jump to an item that got there.
	NoticeAtItem
	// NoticeItemNotReached: the input stopped before the item.
	NoticeItemNotReached
	// NoticeAtOffset: a jump to CH@OFFSET that got there.
	NoticeAtOffset
	// NoticeOffsetNotReached: the input stopped before CH@OFFSET.
	NoticeOffsetNotReached
	// NoticeNoEvent: a step-to found no event of its type.
	NoticeNoEvent
)
