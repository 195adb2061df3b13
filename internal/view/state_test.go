package view

import (
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/replay"
)

func TestStateAndPositionText(t *testing.T) {
	p := replay.Position{Item: 9, Total: 10, Line: 9, Speed: 10}
	if got := PositionText(p); got != "item 9 of 10 · line 9 · paused · 10 items/s" {
		t.Errorf("Position: %q", got)
	}
	p = replay.Position{Item: 3, Total: -1, Running: true, Speed: 0.5}
	if got := PositionText(p); got != "item 3 · running · 0.5 items/s" {
		t.Errorf("Position: %q", got)
	}
	for s := replay.StateRunning; s <= replay.StateDisconnected; s++ {
		if got := StateText(s); got == "" || got[0] == 'R' {
			t.Errorf("replay.RunState(%d) has no name: %q", s, got)
		}
	}
	if got := Retrying(7200 * time.Millisecond); got != "disconnected (retrying, 7s)" {
		t.Errorf("Retrying: %q", got)
	}
}
