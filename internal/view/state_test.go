package view

import (
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
)

func TestStateAndPositionText(t *testing.T) {
	p := engine.Position{Item: 9, Total: 10, Line: 9, Speed: 10}
	if got := PositionText(p); got != "item 9 of 10 · line 9 · paused · 10 items/s" {
		t.Errorf("Position: %q", got)
	}
	p = engine.Position{Item: 3, Total: -1, Running: true, Speed: 0.5}
	if got := PositionText(p); got != "item 3 · running · 0.5 items/s" {
		t.Errorf("Position: %q", got)
	}
	for s := engine.StateRunning; s <= engine.StateDisconnected; s++ {
		if got := StateText(s); got == "" || got[0] == 'R' {
			t.Errorf("engine.RunState(%d) has no name: %q", s, got)
		}
	}
	if got := Retrying(7200 * time.Millisecond); got != "disconnected (retrying, 7s)" {
		t.Errorf("Retrying: %q", got)
	}
}

func TestNoticeText(t *testing.T) {
	for _, c := range []struct {
		n    engine.Notice
		want string
	}{
		{engine.Notice{}, ""},
		{engine.Notice{Kind: engine.NoticeStart}, "at the start"},
		{engine.Notice{Kind: engine.NoticeEnd, Item: 10}, "at the end"},
		{engine.Notice{Kind: engine.NoticeAtItem, Item: 4}, "at item 4"},
		{engine.Notice{Kind: engine.NoticeItemNotReached, Item: 9, Target: 50}, "item 50 not reached: the input stopped at item 9"},
		{engine.Notice{Kind: engine.NoticeAtOffset, Item: 3, Line: 5, Channel: "a/0", Target: 2}, "at a/0@2, item 3, line 5"},
		{engine.Notice{Kind: engine.NoticeAtOffset, Item: 3, Channel: "a/0", Target: 2}, "at a/0@2, item 3"},
		{engine.Notice{Kind: engine.NoticeOffsetNotReached, Item: 9, Channel: "a/0", Target: 99}, "a/0@99 not reached: the input stopped at item 9"},
		{engine.Notice{Kind: engine.NoticeNoEvent, Item: 9, Event: engine.EventDrop, From: 2}, "no drop after item 2: the input stopped at item 9"},
	} {
		if got := NoticeText(c.n); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
}
