package replay

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// readItems reads a whole capture file.
func readItems(t *testing.T, path string) []record.Item {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := capture.NewReader(f)
	var out []record.Item
	for {
		it, err := rd.Next()
		if err != nil {
			break
		}
		c := *it
		c.Headers = nil
		for _, h := range it.Headers {
			c.Headers = append(c.Headers, clock.Header{Key: h.Key, Value: slices.Clone(h.Value)})
		}
		out = append(out, c)
	}
	return out
}

// TestTasksGiveEachUnitsDeliveries merges the captures of each Parsley
// process of the cluster run (its tasks' units) into one input, the tasks'
// items interleaved, and replays it with one gate per task: each task
// delivers exactly what Parsley's task delivered, in the same order.
func TestTasksGiveEachUnitsDeliveries(t *testing.T) {
	dir := conformanceDir(t)
	units, err := filepath.Glob(filepath.Join(dir, "*.t0.json"))
	if err != nil || len(units) == 0 {
		t.Fatalf("no conformance units in %s: %v", dir, err)
	}
	for _, first := range units {
		process := strings.TrimSuffix(filepath.Base(first), ".t0.json")
		t.Run(process, func(t *testing.T) {
			names := &clock.Names{}
			var perUnit [][]record.Item
			wants := map[int32][]delivery{}
			var scope []clock.Channel
			starts := map[clock.Channel]int64{}
			paths, _ := filepath.Glob(filepath.Join(dir, process+".t*.json"))
			for _, path := range paths {
				items := readItems(t, strings.TrimSuffix(path, ".json")+".ndjson")
				for i := range items {
					if _, err := engine.ResolveChannel(names, &items[i]); err != nil {
						t.Fatal(err)
					}
				}
				perUnit = append(perUnit, items)
				var u unit
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &u); err != nil {
					t.Fatal(err)
				}
				for _, s := range u.Scope {
					ch, err := names.ParseChannel(s)
					if err != nil {
						t.Fatal(err)
					}
					scope = append(scope, ch)
					starts[ch] = u.Start[s]
				}
				for _, d := range u.Delivered {
					ch, err := names.ParseChannel(d[0].(string))
					if err != nil {
						t.Fatal(err)
					}
					wants[ch.Partition] = append(wants[ch.Partition], delivery{ch, int64(d[1].(float64))})
				}
			}
			// Round-robin over the units, each unit's order kept.
			var merged []record.Item
			for i := 0; ; i++ {
				n := len(merged)
				for _, items := range perUnit {
					if i < len(items) {
						merged = append(merged, items[i])
					}
				}
				if len(merged) == n {
					break
				}
			}
			ts, err := engine.NewTasks(engine.Config{Scope: scope, Starts: starts, Names: names}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int32][]delivery{}
			err = engine.RunTasks(context.Background(), &chunky{items: merged}, ts, func(task *engine.Task, ev *engine.Event) error {
				if ev.Type == engine.EventDeliver {
					got[task.Task] = append(got[task.Task], delivery{ev.Channel, ev.Offset})
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(ts.Tasks) != len(paths) {
				t.Fatalf("%d tasks, want %d (one per unit)", len(ts.Tasks), len(paths))
			}
			for _, task := range ts.Tasks {
				if !slices.Equal(got[task.Task], wants[task.Task]) {
					t.Errorf("task %d delivered %d records, not the %d Parsley delivered in its order", task.Task, len(got[task.Task]), len(wants[task.Task]))
				}
				if h := task.Gate().Stats().Held; h != 0 {
					t.Errorf("task %d holds %d records at the end", task.Task, h)
				}
			}
		})
	}
}

// TestTaskGateIgnoresClaimsOfOtherPartitions: shipments/0 claims
// orders/2@5, which is never written. One gate over every channel holds
// the shipment; task 0's gate, whose scope has no orders/2, delivers it,
// as Parsley's task 0 does.
func TestTaskGateIgnoresClaimsOfOtherPartitions(t *testing.T) {
	orders := clock.TopicID{1}
	shipments := clock.TopicID{2}
	names := &clock.Names{}
	if err := names.Add("orders", orders); err != nil {
		t.Fatal(err)
	}
	if err := names.Add("shipments", shipments); err != nil {
		t.Fatal(err)
	}
	claim, err := clock.New(clock.Entry{Channel: clock.Channel{Topic: orders, Partition: 2}, Position: 5})
	if err != nil {
		t.Fatal(err)
	}
	hdr := causesHeader(claim)
	items := []record.Item{
		{Kind: record.KindRecord, Topic: "orders", TopicID: orders, Partition: 0, Offset: 0},
		{Kind: record.KindRecord, Topic: "orders", TopicID: orders, Partition: 2, Offset: 0},
		{Kind: record.KindRecord, Topic: "shipments", TopicID: shipments, Partition: 0, Offset: 0, Headers: []clock.Header{hdr}},
	}
	scope := []clock.Channel{{Topic: orders, Partition: 0}, {Topic: orders, Partition: 2}, {Topic: shipments, Partition: 0}}
	ship := delivery{clock.Channel{Topic: shipments, Partition: 0}, 0}

	single, err := engine.New(engine.Config{Scope: scope, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	var one []delivery
	if err := engine.Run(context.Background(), &chunky{items: items}, single, func(ev *engine.Event) error {
		if ev.Type == engine.EventDeliver {
			one = append(one, delivery{ev.Channel, ev.Offset})
		}
		return nil
	}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(one, ship) || single.Gate().Stats().Held != 1 {
		t.Fatalf("the single gate delivered %v and holds %d: want the shipment held", one, single.Gate().Stats().Held)
	}

	ts, err := engine.NewTasks(engine.Config{Scope: scope, Names: names}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Tasks) != 2 || ts.Tasks[0].Task != 0 || ts.Tasks[1].Task != 2 {
		t.Fatalf("tasks %v, want 0 and 2", ts.Tasks)
	}
	var byTask []int32
	if err := engine.RunTasks(context.Background(), &chunky{items: items}, ts, func(task *engine.Task, ev *engine.Event) error {
		if ev.Type == engine.EventDeliver && (delivery{ev.Channel, ev.Offset}) == ship {
			byTask = append(byTask, task.Task)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(byTask, []int32{0}) || ts.Held() != 0 {
		t.Fatalf("shipment delivered by tasks %v, %d held: want task 0 to deliver it", byTask, ts.Held())
	}
}

// TestSeededReplayerDoesNotReceiveTwice: a replayer seeded with a hold
// queue, fed from below its fed-up-to, drops what is settled, skips what
// it holds and reports what the state lacks; the head's missing cause
// then releases it.
func TestSeededReplayerDoesNotReceiveTwice(t *testing.T) {
	a := clock.Channel{Topic: clock.TopicID{1}, Partition: 0}
	b := clock.Channel{Topic: clock.TopicID{2}, Partition: 0}
	names := &clock.Names{}
	_ = names.Add("a", a.Topic)
	_ = names.Add("b", b.Topic)
	claim, err := clock.New(clock.Entry{Channel: b, Position: 0})
	if err != nil {
		t.Fatal(err)
	}
	// a holds 3 and 5 (4 is missing: the state lost it), fed up to 5;
	// settled 2. b has nothing yet.
	seed := []gate.ChannelState{
		{Channel: a, Fed: 5, Held: []gate.SeedRecord{{Offset: 3, Clock: claim}, {Offset: 5, Clock: claim}}},
		{Channel: b, Fed: -1},
	}
	r, err := engine.New(engine.Config{Seed: seed, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	hdr := causesHeader(claim)
	rec := func(topic string, ch clock.Channel, off int64) record.Item {
		return record.Item{Kind: record.KindRecord, Topic: topic, TopicID: ch.Topic, Offset: off, Headers: []clock.Header{hdr}}
	}
	var evs []string
	emit := func(ev *engine.Event) error {
		evs = append(evs, ev.Type.String()+" "+names.Channel(ev.Channel)+"@"+itoa(ev.Offset))
		return nil
	}
	for _, it := range []record.Item{rec("a", a, 2), rec("a", a, 3), rec("a", a, 4), rec("a", a, 5), rec("a", a, 6),
		{Kind: record.KindRecord, Topic: "b", TopicID: b.Topic, Offset: 0}} {
		if err := r.Feed(&it, emit); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"drop a/0@2", "hold a/0@6", "deliver b/0@0", "deliver a/0@3", "deliver a/0@5", "deliver a/0@6"}
	if !slices.Equal(evs, want) {
		t.Fatalf("events %q, want %q", evs, want)
	}
	if r.Reread() != 2 {
		t.Errorf("reread %d, want 2 (a/0@3 and @5)", r.Reread())
	}
	if m := r.Missing(); len(m) != 1 || m[0].Offset != 4 || m[0].Fed != 5 {
		t.Errorf("missing %v, want a/0@4 (fed 5)", m)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func causesHeader(c clock.Clock) clock.Header {
	return clock.Header{Key: clock.HeaderCauses, Value: clock.Encode(c)}
}

// TestSeededReplayerOracle: over random inputs, a replayer seeded from
// another's gate state mid-run and fed the rest — each channel rewound to
// a random offset at or below its fed-up-to + 1, as a committed offset
// behind the state is — delivers exactly what the uninterrupted one
// delivers from there, in the same order, and ends holding the same.
func TestSeededReplayerOracle(t *testing.T) {
	names := &clock.Names{}
	var chans []clock.Channel
	for i := range 3 {
		ch := clock.Channel{Topic: clock.TopicID{byte(i + 1)}, Partition: 0}
		_ = names.Add(string(rune('a'+i)), ch.Topic)
		chans = append(chans, ch)
	}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		next := make([]int64, len(chans))
		var items []record.Item
		for range 24 {
			i := rng.IntN(len(chans))
			var c clock.Clock
			if rng.IntN(2) == 0 {
				c = clock.MustNew(clock.Entry{Channel: chans[(i+1+rng.IntN(2))%3], Position: int64(rng.IntN(8))})
			}
			items = append(items, record.Item{Kind: record.KindRecord, TopicID: chans[i].Topic, Offset: next[i], Headers: []clock.Header{causesHeader(c)}})
			next[i]++
		}
		cut := rng.IntN(len(items))
		a, err := engine.New(engine.Config{Scope: chans, Names: names})
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		collect := func(to *[]string) func(*engine.Event) error {
			return func(ev *engine.Event) error {
				if ev.Type == engine.EventDeliver {
					*to = append(*to, names.Channel(ev.Channel)+"@"+itoa(ev.Offset))
				}
				return nil
			}
		}
		for k := range cut {
			if err := a.Feed(&items[k], func(*engine.Event) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		state := a.Gate().State()
		b, err := engine.New(engine.Config{Seed: state, Names: names})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := b.Flush(collect(&got)); err != nil {
			t.Fatal(err)
		}
		// Rewind each channel to a random committed offset ≤ fed + 1.
		var rest []record.Item
		for i, cs := range state {
			from := int64(rng.IntN(int(cs.Fed) + 2))
			for k := range cut {
				if items[k].TopicID == chans[i].Topic && items[k].Offset >= from {
					rest = append(rest, items[k])
				}
			}
		}
		rest = append(rest, items[cut:]...)
		for k := range rest {
			if err := b.Feed(&rest[k], collect(&got)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		for k := cut; k < len(items); k++ {
			if err := a.Feed(&items[k], collect(&want)); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) || len(b.Missing()) != 0 || a.Gate().Stats().Held != b.Gate().Stats().Held {
			t.Fatalf("seed %d, cut %d: seeded delivered %v (missing %v, held %d), uninterrupted %v (held %d)",
				seed, cut, got, b.Missing(), b.Gate().Stats().Held, want, a.Gate().Stats().Held)
		}
	}
}
