package view

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
)

// StateText is the state as the view's header shows it.
func StateText(s engine.RunState) string {
	switch s {
	case engine.StateRunning:
		return "running"
	case engine.StatePaused:
		return "paused"
	case engine.StateFinished:
		return "finished"
	case engine.StateFailedClosed:
		return "failed closed"
	case engine.StateError:
		return "error"
	case engine.StateDisconnected:
		return "disconnected"
	}
	return "RunState(" + strconv.Itoa(int(s)) + ")"
}

// PositionText is a stepper's position, e.g. "item 9 of 10 · line 9 · paused · 10 items/s".
func PositionText(p engine.Position) string {
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

// NoticeText is what a stepper's last jump says, e.g. "at orders/0@41,
// item 9, line 9"; "" for the zero Notice.
func NoticeText(n engine.Notice) string {
	item := strconv.FormatInt(n.Item, 10)
	switch n.Kind {
	case engine.NoticeStart:
		return "at the start"
	case engine.NoticeEnd:
		return "at the end"
	case engine.NoticeAtItem:
		return "at item " + item
	case engine.NoticeItemNotReached:
		return "item " + strconv.FormatInt(n.Target, 10) + " not reached: the input stopped at item " + item
	case engine.NoticeAtOffset:
		s := "at " + n.Channel + "@" + strconv.FormatInt(n.Target, 10) + ", item " + item
		if n.Line > 0 {
			s += ", line " + strconv.FormatInt(n.Line, 10)
		}
		return s
	case engine.NoticeOffsetNotReached:
		return n.Channel + "@" + strconv.FormatInt(n.Target, 10) + " not reached: the input stopped at item " + item
	case engine.NoticeNoEvent:
		return "no " + n.Event.String() + " after item " + strconv.FormatInt(n.From, 10) + ": the input stopped at item " + item
	}
	return ""
}
