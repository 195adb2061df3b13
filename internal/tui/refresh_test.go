package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/charmbracelet/x/exp/teatest"
)

// waitOutput waits until the program's output holds want.
func waitOutput(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

// TestRepeatedEventsCollapse: the same error told three times in a row
// (every task's gate stopping when the broker goes) is one line of recent
// events with its count, in the running program.
func TestRepeatedEventsCollapse(t *testing.T) {
	s := liveSnapshot(6, 100)
	at := time.Unix(100, 0)
	for k := range 3 {
		s.Recent = append(s.Recent, view.RecentEvent{Kind: "error", Text: "error: broker 127.0.0.1:9 went away", At: at.Add(time.Duration(k) * time.Millisecond)})
	}
	s.Recent = view.CollapseRepeats(s.Recent)
	tm := teatest.NewTestModel(t, liveModel(100, 30), teatest.WithInitialTermSize(100, 30))
	tm.Send(SnapshotMsg{Snapshot: s})
	waitOutput(t, tm, "went away (×3)")
	tm.Send(keyMsg("q"))
	out := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model).View()
	if n := strings.Count(out, "went away"); n != 1 {
		t.Errorf("the error shown %d times, want once with its count:\n%s", n, out)
	}
}

// TestSelectionFollowsItsRow: when a refresh re-sorts the rows (another
// channel's hold becomes the oldest), the cursor stays on the channel it
// was on — moved there or not — and the detail pane with it.
func TestSelectionFollowsItsRow(t *testing.T) {
	first := liveSnapshot(30, 100)
	ref := liveModel(120, 40)
	ref.Update(SnapshotMsg{Snapshot: first})
	press(ref, "down")
	moved := ref.table.Selected().Channel // the second row of the default order
	tm := teatest.NewTestModel(t, liveModel(120, 40), teatest.WithInitialTermSize(120, 40))
	tm.Send(SnapshotMsg{Snapshot: first})
	waitOutput(t, tm, "RUNNING")
	tm.Send(keyMsg("down"))
	// Next refresh: orders/0's hold is now the oldest by far.
	second := liveSnapshot(30, 200)
	for i := range second.Channels {
		if second.Channels[i].Channel == "orders/0" {
			second.Channels[i].HeadAge = inspect.Age{D: time.Hour, Known: true}
		}
	}
	tm.Send(SnapshotMsg{Snapshot: second})
	tm.Send(keyMsg("q"))
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if names := tableNames(m); len(names) == 0 || names[0] != "orders/0" {
		t.Fatalf("the refresh did not re-sort: %v", names)
	}
	if r := m.table.Selected(); r == nil || r.Channel != moved || moved == "orders/0" {
		t.Errorf("cursor on %v after the re-sort, want %s (the row it was on)", r, moved)
	}

	// Not moved at all: the cursor stays on the first row's channel.
	m = liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: first})
	was := m.table.Selected().Channel
	m.Update(SnapshotMsg{Snapshot: second})
	if r := m.table.Selected(); r == nil || r.Channel != was {
		t.Errorf("unmoved cursor on %v after the re-sort, want %s", r, was)
	}
}
