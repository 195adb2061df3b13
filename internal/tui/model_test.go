package tui

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestModelSnapshotAndView(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}, {80, 20}} {
		w, h := size[0], size[1]
		m := liveModel(w, h)
		view := m.View()
		checkFrame(t, view, w, h)
		if !strings.Contains(view, "waiting for the first snapshot") || !strings.Contains(view, "causalctl watch") {
			t.Fatalf("%dx%d before a snapshot:\n%s", w, h, view)
		}
		m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 5000)})
		view = m.View()
		checkFrame(t, view, w, h)
		for _, want := range []string{"● RUNNING", "broker-1:9092", "received 5 000", "held 9 on 3 ch", "in 123 457/s",
			"oldest hold 1m23s", "LOG END", "›▲ shipments/6", "recent events", "hold payments/0@1001"} {
			if !strings.Contains(view, want) {
				t.Fatalf("%dx%d: no %q in\n%s", w, h, want, view)
			}
		}
		// The detail pane shows at 34 lines and more.
		if got := strings.Contains(view, "── detail · shipments/6"); got != (h >= 34) {
			t.Fatalf("%dx%d: detail pane shown %v", w, h, got)
		}
	}
}

func TestModelResize(t *testing.T) {
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(100, 1000)})
	for _, size := range [][2]int{{80, 24}, {79, 24}, {80, 19}, {40, 10}, {1, 1}, {100, 30}, {250, 80}} {
		w, h := size[0], size[1]
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		view := m.View()
		checkFrame(t, view, w, h)
		small := w < MinWidth || h < MinHeight
		if got := strings.Contains(view, "terminal too small"); got != small && h >= 3 {
			t.Fatalf("%dx%d: too-small screen %v:\n%s", w, h, got, view)
		}
		if small && h >= 3 && !strings.Contains(view, "need at least 80×20") {
			t.Fatalf("%dx%d: too-small screen does not say what it needs:\n%s", w, h, view)
		}
	}
	// The cursor stays on screen when the terminal shrinks.
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	press(m, "end")
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	if !strings.Contains(m.View(), "›  orders/33") {
		t.Fatalf("cursor row not on screen after shrinking:\n%s", m.View())
	}
	// Keys still work on the too-small screen, and q quits.
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 10})
	if cmd := press(m, "q"); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit on the too-small screen")
	}
}

func TestModelCursorAndDetail(t *testing.T) {
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1)})
	// Held rows come first (shipments/6, payments/3, orders/0), then the
	// rest by channel.
	press(m, "j", "down", "down")
	if r := m.table.Selected(); r.Channel != "payments/0" {
		t.Fatalf("after j, down, down: %s", r.Channel)
	}
	press(m, "k", "k")
	if r := m.table.Selected(); r.Channel != "payments/3" {
		t.Fatalf("after k, k: %s", r.Channel)
	}
	// The cursor stays on its channel across snapshots.
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 2)})
	if r := m.table.Selected(); r.Channel != "payments/3" {
		t.Fatalf("after a snapshot: %s", r.Channel)
	}
	press(m, "end")
	if r := m.table.Selected(); r.Channel != "shipments/9" {
		t.Fatalf("end: %s", r.Channel)
	}
	press(m, "home", "pgdown")
	if m.table.selected != m.table.pageRows() {
		t.Fatalf("pgdown: row %d, page %d", m.table.selected, m.table.pageRows())
	}
	press(m, "home", "down") // row 1
	sel := m.table.Selected()
	if sel.Channel != "payments/3" || !sel.Blocked {
		t.Fatalf("row 1: %+v", sel)
	}
	view := m.View()
	for _, want := range []string{
		"── detail · payments/3",
		"head      ▲ @1011 held for 13.0s since received · written 15.0s ago",
		"clock     orders/10=1000,payments/11=2010",
		"blockers  payments/11 ≥ 2010, settled 1010  lagging (log end 2110)",
		"orders/0 ≥ 1001, settled 1000  held → root orders/0: waits payments/1 ≥ 2000, settled 1000",
		"chain     payments/3 → orders/0  (root)",
		"stamp     orders/0=41,payments/3=7",
	} {
		if !strings.Contains(view, want) {
			t.Fatalf("no %q in\n%s", want, view)
		}
	}
	// enter zooms into the detail, at any size; esc comes back.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "enter")
	view = m.View()
	checkFrame(t, view, 80, 24)
	if !strings.Contains(view, "blockers  payments/11") || strings.Contains(view, "recent events") {
		t.Fatalf("zoomed detail:\n%s", view)
	}
	press(m, "esc")
	if view = m.View(); !strings.Contains(view, "recent events") {
		t.Fatalf("esc did not leave the detail:\n%s", view)
	}
}

