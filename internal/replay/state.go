package replay

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RunState is what the feed of a gate is doing.
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

// String returns the state as the TUI's header shows it.
func (s RunState) String() string {
	switch s {
	case StateRunning:
		return "running"
	case StatePaused:
		return "paused"
	case StateFinished:
		return "finished"
	case StateFailedClosed:
		return "failed closed"
	case StateError:
		return "error"
	case StateDisconnected:
		return "disconnected"
	}
	return "RunState(" + strconv.Itoa(int(s)) + ")"
}

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

// String returns e.g. "item 9 of 10 · line 9 · paused · 10 items/s".
func (p Position) String() string {
	var b strings.Builder
	b.WriteString("item ")
	b.WriteString(strconv.FormatInt(p.Item, 10))
	if p.Total >= 0 {
		b.WriteString(" of ")
		b.WriteString(strconv.FormatInt(p.Total, 10))
	}
	if p.Line > 0 {
		b.WriteString(" · line ")
		b.WriteString(strconv.FormatInt(p.Line, 10))
	}
	if p.Running {
		b.WriteString(" · running")
	} else {
		b.WriteString(" · paused")
	}
	b.WriteString(" · ")
	b.WriteString(strconv.FormatFloat(p.Speed, 'f', -1, 64))
	b.WriteString(" items/s")
	return b.String()
}

// Retrying is how a live feed that lost its brokers says so, in the status
// line and the view alike: "disconnected (retrying, 7s)".
func Retrying(d time.Duration) string {
	return fmt.Sprintf("disconnected (retrying, %ds)", int(d.Round(time.Second)/time.Second))
}
