package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"
)

// TestHostileSnapshot: a snapshot whose every string — channel and topic
// names, heads, blockers, producers, headers, events, errors, the title —
// begins with a hostile name is drawn with none of it raw: the table, a
// row's detail, the task view and the failed-closed state. The strings
// are what a broker, a store or a file handed the live view.
func TestHostileSnapshot(t *testing.T) {
	faults := newStepper(t, "faults.ndjson")
	faults.JumpEnd()
	for name, snap := range map[string]view.Snapshot{"live": liveSnapshot(6, 1234), "tasks": taskSnapshot(6, 1234), "faults": faults.Snapshot()} {
		for _, h := range testutil.Hostile {
			poisoned := escape.Strings(snap, func(s string) string { return h + s })
			var m tea.Model = NewModel(plainStyles(), Options{Title: h})
			var frames []string
			for _, msg := range []tea.Msg{tea.WindowSizeMsg{Width: 140, Height: 40}, SnapshotMsg{Snapshot: poisoned}, keyMsg("enter"), keyMsg("esc"), keyMsg("t"), keyMsg("enter")} {
				m, _ = m.Update(msg)
				frames = append(frames, m.View())
			}
			all := strings.Join(frames, "\n")
			if !strings.Contains(all, "EVIL") {
				t.Fatalf("%s: no frame shows the snapshot's names: the check would pass vacuously:\n%s", name, all)
			}
			testutil.NoRawHostile(t, name+" "+escape.Text(h), all)
		}
	}
}
