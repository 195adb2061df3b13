package replay

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
	// Notice is the stepper's last message, e.g. where a jump landed.
	Notice string
}
