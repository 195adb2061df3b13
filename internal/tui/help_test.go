package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// helpText is the whole help overlay of m, scrolled through to its end.
func helpText(m *Model) string {
	var b strings.Builder
	for range 10 {
		b.WriteString(m.View())
		press(m, "pgdown")
	}
	return b.String()
}

// TestHelpLegend: help (?) explains every column the view shows and the
// marks, live and in a replay, and scrolls to them on a small terminal.
func TestHelpLegend(t *testing.T) {
	lm := liveModel(80, 24)
	lm.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1)})
	sm, _ := stepperModel(t, "basic.ndjson", 80, 24)
	for _, c := range []struct {
		name string
		m    *Model
		cols []column
	}{
		{"live", lm, []column{colChannel, colSettled, colReceived, colLogEnd, colHeld, colHead, colAge, colWritten, colCause, colWaits}},
		{"replay", sm, []column{colChannel, colSettled, colReceived, colHeld, colHead, colAge, colCause, colWaits}},
	} {
		press(c.m, "?")
		first := c.m.View()
		checkFrame(t, first, 80, 24)
		if !strings.Contains(first, "more lines") {
			t.Errorf("%s: a help taller than the screen does not say there is more:\n%s", c.name, first)
		}
		text := helpText(c.m)
		for _, col := range c.cols {
			if !strings.Contains(text, fit(col.title(), 10)+" "+wrap(col.legend(c.m.snap.Offline), 80-11, 0)[0]) {
				t.Errorf("%s: help has no legend line for %s:\n%s", c.name, col.title(), text)
			}
		}
		if strings.Contains(text, "LOG END    ") != (c.name == "live") {
			t.Errorf("%s: LOG END legend shown %v", c.name, !(c.name == "live"))
		}
		for _, want := range []string{"? unknown · start nothing settled or received yet · - nothing", "by cause"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: help lacks %q", c.name, want)
			}
		}
		// HELD FOR says what it measures from, in each.
		want := map[string]string{"live": "since this view received it", "replay": "since its record's timestamp"}[c.name]
		if !strings.Contains(text, want) {
			t.Errorf("%s: HELD FOR legend lacks %q", c.name, want)
		}
		press(c.m, "esc")
		if strings.Contains(c.m.View(), "Columns") {
			t.Errorf("%s: esc did not close the help", c.name)
		}
		// Help opens at its top again.
		press(c.m, "?")
		if !strings.Contains(c.m.View(), "Keys") {
			t.Errorf("%s: help reopened scrolled:\n%s", c.name, c.m.View())
		}
		press(c.m, "?")
	}
}

// TestHelpIntro: the caller's intro (the demo's commands, hidden by the
// alternate screen) opens the help.
func TestHelpIntro(t *testing.T) {
	intro := []string{"Try, in another terminal while it runs:", "  causalctl topics --brokers 127.0.0.1:9092", "  kcat -b 127.0.0.1:9092 -L"}
	m := NewModel(plainStyles(), Options{Title: "causalctl demo", Intro: intro})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(6, 1)})
	if strings.Contains(m.View(), intro[1]) {
		t.Fatal("the intro shows outside help")
	}
	press(m, "?")
	view := m.View()
	for _, l := range intro {
		if !strings.Contains(view, l) {
			t.Errorf("help lacks %q:\n%s", l, view)
		}
	}
	if strings.Index(view, intro[0]) > strings.Index(view, "Keys") {
		t.Errorf("the intro is not at the top of help:\n%s", view)
	}
}

// TestDetailBackHint: the full detail (enter) says how to get back, and
// both esc and backspace do.
func TestDetailBackHint(t *testing.T) {
	for _, back := range []string{"esc", "backspace"} {
		m := liveModel(80, 24)
		m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1)})
		footer := func() string { l := strings.Split(m.View(), "\n"); return l[len(l)-1] }
		if strings.Contains(footer(), "back to the table") {
			t.Fatalf("the table's footer offers a way back: %q", footer())
		}
		press(m, "enter")
		if !strings.HasPrefix(footer(), "esc/bksp back to the table") {
			t.Fatalf("detail footer: %q", footer())
		}
		press(m, back)
		if m.zoom || !strings.Contains(m.View(), "recent events") {
			t.Fatalf("%s did not go back to the table:\n%s", back, m.View())
		}
		press(m, "?")
		if !strings.HasPrefix(footer(), "esc/bksp back to the table") {
			t.Fatalf("help footer: %q", footer())
		}
		press(m, back)
		if m.showHelp {
			t.Fatalf("%s did not close help", back)
		}
	}
	// In the filter prompt backspace edits the text, not the view.
	m := liveModel(80, 24)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(30, 1)})
	press(m, "/")
	typeText(m, "pay")
	press(m, "backspace")
	if m.table.filter != "pa" || !m.prompt.Active() {
		t.Fatalf("backspace in the prompt: filter %q, prompt %v", m.table.filter, m.prompt.Active())
	}
}