func TestModelFilter(t *testing.T) {
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1)})
	press(m, "/")
	typeText(m, "PAY")
	if got := tableNames(m); len(got) != 10 || !strings.HasPrefix(got[0], "payments/") {
		t.Fatalf("filter PAY: %v", got)
	}
	view := m.View()
	if !strings.Contains(view, "filter: PAY█") {
		t.Fatalf("prompt not shown:\n%s", view)
	}
	// Keys go to the prompt: q is typed, not quitting.
	typeText(m, "q")
	if got := tableNames(m); len(got) != 0 || !strings.Contains(m.View(), "no channel matches “PAYq”") {
		t.Fatalf("filter PAYq: %v\n%s", got, m.View())
	}
	if cmd := press(m, "ctrl+c"); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("ctrl+c in the prompt does not quit")
	}
	press(m, "backspace")
	typeText(m, "MENTS/1")
	press(m, "enter")
	if got := tableNames(m); !slices.Equal(got, []string{"payments/1"}) {
		t.Fatalf("filter PAYMENTS/1: %v", got)
	}
	// Applied: the filter survives snapshots and shows in the footer.
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 9)})
	if got := tableNames(m); !slices.Equal(got, []string{"payments/1"}) {
		t.Fatalf("after a snapshot: %v", got)
	}
	if view := m.View(); !strings.Contains(view, "filter “PAYMENTS/1”: 1 of 30") {
		t.Fatalf("footer:\n%s", view)
	}
	// / opens it again with the text; esc there clears it; esc in the
	// table clears an applied filter too.
	press(m, "/", "esc")
	if n := len(tableNames(m)); n != 30 {
		t.Fatalf("esc in the prompt left %d rows", n)
	}
	press(m, "/")
	typeText(m, "ship")
	press(m, "enter", "esc")
	if n := len(tableNames(m)); n != 30 {
		t.Fatalf("esc in the table left %d rows", n)
	}
	// A topic UUID matches too.
	press(m, "/")
	typeText(m, "000000000003")
	press(m, "enter")
	if got := tableNames(m); len(got) != 10 || !strings.HasPrefix(got[0], "shipments/") {
		t.Fatalf("filter by UUID: %v", got)
	}
}

func TestModelSort(t *testing.T) {
	m := liveModel(120, 40)
	s := liveSnapshot(12, 1)
	// Give the rows distinct depths and ages to sort by.
	for k := range s.Channels {
		s.Channels[k].Held = (k * 7) % 5
	}
	m.Update(SnapshotMsg{Snapshot: s})
	var natural []string // the snapshot's order, by channel
	for _, r := range s.Channels {
		natural = append(natural, r.Channel)
	}
	header := func() string { return strings.Split(m.View(), "\n")[4] }
	if !strings.Contains(header(), "▸CHANNEL") {
		t.Fatalf("column cursor not on CHANNEL: %q", header())
	}
	press(m, "right", "right", "right", ">") // SETTLED, RECEIVED, LOG END, HELD
	if !strings.Contains(header(), "▸HELD") {
		t.Fatalf("column cursor not on HELD: %q", header())
	}
	held := func() []int {
		var out []int
		for _, i := range m.table.view {
			out = append(out, m.table.rows[i].Held)
		}
		return out
	}
	press(m, "s")
	if got := held(); !slices.IsSortedFunc(got, func(a, b int) int { return b - a }) {
		t.Fatalf("s on HELD: %v, want descending", got)
	}
	if !strings.Contains(header(), "▸HELD↓") {
		t.Fatalf("header: %q", header())
	}
	// Ties keep the snapshot's (name) order.
	first := tableNames(m)
	if first[0] != "shipments/0" || first[1] != "payments/2" {
		t.Fatalf("descending ties: %v", first)
	}
	press(m, "s")
	if got := held(); !slices.IsSorted(got) || !strings.Contains(header(), "HELD↑") {
		t.Fatalf("s again: %v, %q", got, header())
	}
	// The sort holds across snapshots.
	m.Update(SnapshotMsg{Snapshot: s})
	if got := held(); !slices.IsSorted(got) {
		t.Fatalf("after a snapshot: %v", got)
	}
	// Back to the channel column: ascending is the natural order.
	press(m, "left", "left", "left", "<", "s")
	if got := tableNames(m); !slices.Equal(got, natural) {
		t.Fatalf("sorted by channel: %v, want %v", got, natural)
	}
	press(m, "s")
	rev := slices.Clone(natural)
	slices.Reverse(rev)
	if got := tableNames(m); !slices.Equal(got, rev) {
		t.Fatalf("channel reversed: %v", got)
	}
	// Offline, the column cursor skips LOG END.
	m2, _ := stepperModel(t, "basic.ndjson", 120, 40)
	press(m2, "right", "right", "right")
	if m2.table.colCur != colHeld {
		t.Fatalf("offline third column: %v", m2.table.colCur.title())
	}
	if strings.Contains(m2.View(), "LOG END") {
		t.Fatal("offline view shows LOG END")
	}
}

