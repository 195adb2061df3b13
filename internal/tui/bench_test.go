package tui

import (
	"testing"
)

// BenchmarkModelSnapshot is the view's cost per snapshot at 120×40: Update
// with a SnapshotMsg of 10 000 channels (1 000 held, each with its head's
// detail) and View. A live feed sends at most ten snapshots a second
// whatever the record rate, so this is what the view spends per tenth of
// a second. "sorted" keeps the table sorted by held depth, "filtered"
// keeps a filter, both redone on every snapshot.
func BenchmarkModelSnapshot(b *testing.B) {
	snaps := [2]SnapshotMsg{{liveSnapshot(10000, 1_000_000)}, {liveSnapshot(10000, 1_100_000)}}
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"plain", nil},
		{"sorted", []string{"right", "right", "right", "right", "s"}},
		{"filtered", []string{"/", "p", "a", "y", "enter"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := liveModel(120, 40)
			m.Update(snaps[0])
			press(m, c.keys...)
			press(m, "down", "down", "down", "down", "down", "down", "down", "down", "down", "down")
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				k++
				m.Update(snaps[k&1])
				_ = m.View()
			}
		})
	}
}

// BenchmarkModelKey is the cost of a cursor key and the redraw with
// 10 000 channels on screen: what the view spends per key press.
func BenchmarkModelKey(b *testing.B) {
	m := liveModel(120, 40)
	m.Update(SnapshotMsg{liveSnapshot(10000, 1_000_000)})
	down, up := keyMsg("down"), keyMsg("up")
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		k++
		if k&1 == 0 {
			m.Update(down)
		} else {
			m.Update(up)
		}
		_ = m.View()
	}
}
