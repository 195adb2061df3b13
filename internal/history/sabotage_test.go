package history

import (
	"path/filepath"
	"slices"
	"testing"
)

// sabotages rewrite one unit's trace at position i as a broken Parsley
// would have delivered, and say where the first divergence must be named:
// the kinds parsley-jepsen's exports name, on the traces of exports that
// replay exactly.
var sabotages = []struct {
	name string
	// apply returns the sabotaged trace and the expected position of the
	// first divergence; false when the trace has no room for it at i.
	apply func(tr []Traced, i int) ([]Traced, int, bool)
}{
	{"SILENT_DROP", func(tr []Traced, i int) ([]Traced, int, bool) {
		return slices.Delete(slices.Clone(tr), i, i+1), i, true
	}},
	{"REDELIVER", func(tr []Traced, i int) ([]Traced, int, bool) {
		return slices.Insert(slices.Clone(tr), i+1, tr[i]), i + 1, true
	}},
	{"NO_FIFO", func(tr []Traced, i int) ([]Traced, int, bool) {
		// The next delivery of the same channel comes first.
		for j := i + 1; j < len(tr); j++ {
			if tr[j].Channel == tr[i].Channel {
				out := slices.Clone(tr)
				out[i], out[j] = out[j], out[i]
				return out, i, true
			}
		}
		return nil, 0, false
	}},
	{"IGNORE_CAUSES", func(tr []Traced, i int) ([]Traced, int, bool) {
		// A later delivery of another channel jumps ahead of this one.
		for j := i + 1; j < len(tr); j++ {
			if tr[j].Channel != tr[i].Channel {
				out := slices.Clone(tr)
				moved := out[j]
				out = slices.Delete(out, j, j+1)
				return slices.Insert(out, i, moved), i, true
			}
		}
		return nil, 0, false
	}},
}

// TestSabotagedTracesDivergeWhereTheyActed: every export the project keeps
// that replays exactly — the directed scenarios our generator writes and the
// honest public ones — sabotaged at every delivery of every unit, in each
// way, diverges in that unit at the sabotaged position and nowhere else.
func TestSabotagedTracesDivergeWhereTheyActed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "histories", "*.edn"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "testdata", "parsley-exports", "honest-seed-1.edn"),
		filepath.Join("..", "..", "testdata", "parsley-exports", "honest-dead-holds-scenario.edn"))
	cases := 0
	for _, f := range files {
		ex, vs := judgeFile(t, f, Options{})
		for _, v := range vs {
			if v.Divergence != nil {
				t.Fatalf("%s: %s diverges before any sabotage: %+v", f, v.Unit, *v.Divergence)
			}
		}
		for _, u := range ex.Units {
			honest := ex.Trace[u]
			for i := range honest {
				for _, sb := range sabotages {
					tr, want, ok := sb.apply(honest, i)
					if !ok {
						continue
					}
					cases++
					ex.Trace[u] = tr
					got, err := Judge(ex, Options{})
					ex.Trace[u] = honest
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range got {
						switch {
						case v.Unit != u && v.Divergence != nil:
							t.Errorf("%s %s at %s/%d: untouched unit %s diverges", filepath.Base(f), sb.name, u, i, v.Unit)
						case v.Unit == u && (v.Divergence == nil || v.Divergence.Position != want):
							t.Errorf("%s %s at %s delivery %d: divergence %+v, want at position %d", filepath.Base(f), sb.name, u, i, v.Divergence, want)
						}
					}
				}
			}
		}
	}
	if cases < 100 {
		t.Errorf("only %d sabotaged traces: the exports kept have too few deliveries to test this", cases)
	}
}