func TestModelPause(t *testing.T) {
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1000)})
	press(m, "p")
	view := m.View()
	if !strings.Contains(view, "⏸ VIEW PAUSED +0 snapshots") {
		t.Fatalf("no pause badge:\n%s", view)
	}
	for k := range 3 {
		m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 2000+int64(k)*1000)})
		if k == 0 && !strings.Contains(m.View(), "⏸ VIEW PAUSED +1 snapshot +1 000 records") {
			t.Fatalf("one snapshot behind:\n%s", m.View())
		}
	}
	view = m.View()
	if !strings.Contains(view, "⏸ VIEW PAUSED +3 snapshots +3 000 records") || !strings.Contains(view, "received 1 000") {
		t.Fatalf("paused view:\n%s", view)
	}
	// Keys still move the frozen view.
	press(m, "j")
	if m.table.Selected().Channel != "payments/3" {
		t.Fatal("cursor did not move while paused")
	}
	press(m, "p")
	view = m.View()
	if strings.Contains(view, "VIEW PAUSED") || !strings.Contains(view, "received 4 000") {
		t.Fatalf("resumed view:\n%s", view)
	}
	// A stepper's moves while paused count too.
	m2, _ := stepperModel(t, "basic.ndjson", 120, 40)
	press(m2, "p", "space", "space", "d")
	view = m2.View()
	if !strings.Contains(view, "+3 snapshots +3 records") || !strings.Contains(view, "item 0 of 9") {
		t.Fatalf("paused stepper:\n%s", view)
	}
	press(m2, "p")
	if view = m2.View(); !strings.Contains(view, "item 4 of 9") {
		t.Fatalf("resumed stepper:\n%s", view)
	}
}

// TestHelpListsEveryBinding checks that the help overlay, generated from
// the key map, names every binding of KeyMap — so adding a key without
// help, or help without a key, fails here.
func TestHelpListsEveryBinding(t *testing.T) {
	km := DefaultKeyMap()
	v := reflect.ValueOf(km)
	var all []key.Binding
	for i := range v.NumField() {
		if b, ok := v.Field(i).Interface().(key.Binding); ok {
			all = append(all, b)
		} else {
			t.Fatalf("KeyMap.%s is not a key.Binding", v.Type().Field(i).Name)
		}
	}
	var grouped []key.Binding
	for _, g := range km.Groups() {
		grouped = append(grouped, g.Bindings...)
	}
	if len(grouped) != len(all) {
		t.Fatalf("Groups has %d bindings, KeyMap %d", len(grouped), len(all))
	}
	for i, b := range all {
		if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
			t.Fatalf("KeyMap.%s has no keys or no help", v.Type().Field(i).Name)
		}
	}

	m, _ := stepperModel(t, "basic.ndjson", 120, 40)
	press(m, "?")
	view := m.View()
	checkFrame(t, view, 120, 40)
	for i, b := range all {
		if !strings.Contains(view, b.Help().Key) || !strings.Contains(view, b.Help().Desc) {
			t.Fatalf("help overlay lacks KeyMap.%s (%s %s):\n%s", v.Type().Field(i).Name, b.Help().Key, b.Help().Desc, view)
		}
	}
	// At 80×24 every binding still fits.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	view = m.View()
	checkFrame(t, view, 80, 24)
	for _, b := range all {
		if !strings.Contains(view, b.Help().Desc) {
			t.Fatalf("80x24 help lacks %q:\n%s", b.Help().Desc, view)
		}
	}
	press(m, "esc")
	if strings.Contains(m.View(), "step to next hold") && strings.Contains(m.View(), "Stepper") {
		t.Fatal("esc did not close the help")
	}

	// Without a controller the stepper keys are neither listed nor live.
	lm := liveModel(120, 40)
	lm.Update(SnapshotMsg{Snapshot: liveSnapshot(3, 1)})
	press(lm, "?")
	view = lm.View()
	if strings.Contains(view, "Stepper") || strings.Contains(view, "step one receive") || !strings.Contains(view, "pause the view") {
		t.Fatalf("live help:\n%s", view)
	}
	press(lm, "?", "g", "G", "space", "r")
	if strings.Contains(lm.View(), "item ") {
		t.Fatal("stepper keys acted without a controller")
	}
}

