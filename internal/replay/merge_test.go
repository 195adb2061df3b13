package replay

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
)

// chunky yields the items of a capture in a random interleaving of its
// channels (each keeping its order), as a broker's fetches would.
type chunky struct {
	items []capture.Item
	i     int
}

func (c *chunky) Next() (*capture.Item, error) {
	if c.i == len(c.items) {
		return nil, io.EOF
	}
	c.i++
	return &c.items[c.i-1], nil
}

// TestMergeMatchesReorder: the streaming timestamp merge gives the order
// Reorder gives, whatever order the channels' items arrive in.
func TestMergeMatchesReorder(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(conformanceDir, "*.ndjson"))
	files = append(files, "../cli/replay/testdata/basic.ndjson", "../cli/replay/testdata/faults.ndjson")
	for _, path := range files {
		names := &clock.Names{}
		items, chans := readCapture(t, path, names)
		want := drainOrder(t, mustReorder(t, &chunky{items: items}, names))
		for seed := range uint64(5) {
			shuffled := shuffleChannels(items, names, rand.New(rand.NewPCG(seed, 1)))
			// The merger ties on the order of chans: give it the order
			// Reorder saw first appearances in.
			got := drainOrder(t, MergeByTimestamp(&chunky{items: shuffled}, chans, nil, names))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s seed %d: merge order differs from Reorder's", filepath.Base(path), seed)
			}
		}
	}
}

func readCapture(t *testing.T, path string, names *clock.Names) ([]capture.Item, []clock.Channel) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := capture.NewReader(f)
	var items []capture.Item
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
		ch, err := ResolveChannel(names, it)
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

func mustReorder(t *testing.T, src Source, names *clock.Names) Source {
	t.Helper()
	s, err := Reorder(src, Interleave{Mode: Timestamp}, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func drainOrder(t *testing.T, src Source) []string {
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

// shuffleChannels interleaves the channels' items at random, each channel
// keeping its own order.
func shuffleChannels(items []capture.Item, names *clock.Names, rng *rand.Rand) []capture.Item {
	per := map[clock.Channel][]capture.Item{}
	var order []clock.Channel
	for _, it := range items {
		ch, _ := ResolveChannel(names, &it)
		if _, ok := per[ch]; !ok {
			order = append(order, ch)
		}
		per[ch] = append(per[ch], it)
	}
	var out []capture.Item
	for len(out) < len(items) {
		ch := order[rng.IntN(len(order))]
		if q := per[ch]; len(q) > 0 {
			out = append(out, q[0])
			per[ch] = q[1:]
		}
	}
	return out
}
