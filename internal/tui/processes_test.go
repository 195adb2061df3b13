package tui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
)

// processRows are three processes as `processes` reads them: one stuck
// (a head beyond the log end), one healthy, one that could not be read.
func processRows() []inspect.ProcessSummary {
	return []inspect.ProcessSummary{
		{App: "notifier", Changelog: "notifier-__parsley.ordering-changelog", Tasks: 3,
			Group:    &record.Group{Group: "notifier", State: "Stable", Members: []record.GroupMember{{}}},
			Receives: []string{"orders", "payments", "shipments"}, ReceivesFrom: inspect.ScopeSubscription,
			HeldRecords: 13, HeldHeads: 1, Oldest: 95 * time.Second, Dated: true,
			Causes: map[inspect.Cause]int{inspect.CauseBeyondLogEnd: 1}, MaxLag: 0, LagChannel: "orders/0", LagKnown: true,
			NextStart: inspect.NextStartOK},
		{App: "billing", Changelog: "billing-__parsley.ordering-changelog", Tasks: 2,
			Group:    &record.Group{Group: "billing", State: "Empty"},
			Receives: []string{"invoices"}, ReceivesFrom: inspect.ScopeState,
			Causes: map[inspect.Cause]int{}, NextStart: inspect.NextStartOK},
		{App: "packer", Changelog: "packer-__parsley.ordering-changelog", Tasks: 4, Err: errors.New("changelog unreadable")},
	}
}

// TestProcessListGolden runs the list as a program (teatest): the table
// of processes, the cursor moved down and back, at 100×12.
func TestProcessListGolden(t *testing.T) {
	l := NewProcessList(plainStyles(), "causalctl watch · 127.0.0.1:9092", processRows())
	tm := teatest.NewTestModel(t, l, teatest.WithInitialTermSize(100, 12))
	tm.Send(keyMsg("j"))
	tm.Send(keyMsg("k"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("notifier")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	tm.Send(keyMsg("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*ProcessList)
	view := fm.View()
	checkFrame(t, view, 100, 12)
	if fm.Chosen() != "" {
		t.Errorf("q chose %q", fm.Chosen())
	}
	teatest.RequireEqualOutput(t, []byte(view+"\n"))
}

// TestProcessListChooses: enter picks the cursor's process; a process
// that could not be read cannot be picked.
func TestProcessListChooses(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"enter"}, "notifier"},
		{[]string{"j", "enter"}, "billing"},
		{[]string{"G", "enter", "k", "enter"}, "billing"},
	} {
		l := NewProcessList(plainStyles(), "causalctl watch", processRows())
		l.Update(tea.WindowSizeMsg{Width: 100, Height: 12})
		var cmd tea.Cmd
		for _, k := range c.keys {
			_, cmd = l.Update(keyMsg(k))
			if l.Chosen() != "" {
				break
			}
		}
		if l.Chosen() != c.want || cmd == nil || cmd() != tea.Quit() {
			t.Errorf("%v: chose %q, want %q and quit", c.keys, l.Chosen(), c.want)
		}
	}
	// The rows say what the processes table says.
	l := NewProcessList(plainStyles(), "causalctl watch", processRows())
	l.Update(tea.WindowSizeMsg{Width: 140, Height: 12})
	view := l.View()
	for _, want := range []string{"APP", "NEXT START", "beyond-log-end:1", "Stable", "unread", "1m35s"} {
		if !strings.Contains(view, want) {
			t.Errorf("list lacks %q:\n%s", want, view)
		}
	}
}

// TestProcessListCountsInTheirNumber: the title counts one process as one.
func TestProcessListCountsInTheirNumber(t *testing.T) {
	for n, want := range map[int]string{1: "1 process", 3: "3 processes"} {
		l := NewProcessList(plainStyles(), "causalctl watch", processRows()[:n])
		l.Update(tea.WindowSizeMsg{Width: 100, Height: 12})
		title, _, _ := strings.Cut(l.View(), "\n")
		if !strings.HasSuffix(strings.TrimSpace(title), want) {
			t.Errorf("%d rows: title %q, want it to end in %q", n, title, want)
		}
	}
}