func TestModelStepperKeys(t *testing.T) {
	m, s := stepperModel(t, "basic.ndjson", 120, 40)
	at := func(item int64) {
		t.Helper()
		if s.Item() != item || m.snap.Position.Item != item {
			t.Fatalf("stepper at %d, view at %d; want %d", s.Item(), m.snap.Position.Item, item)
		}
	}
	at(0)
	press(m, "space")
	at(1)
	press(m, "n")
	at(2)
	press(m, "d")
	at(4)
	press(m, "h")
	at(6)
	press(m, "G")
	at(9)
	if !strings.Contains(m.View(), "■ FINISHED") {
		t.Fatalf("end:\n%s", m.View())
	}
	press(m, "g")
	at(0)
	press(m, ":")
	typeText(m, "payments/0@2")
	press(m, "enter")
	at(6)
	if view := m.View(); !strings.Contains(view, "at payments/0@2, item 6, line 7") {
		t.Fatalf("jump notice:\n%s", view)
	}
	press(m, ":")
	typeText(m, "nowhere@1")
	press(m, "enter")
	if view := m.View(); !strings.Contains(view, "want NAME/PARTITION") {
		t.Fatalf("jump error not shown:\n%s", view)
	}
	press(m, ":", "esc") // a cancelled jump does nothing
	at(6)

	press(m, "+", "+", "-")
	if s.Speed() != 20 {
		t.Fatalf("speed %v, want 20", s.Speed())
	}
	press(m, "g")
	cmd := press(m, "r")
	if !s.Running() || cmd == nil {
		t.Fatalf("r: running %v, cmd %v", s.Running(), cmd)
	}
	if !strings.Contains(m.View(), "● RUNNING") {
		t.Fatalf("running view:\n%s", m.View())
	}
	// Ticks advance it at its speed: the first tick counts one interval
	// (2 items at 20/s), later ones the time between them.
	t0 := time.Unix(1000, 0)
	_, cmd = m.Update(TickMsg{At: t0})
	at(2)
	if cmd == nil {
		t.Fatal("no next tick while running")
	}
	m.Update(TickMsg{At: t0.Add(150 * time.Millisecond)})
	at(5)
	// Past the end it stops, and the ticks with it.
	_, cmd = m.Update(TickMsg{At: t0.Add(time.Second)})
	at(9)
	if s.Running() || cmd != nil {
		t.Fatalf("after the end: running %v, cmd %v", s.Running(), cmd)
	}
	// r pauses a running stepper.
	press(m, "g", "r", "r")
	if s.Running() {
		t.Fatal("r did not pause")
	}
	if _, cmd := m.Update(TickMsg{At: t0}); cmd != nil {
		t.Fatal("a tick while paused asked for another")
	}
}

func TestModelFailClosed(t *testing.T) {
	m, _ := stepperModel(t, "faults.ndjson", 120, 40)
	press(m, "G")
	view := m.View()
	checkFrame(t, view, 120, 40)
	for _, want := range []string{
		"✗ FAILED CLOSED unknown-version",
		"failed closed at c/0 offset 1 (line 4): unknown-version: version 2, want 1",
		"FAILED CLOSED c/0@1 unknown-version · line 4",
		"›▲ a/0",
		"chain     a/0 → b/0  ↺ cycle",
	} {
		if !strings.Contains(view, want) {
			t.Fatalf("no %q in\n%s", want, view)
		}
	}
}

func TestModelFeed(t *testing.T) {
	ch := make(chan view.Snapshot, 1)
	done := make(chan struct{})
	m := NewModel(plainStyles(), Options{Snapshots: ch})
	m.done = done
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	cmd := m.Init()
	if cmd == nil {
		t.Fatal("Init gave no command for a feed")
	}
	ch <- liveSnapshot(3, 42)
	msg := cmd()
	if _, ok := msg.(SnapshotMsg); !ok {
		t.Fatalf("got %T", msg)
	}
	_, cmd = m.Update(msg)
	if m.snap.Received != 42 || cmd == nil {
		t.Fatalf("received %d, next cmd %v", m.snap.Received, cmd)
	}
	close(ch)
	msg = cmd()
	if _, ok := msg.(FeedClosedMsg); !ok {
		t.Fatalf("closed feed: got %T", msg)
	}
	m.Update(msg)
	if !strings.Contains(m.View(), "feed ended") {
		t.Fatalf("view after the feed:\n%s", m.View())
	}
	// The wait gives up when the program ends.
	ch2 := make(chan view.Snapshot)
	close(done)
	if msg := waitSnapshot(ch2, done)(); msg != nil {
		t.Fatalf("wait after done: %T", msg)
	}
}

