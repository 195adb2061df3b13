package replay

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// chunky yields the items of a capture in its own order.
type chunky struct {
	items []record.Item
	i     int
}

func (c *chunky) Next() (*record.Item, error) {
	if c.i == len(c.items) {
		return nil, io.EOF
	}
	c.i++
	return &c.items[c.i-1], nil
}

// perChannel is a ChannelSource over a capture's items. It checks that
// the merger takes an item before it asks the channel for the next (it
// overwrites what it handed out, as a broker range reuses its storage),
// and counts what it was asked.
type perChannel struct {
	queues [][]record.Item
	next   []int
	out    []record.Item
	asks   int
}

func newPerChannel(items []record.Item, chans []clock.Channel, names *clock.Names) *perChannel {
	p := &perChannel{queues: make([][]record.Item, len(chans)), next: make([]int, len(chans)), out: make([]record.Item, len(chans))}
	for _, it := range items {
		ch, _ := engine.ResolveChannel(names, &it)
		i := slices.Index(chans, ch)
		p.queues[i] = append(p.queues[i], it)
	}
	return p
}

func (p *perChannel) NextOf(i int) (*record.Item, error) {
	p.asks++
	p.out[i] = record.Item{Offset: -99} // what was handed out before is void now
	if p.next[i] == len(p.queues[i]) {
		return nil, io.EOF
	}
	p.out[i] = p.queues[i][p.next[i]]
	p.next[i]++
	return &p.out[i], nil
}

// TestMergeMatchesReorder: the timestamp merge of a source read channel by
// channel gives the order Reorder gives, asks each channel for one item at
// a time (so it buffers nothing: the count of asks is the items and one
// end per channel), and never returns an item its channel has reused.
func TestMergeMatchesReorder(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(conformanceDir(t), "*.ndjson"))
	files = append(files, testutil.Testdata("captures", "basic.ndjson"), testutil.Testdata("captures", "faults.ndjson"))
	for _, path := range files {
		names := &clock.Names{}
		items, chans := readCapture(t, path, names)
		want := drainOrder(t, mustReorder(t, &chunky{items: items}, names))
		// The merger ties on channel index: give it the order Reorder saw
		// first appearances in.
		src := newPerChannel(items, chans, names)
		got := drainOrder(t, MergeByTimestamp(src, len(chans)))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: merge order differs from Reorder's:\n got  %v\n want %v", filepath.Base(path), got, want)
		}
		if src.asks != len(items)+len(chans) {
			t.Errorf("%s: %d asks for %d items on %d channels", filepath.Base(path), src.asks, len(items), len(chans))
		}
	}
}

// TestMergeRandomTimestamps: over random channels with random (and
// missing, and backward) timestamps, the merge and Reorder agree.
func TestMergeRandomTimestamps(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 9))
		names := &clock.Names{}
		n := 1 + rng.IntN(5)
		var chans []clock.Channel
		for i := range n {
			chans = append(chans, clock.Channel{Topic: clock.TopicID{byte(i + 1)}, Partition: int32(rng.IntN(3))})
		}
		var items []record.Item
		offsets := make([]int64, n)
		for range rng.IntN(40) {
			i := rng.IntN(n)
			it := record.Item{Kind: record.KindRecord, TopicID: chans[i].Topic, Partition: chans[i].Partition, Offset: offsets[i]}
			offsets[i]++
			if rng.IntN(5) == 0 {
				it.Kind = record.KindPosition
			} else if rng.IntN(4) > 0 {
				it.Timestamp, it.HasTimestamp = int64(rng.IntN(20)), true
			}
			items = append(items, it)
		}
		// Reorder names channels by first appearance: the merger gets the same order.
		var seen []clock.Channel
		for _, it := range items {
			if ch := (clock.Channel{Topic: it.TopicID, Partition: it.Partition}); !slices.Contains(seen, ch) {
				seen = append(seen, ch)
			}
		}
		want := drainOrder(t, mustReorder(t, &chunky{items: items}, names))
		got := drainOrder(t, MergeByTimestamp(newPerChannel(items, seen, names), len(seen)))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, want)
		}
	}
}

func readCapture(t *testing.T, path string, names *clock.Names) ([]record.Item, []clock.Channel) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := capture.NewReader(f)
	var items []record.Item
	var chans []clock.Channel
	seen := map[clock.Channel]bool{}
	for {
		it, err := rd.Next()
		if err == io.EOF {
			return items, chans
		}
		if err != nil {
			t.Fatal(err)
		}
		ch, err := engine.ResolveChannel(names, it)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[ch] {
			seen[ch] = true
			chans = append(chans, ch)
		}
		items = append(items, detach(it))
	}
}

func mustReorder(t *testing.T, src engine.Source, names *clock.Names) engine.Source {
	t.Helper()
	s, err := Reorder(src, Interleave{Mode: Timestamp}, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func drainOrder(t *testing.T, src engine.Source) []string {
	t.Helper()
	var out []string
	for {
		it, err := src.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v/%d@%d:%v", it.TopicID, it.Partition, it.Offset, it.Kind))
	}
}

// TestTimestampOrderIsAStableSort: with every record stamped and
// timestamps rising on each channel, both timestamp merges give the items
// sorted by timestamp, ties by channel order, each channel in its own order
// — checked against a sort, over enough channels for a deep heap.
func TestTimestampOrderIsAStableSort(t *testing.T) {
	for _, n := range []int{1, 2, 3, 37, 300} {
		items, chans, names := benchItems(n, 40)
		sorted := slices.Clone(items)
		index := func(it record.Item) int {
			return slices.Index(chans, clock.Channel{Topic: it.TopicID, Partition: it.Partition})
		}
		slices.SortStableFunc(sorted, func(a, b record.Item) int {
			if a.Timestamp != b.Timestamp {
				return cmp.Compare(a.Timestamp, b.Timestamp)
			}
			return cmp.Compare(index(a), index(b))
		})
		want := drainOrder(t, &chunky{items: sorted})
		if got := drainOrder(t, mustReorder(t, &chunky{items: slices.Clone(items)}, names)); !slices.Equal(got, want) {
			t.Errorf("%d channels: Reorder is not the sorted order", n)
		}
		if got := drainOrder(t, MergeByTimestamp(newPerChannel(items, chans, names), n)); !slices.Equal(got, want) {
			t.Errorf("%d channels: MergeByTimestamp is not the sorted order", n)
		}
	}
}
