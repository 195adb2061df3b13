package replay

import (
	"errors"
	"runtime"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// memItems returns n records over three channels, each with a clock header
// of one entry, as a capture of that pipeline would have.
func memItems(n int) ([]record.Item, *clock.Names) {
	names := &clock.Names{}
	ids := []clock.TopicID{{1}, {2}, {3}}
	for i, name := range []string{"a", "b", "c"} {
		_ = names.Add(name, ids[i])
	}
	items := make([]record.Item, n)
	for i := range items {
		ch := clock.Channel{Topic: ids[(i+1)%3], Partition: 0}
		value := clock.Encode(clock.MustNew(clock.Entry{Channel: ch, Position: int64(i)}))
		items[i] = record.Item{Kind: record.KindRecord, TopicID: ids[i%3], Offset: int64(i / 3), Line: int64(i + 1),
			Timestamp: int64(i), HasTimestamp: true, Headers: []clock.Header{{Key: clock.HeaderCauses, Value: value}}}
	}
	return items, names
}

// TestReorderMemoryLimit: the limit refuses exactly the first item whose
// cost, summed with those before it (the naive reference), passes it.
func TestReorderMemoryLimit(t *testing.T) {
	items, names := memItems(300)
	var prefix []int64 // prefix[i]: the cost of items[:i+1]
	var sum int64
	for i := range items {
		sum += ItemCost(&items[i])
		prefix = append(prefix, sum)
	}
	for _, mode := range []Mode{Timestamp, ByChannel, RoundRobin, Random} {
		for _, k := range []int{0, 1, 57, 150, 299} {
			limit := prefix[k] // fits items[:k+1], not one more
			src, err := Reorder(&chunky{items: items}, Interleave{Mode: mode, Seed: 1}, names, limit)
			var me *MemoryLimitError
			if k == len(items)-1 {
				if err != nil || src == nil {
					t.Fatalf("%v, limit %d: every item fits, got %v", mode, limit, err)
				}
				continue
			}
			if !errors.As(err, &me) || me.Items != int64(k+1) || me.Line != int64(k+2) || me.Limit != limit {
				t.Fatalf("%v, limit %d: err %v, want a MemoryLimitError at line %d after %d items", mode, limit, err, k+2, k+1)
			}
		}
	}
	// A deliberately broken bound (off by one item) is caught by the
	// reference: one byte less than the prefix refuses the last item.
	if _, err := Reorder(&chunky{items: items}, Interleave{Mode: ByChannel}, names, prefix[len(prefix)-1]-1); err == nil {
		t.Fatal("a limit one byte short of the total let everything through")
	}
	// File streams: no limit applies.
	if _, err := Reorder(&chunky{items: items}, Interleave{Mode: File}, names, 1); err != nil {
		t.Fatalf("file: %v", err)
	}
}

// TestItemCostIsAnUpperBound: what Reorder really holds on the heap (after
// a collection) is no more than the documented cost of its items, so the
// limit it enforces is a true bound.
func TestItemCostIsAnUpperBound(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates some 30 MB")
	}
	const n = 100_000
	items, names := memItems(n)
	var want int64
	for i := range items {
		want += ItemCost(&items[i])
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	src, err := Reorder(&chunky{items: items}, Interleave{Mode: ByChannel}, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(src)
	runtime.KeepAlive(items)
	t.Logf("%d items: %d bytes held (%d a record), %d estimated (%d a record)", n, held, held/n, want, want/n)
	if held > want {
		t.Fatalf("Reorder holds %d bytes for %d items, more than the %d ItemCost says", held, n, want)
	}
}
