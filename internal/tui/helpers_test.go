package tui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// plainStyles are styles without colour, as under NO_COLOR: goldens and
// assertions see text only.
func plainStyles() *Styles {
	return NewStyles(lipgloss.NewRenderer(io.Discard), false)
}

// newStepper returns a stepper over one of the shared captures
// (testdata/captures), with the scope and names a replay of it would use.
func newStepper(t testing.TB, name string) *view.Stepper {
	t.Helper()
	b, err := os.ReadFile(testutil.Testdata("captures", name))
	if err != nil {
		t.Fatal(err)
	}
	open := func() (engine.Source, error) { return capture.NewReader(bytes.NewReader(b)), nil }
	names := &clock.Names{}
	src, _ := open()
	scope, err := engine.Discover(src, names)
	if err != nil {
		t.Fatal(err)
	}
	s, err := view.NewStepper(open, engine.Config{Scope: scope, Names: names},
		view.StepperOptions{Title: "causalctl replay", Source: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stepperModel is a model driving a stepper over the named capture, sized.
func stepperModel(t testing.TB, name string, w, h int) (*Model, *view.Stepper) {
	t.Helper()
	s := newStepper(t, name)
	m := NewModel(plainStyles(), Options{Controller: StepperController(s)})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, s
}

// liveModel is a model without a controller, sized.
func liveModel(w, h int) *Model {
	m := NewModel(plainStyles(), Options{Title: "causalctl watch"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// liveSnapshot is a snapshot as watch would send it: log ends, rates, ages,
// n channels of which every tenth is held, the first few in a chain: the
// heads are lagging but for shipments/6 (beyond the log end) and
// shipments/16 (held behind it).
func liveSnapshot(n int, received int64) view.Snapshot {
	s := view.Snapshot{
		Title: "causalctl watch", Source: "broker-1:9092,broker-2:9092", State: engine.StateRunning,
		Scope: n, Received: received, Delivered: received - int64(n/10)*3, Held: int64(n/10) * 3,
		RecvRate: 123456.7, DeliverRate: 120001, OldestHold: inspect.Age{D: 83 * time.Second, Known: true},
		HeldChannels: n / 10, Stamp: "orders/0=41,payments/3=7", StampEntries: 2, Cycles: [][]string{},
	}
	for k := range n {
		topic := []string{"orders", "payments", "shipments"}[k%3]
		r := view.ChannelRow{
			Channel: fmt.Sprintf("%s/%d", topic, k/3), TopicID: fmt.Sprintf("00000000-0000-0000-0000-%012x", k%3+1),
			Partition: int32(k / 3), Settled: int64(1000 + k), ReceivedUpTo: int64(1000 + k), LogEnd: int64(1200 + k),
			HeadOffset: -1, Head: -1,
		}
		if k%10 == 0 {
			r.Held = 3
			r.Blocked = true
			r.HeadOffset = r.Settled + 1
			r.HeadAge = inspect.Age{D: time.Duration(k+3) * time.Second, Known: true}
			r.HeadWritten = inspect.Age{D: r.HeadAge.D + 2*time.Second, Known: true}
			r.Waits = fmt.Sprintf("waits payments/%d ≥ %d, settled %d", k+1, 2000+k, 1000+k)
			r.Head = len(s.Heads)
			h := view.HeadDetail{Head: inspect.Head{
				Channel: r.Channel, Offset: r.HeadOffset, Age: r.HeadAge,
				Clock:        fmt.Sprintf("orders/%d=%d,payments/%d=%d", k, 990+k, k+1, 2000+k),
				ClockEntries: 2,
				Blockers: []inspect.Blocker{{Channel: fmt.Sprintf("payments/%d", k+1), Required: int64(2000 + k),
					Settled: int64(1000 + k), Cause: inspect.CauseLagging, Log: logEnd(int64(2100 + k))}},
				Chain: []string{r.Channel}, ChainLen: 1,
				Cause: inspect.CauseLagging, RootCause: inspect.CauseLagging,
			}, Written: r.HeadWritten}
			switch k {
			case 20: // a stamp beyond the log end
				h.Blockers[0].Cause, h.Cause, h.RootCause = inspect.CauseBeyondLogEnd, inspect.CauseBeyondLogEnd, inspect.CauseBeyondLogEnd
			case 50: // behind it
				h.Blockers[0] = inspect.Blocker{Channel: "shipments/6", Required: 1021, Settled: 1020,
					Cause: inspect.CauseHeld, Log: logEnd(1220), Root: "shipments/6"}
				h.RootWaits = []string{"waits payments/21 ≥ 2020, settled 1020"}
				h.Chain, h.ChainLen = []string{r.Channel, "shipments/6"}, 2
				h.Cause, h.RootCause = inspect.CauseHeld, inspect.CauseBeyondLogEnd
				r.Waits = "waits shipments/6 ≥ 1021, settled 1020"
			}
			if k == 10 {
				h.Blockers = append(h.Blockers, inspect.Blocker{Channel: "orders/0", Required: 1001, Settled: 1000,
					Cause: inspect.CauseHeld, Log: logEnd(1200), Root: "orders/0"})
				h.RootWaits = []string{"", "waits payments/1 ≥ 2000, settled 1000"}
				h.Chain, h.ChainLen = []string{r.Channel, "orders/0"}, 2
			}
			s.Heads = append(s.Heads, h)
		}
		s.Channels = append(s.Channels, r)
	}
	s.Recent = []view.RecentEvent{
		{Kind: "deliver", Text: "deliver #41 orders/0@1000"},
		{Kind: "drop", Text: "drop orders/3@998 (replay guard)"},
		{Kind: "hold", Text: "hold payments/0@1001 waits orders/0 ≥ 1001, settled 1000"},
	}
	return s
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// press sends keys one by one; a string of several runes is typed.
func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// checkFrame fails unless view has exactly h lines, none wider than w.
func checkFrame(t testing.TB, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), h, view)
	}
	for k, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Fatalf("line %d is %d wide, more than %d: %q", k+1, n, w, l)
		}
	}
}

// tableNames returns the channels of the table in view order.
func tableNames(m *Model) []string {
	var out []string
	for _, i := range m.table.view {
		out = append(out, m.table.rows[i].Channel)
	}
	return out
}

// taskSnapshot is liveSnapshot(n, received) from per-task gates: each row
// in the task of its partition, one task row per partition.
func taskSnapshot(n int, received int64) view.Snapshot {
	s := liveSnapshot(n, received)
	s.Tasks = []view.TaskRow{}
	for i := range s.Channels {
		r := &s.Channels[i]
		r.Task = r.Partition
		if int(r.Task) == len(s.Tasks) {
			s.Tasks = append(s.Tasks, view.TaskRow{Task: r.Task})
		}
		s.Tasks[r.Task].Scope++
		s.Tasks[r.Task].Held += int64(r.Held)
	}
	for i := range s.Heads {
		s.Heads[i].Task = s.Channels[i*10].Task
	}
	return s
}

// logEnd is the log facts of a channel whose log ends at end.
func logEnd(end int64) *record.LogFacts {
	return &record.LogFacts{LastStable: end, HighWatermark: end}
}
