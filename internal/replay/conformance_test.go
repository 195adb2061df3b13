package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// conformanceDir holds the captures of a Parsley cluster run and the
// deliveries Parsley made, in ../shared beside the checkout.
func conformanceDir(t testing.TB) string {
	return testutil.Shared(t, "conformance", "parsley-cluster")
}

type unit struct {
	Unit      string           `json:"unit"`
	Scope     []string         `json:"scope"`
	Start     map[string]int64 `json:"start"`
	Delivered [][2]any         `json:"delivered_by_parsley"`
}

type delivery struct {
	ch  clock.Channel
	off int64
}

var interleavings = []string{"file", "timestamp", "channel", "round-robin", "random:1", "random:2", "random:3", "random:42", "random:1000"}

// TestParsleyConformance replays every captured Parsley task in every
// interleaving and holds the result against the deliveries Parsley made:
// the same set, nothing held, per-channel FIFO, every claim honoured, and in
// file order the very same sequence.
func TestParsleyConformance(t *testing.T) {
	dir := conformanceDir(t)
	units, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(units) == 0 {
		t.Fatalf("no conformance units in %s: %v", dir, err)
	}
	for _, path := range units {
		var u unit
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		capturePath := strings.TrimSuffix(path, ".json") + ".ndjson"
		for _, il := range interleavings {
			t.Run(u.Unit+"/"+il, func(t *testing.T) {
				checkUnit(t, u, capturePath, il)
			})
		}
	}
}

func checkUnit(t *testing.T, u unit, capturePath, interleave string) {
	names := &clock.Names{}
	// Learn names and clocks from the capture, independently of replay.
	clocks := map[delivery]clock.Clock{}
	onChannel := map[clock.Channel][]int64{}
	f, err := os.Open(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := capture.NewReader(f)
	for {
		it, err := rd.Next()
		if err != nil {
			break
		}
		ch, err := engine.ResolveChannel(names, it)
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind == record.KindRecord {
			c, _, err := clock.FromHeaders(it.Headers)
			if err != nil {
				t.Fatalf("line %d: %v", it.Line, err)
			}
			clocks[delivery{ch, it.Offset}] = c
			onChannel[ch] = append(onChannel[ch], it.Offset)
		}
	}
	ch := func(s string) clock.Channel {
		c, err := names.ParseChannel(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var scope []clock.Channel
	inScope := map[clock.Channel]bool{}
	for _, s := range u.Scope {
		scope = append(scope, ch(s))
		inScope[ch(s)] = true
	}
	starts := map[clock.Channel]int64{}
	for s, off := range u.Start {
		starts[ch(s)] = off
	}
	var want []delivery
	for _, d := range u.Delivered {
		want = append(want, delivery{ch(d[0].(string)), int64(d[1].(float64))})
	}

	il, err := ParseInterleave(interleave)
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.New(engine.Config{Scope: scope, Starts: starts, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	f2, err := os.Open(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	src, err := Reorder(capture.NewReader(f2), il, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []delivery
	delivered := map[delivery]bool{}
	err = engine.Run(context.Background(), src, r, func(ev *engine.Event) error {
		if ev.Type != engine.EventDeliver {
			return nil
		}
		d := delivery{ev.Channel, ev.Offset}
		if delivered[d] {
			return fmt.Errorf("%v delivered twice", d)
		}
		// Every in-scope claim of d is honoured: each record it names on
		// another channel in scope has been delivered already.
		for _, e := range clocks[d].Entries() {
			if e.Channel == d.ch || !inScope[e.Channel] {
				continue
			}
			for _, off := range onChannel[e.Channel] {
				if off <= e.Position && off >= starts[e.Channel] && !delivered[delivery{e.Channel, off}] {
					return fmt.Errorf("%s@%d delivered before its cause %s@%d", names.Channel(d.ch), d.off, names.Channel(e.Channel), off)
				}
			}
		}
		if prev := got; len(prev) > 0 {
			for i := len(prev) - 1; i >= 0; i-- {
				if prev[i].ch == d.ch {
					if prev[i].off >= d.off {
						return fmt.Errorf("FIFO broken on %s: %d after %d", names.Channel(d.ch), d.off, prev[i].off)
					}
					break
				}
			}
		}
		delivered[d] = true
		got = append(got, d)
		return nil
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if held := r.Gate().Stats().Held; held != 0 {
		t.Errorf("%d records held at the end", held)
	}
	sortD := func(ds []delivery) []delivery {
		ds = slices.Clone(ds)
		slices.SortFunc(ds, func(a, b delivery) int {
			if c := a.ch.Compare(b.ch); c != 0 {
				return c
			}
			return int(a.off - b.off)
		})
		return ds
	}
	if !slices.Equal(sortD(got), sortD(want)) {
		t.Fatalf("delivered set differs from Parsley's: got %d, want %d", len(got), len(want))
	}
	if interleave == "file" && !slices.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("in file order the sequence differs from Parsley's at %d: %s@%d, Parsley %s@%d",
					i, names.Channel(got[i].ch), got[i].off, names.Channel(want[i].ch), want[i].off)
			}
		}
	}
}