func TestColor(t *testing.T) {
	// Without colour nothing but text reaches the terminal, and blocked
	// rows are still marked, by their glyph.
	m, _ := stepperModel(t, "basic.ndjson", 120, 40)
	press(m, "G")
	view := m.View()
	if strings.Contains(view, "\x1b[") {
		t.Fatal("escape sequence in a colourless view")
	}
	if !strings.Contains(view, "▲ payments/0") {
		t.Fatalf("blocked row without its glyph:\n%s", view)
	}
	// With colour, blocked rows get colour and keep the glyph.
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI)
	cm := NewModel(NewStyles(r, true), Options{Controller: StepperController(newStepper(t, "basic.ndjson"))})
	cm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	press(cm, "G")
	view = cm.View()
	if !strings.Contains(view, "\x1b[") || !strings.Contains(view, "▲") {
		t.Fatal("colour view without colour or glyph")
	}
}

// TestRun: cancelling the context ends the view with the context's
// error. What it draws and how a key ends it: TestRunOnTerminal.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan view.Snapshot)
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, pr, io.Discard, Options{Snapshots: ch}) }()
	ch <- liveSnapshot(3, 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end on cancel")
	}
}

// quitOnClose is a model that quits when the feed ends.
type quitOnClose struct{ *Model }

func (q quitOnClose) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := q.Model.Update(msg)
	if _, ok := msg.(FeedClosedMsg); ok {
		return q, tea.Quit
	}
	return q, cmd
}

func TestFeed(t *testing.T) {
	ch := make(chan view.Snapshot, 2)
	m := liveModel(80, 24)
	p := tea.NewProgram(quitOnClose{m}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignals())
	ch <- liveSnapshot(3, 7)
	close(ch)
	go Feed(context.Background(), p, ch)
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if m.snap.Received != 7 || !m.feedClosed {
		t.Fatalf("received %d, closed %v", m.snap.Received, m.feedClosed)
	}
}

// TestDisconnected: a live feed that lost its brokers says so, with how
// long it has been retrying, in the view's header (live tests the status
// line).
func TestDisconnected(t *testing.T) {
	s := liveSnapshot(30, 5000)
	s.State, s.RetryingFor = engine.StateDisconnected, 7300*time.Millisecond
	m := NewModel(plainStyles(), Options{})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(SnapshotMsg{Snapshot: s})
	if view := m.View(); !strings.Contains(view, "◌ disconnected (retrying, 7s)") || strings.Contains(view, "RUNNING") {
		t.Fatalf("the header does not say disconnected:\n%s", view)
	}
}

// TestModelTaskColumnAndFilter: per-task snapshots show a TASK column
// (one gate: none), and the filter's task:N word keeps one task's rows,
// alone or with words of the channel; a sort by TASK orders by task.
func TestModelTaskColumnAndFilter(t *testing.T) {
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1)})
	if strings.Contains(m.View(), " TASK ") {
		t.Fatalf("a TASK column for one gate:\n%s", m.View())
	}
	m.Update(SnapshotMsg{Snapshot: taskSnapshot(30, 1)})
	if !strings.Contains(m.View(), " TASK ") {
		t.Fatalf("no TASK column for per-task gates:\n%s", m.View())
	}
	press(m, "/")
	typeText(m, "task:3")
	press(m, "enter")
	if got := tableNames(m); !slices.Equal(got, []string{"payments/3", "orders/3", "shipments/3"}) {
		t.Fatalf("filter task:3: %v", got)
	}
	press(m, "/", "esc", "/")
	typeText(m, "SHIP task:4")
	press(m, "enter")
	if got := tableNames(m); !slices.Equal(got, []string{"shipments/4"}) {
		t.Fatalf("filter SHIP task:4: %v", got)
	}
	// A task no row is in: nothing; a word task:x that is no number is
	// matched as text.
	press(m, "/", "esc", "/")
	typeText(m, "task:99")
	press(m, "enter")
	if got := tableNames(m); len(got) != 0 {
		t.Fatalf("filter task:99: %v", got)
	}
	press(m, "esc")
	// s on TASK (the column after CHANNEL) sorts by task.
	press(m, "right", "s")
	got := tableNames(m)
	if len(got) != 30 || !strings.HasSuffix(got[0], "/0") || !strings.HasSuffix(got[29], "/9") {
		t.Fatalf("sorted by TASK: %v", got)
	}
}
