package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
)

// rowLine returns the table line of channel name in view.
func rowLine(t *testing.T, view, name string) string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ›▲✗"), name+" ") {
			return l
		}
	}
	t.Fatalf("no row %s in\n%s", name, view)
	return ""
}

// TestCauseColumnAndCounts: over real replays, every blocked row's CAUSE is
// the cause inspect gave its head (HeadDetail.MostTelling) — for a head
// held behind another, the cause at the root of its chain, not "held" —
// and the rule under the header counts the heads by their own cause, as
// inspect counts them for the status line and the metrics.
func TestCauseColumnAndCounts(t *testing.T) {
	for _, c := range []struct {
		capture, rule string
		want          map[string]inspect.Cause
	}{
		{"basic.ndjson", "── heads by cause: beyond-input 1 · held 1 ──",
			map[string]inspect.Cause{"payments/0": inspect.CauseBeyondInput, "shipments/0": inspect.CauseBeyondInput}},
		{"faults.ndjson", "── heads by cause: cycle 2 ──",
			map[string]inspect.Cause{"a/0": inspect.CauseCycle, "b/0": inspect.CauseCycle}},
	} {
		m, _ := stepperModel(t, c.capture, 120, 40)
		press(m, "G")
		view := m.View()
		checkFrame(t, view, 120, 40)
		if !strings.Contains(strings.Split(view, "\n")[m.header.Height()], c.rule) {
			t.Errorf("%s: rule under the header is not %q:\n%s", c.capture, c.rule, view)
		}
		var counts []string
		for _, cc := range m.snap.CauseCounts() {
			counts = append(counts, cc.Cause.String()+" "+count(int64(cc.N)))
		}
		if want := "heads by cause: " + strings.Join(counts, " · "); !strings.Contains(view, want) {
			t.Errorf("%s: the rule does not say inspect's counts %q", c.capture, want)
		}
		blocked := 0
		for _, r := range m.snap.Channels {
			if !r.Blocked {
				continue
			}
			blocked++
			root := m.snap.Heads[r.Head].MostTelling()
			if root != c.want[r.Channel] {
				t.Fatalf("%s: inspect's root cause of %s is %s, the test expects %s", c.capture, r.Channel, root, c.want[r.Channel])
			}
			if l := rowLine(t, view, r.Channel); !strings.Contains(l, " "+root.String()+" ") {
				t.Errorf("%s: row %s does not show its root cause %s: %q", c.capture, r.Channel, root, l)
			}
		}
		if blocked != len(c.want) {
			t.Fatalf("%s: %d blocked rows, want %d", c.capture, blocked, len(c.want))
		}
		if !strings.Contains(view, "CAUSE") {
			t.Errorf("%s: no CAUSE column:\n%s", c.capture, view)
		}
	}

	// The column survives the narrowest terminal, WAITS ON making room.
	m := liveModel(80, 24)
	m.Update(SnapshotMsg{Snapshot: liveSnapshot(60, 1)})
	view := m.View()
	if l := rowLine(t, view, "shipments/16"); !strings.Contains(l, "beyond-log-end") {
		t.Errorf("80x24: shipments/16, held behind shipments/6, does not show the root cause: %q", l)
	}
	if !strings.Contains(view, "heads by cause: beyond-log-end 1 · lagging 4 · held 1") {
		t.Errorf("80x24: counts:\n%s", view)
	}
	// A head whose own cause says more than its root's shows its own: its
	// claim lies beyond the log end of a channel that is itself held.
	s := liveSnapshot(60, 1)
	h := &s.Heads[s.Channels[30].Head] // orders/10, lagging
	h.Cause, h.RootCause = inspect.CauseBeyondLogEnd, inspect.CauseLagging
	m.Update(SnapshotMsg{Snapshot: s})
	if l := rowLine(t, m.View(), "orders/10"); !strings.Contains(l, "beyond-log-end") {
		t.Errorf("orders/10, beyond the log end behind a lagging root, shows %q", l)
	}

	// Nothing held, no counts.
	s = liveSnapshot(3, 1)
	s.Channels[0].Blocked, s.Channels[0].Held, s.Channels[0].Head, s.Heads, s.HeldChannels = false, 0, -1, nil, 0
	m.Update(SnapshotMsg{Snapshot: s})
	if strings.Contains(m.View(), "by cause") {
		t.Errorf("counts with nothing held:\n%s", m.View())
	}
}

