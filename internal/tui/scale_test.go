package tui

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkFrame is one frame of the live view at 120×40 — View alone,
// nothing changed — over 1 000, 10 000 and 100 000 channels, unfiltered
// and filtered: the table draws only the rows on screen, so a frame costs
// the same at every size. (BenchmarkModelSnapshot is the per-snapshot
// cost, which grows with the rows: filtering and sorting them.)
func BenchmarkFrame(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, filter := range []string{"", "pay"} {
			b.Run(fmt.Sprintf("rows=%d/filter=%q", n, filter), func(b *testing.B) {
				m := liveModel(120, 40)
				m.Update(SnapshotMsg{liveSnapshot(n, 1_000_000)})
				if filter != "" {
					press(m, "/")
					typeText(m, filter)
					press(m, "enter")
				}
				press(m, "down", "down", "down")
				if v := m.View(); strings.Count(v, "\n") > 40 {
					b.Fatalf("a frame of %d lines at 40", strings.Count(v, "\n")+1)
				}
				b.ReportAllocs()
				for b.Loop() {
					_ = m.View()
				}
			})
		}
	}
}
