package view

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/replay"
)

// StateText is the state as the view's header shows it.
func StateText(s replay.RunState) string {
	switch s {
	case replay.StateRunning:
		return "running"
	case replay.StatePaused:
		return "paused"
	case replay.StateFinished:
		return "finished"
	case replay.StateFailedClosed:
		return "failed closed"
	case replay.StateError:
		return "error"
	case replay.StateDisconnected:
		return "disconnected"
	}
	return "RunState(" + strconv.Itoa(int(s)) + ")"
}

// PositionText is a stepper's position, e.g. "item 9 of 10 · line 9 · paused · 10 items/s".
func PositionText(p replay.Position) string {
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