// TestDefaultOrder: blocked rows come first, the oldest hold first and
// heads of unknown age after those of known age, then the rest by
// channel; sorting by a column still works, and esc goes back.
func TestDefaultOrder(t *testing.T) {
	s := liveSnapshot(12, 1) // held: orders/0 (3s), payments/3 (13s)
	age := func(d time.Duration) inspect.Age { return inspect.Age{D: d, Known: true} }
	hold := func(k int, a inspect.Age) {
		r := &s.Channels[k]
		r.Blocked, r.Held, r.HeadOffset, r.HeadAge, r.Head = true, 1, r.Settled+1, a, -1
	}
	hold(4, age(time.Hour))      // payments/1, the oldest
	hold(7, inspect.Age{})       // payments/2, age unknown
	hold(11, age(5*time.Second)) // shipments/3
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{Snapshot: s})
	want := []string{"payments/1", "payments/3", "shipments/3", "orders/0", "payments/2",
		"payments/0", "shipments/0", "orders/1", "shipments/1", "orders/2", "shipments/2", "orders/3"}
	if got := tableNames(m); !slices.Equal(got, want) {
		t.Fatalf("default order\n got %v\nwant %v", got, want)
	}
	if r := m.table.Selected(); r.Channel != "payments/1" {
		t.Fatalf("the cursor starts on %s, not the oldest hold", r.Channel)
	}
	// The column keys still sort: HELD FOR, ascending on a second s.
	press(m, "right", "right", "right", "right", "right", "right", "s", "s")
	if m.table.sortCol != colAge || m.table.desc {
		t.Fatalf("sorted by %s desc %v", m.table.sortCol.title(), m.table.desc)
	}
	if got := tableNames(m); got[len(got)-1] != "payments/1" {
		t.Fatalf("HELD FOR ascending: %v", got)
	}
	// CAUSE sorts the most telling first, rows holding nothing last.
	press(m, "right", "s") // WRITTEN is left out at 120 cells
	if m.table.sortCol != colCause {
		t.Fatalf("sorted by %s", m.table.sortCol.title())
	}
	if got := tableNames(m); got[0] != "orders/0" || got[1] != "payments/3" || got[len(got)-1] != "orders/3" {
		t.Fatalf("by cause: %v", got)
	}
	// esc leaves the column's order for the default one.
	press(m, "esc")
	if got := tableNames(m); !slices.Equal(got, want) || m.table.Sorted() {
		t.Fatalf("after esc: %v", got)
	}
}

// TestMarks: an unknown position or age, a channel at its start and a
// cell of a channel holding nothing read differently.
func TestMarks(t *testing.T) {
	s := liveSnapshot(6, 1)                                    // orders/0 held
	s.Channels[1].Settled, s.Channels[1].ReceivedUpTo = -1, -1 // payments/0: nothing yet
	s.Channels[2].LogEnd = -1                                  // shipments/0: log end unknown
	s.Channels[0].HeadAge = inspect.Age{}                      // orders/0: held, age unknown
	s.Channels[0].HeadWritten = inspect.Age{}
	m := liveModel(200, 40) // wide enough for WRITTEN
	m.Update(SnapshotMsg{Snapshot: s})
	view := m.View()
	if !strings.Contains(view, "WRITTEN") || !strings.Contains(view, "HELD FOR") {
		t.Fatalf("no HELD FOR and WRITTEN columns at 200 cells:\n%s", view)
	}
	cells := func(name string) []string { return strings.Fields(strings.TrimLeft(rowLine(t, view, name), " ›▲")) }
	// CHANNEL SETTLED RECEIVED LOG END HELD HEAD HELD FOR WRITTEN [CAUSE WAITS…]
	for _, c := range []struct {
		name string
		want []string
	}{
		{"payments/0", []string{"payments/0", "start", "start", "1201", "0", "-", "-", "-"}},
		{"shipments/0", []string{"shipments/0", "1002", "1002", "?", "0", "-", "-", "-"}},
		{"orders/0", []string{"orders/0", "1000", "1000", "1200", "3", "1001", "?", "?", "lagging"}},
	} {
		if got := cells(c.name); !slices.Equal(got[:len(c.want)], c.want) {
			t.Errorf("row %s: %v, want %v", c.name, got, c.want)
		}
	}
	// The detail says so in words.
	press(m, "down") // payments/0, after the held orders/0
	if view = m.View(); !strings.Contains(view, "settled start · nothing received yet") {
		t.Errorf("detail of a channel at its start:\n%s", view)
	}
}
