package metrics

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/view"
)

// fixed serves whatever snapshot the test sets.
type fixed struct {
	mu   sync.Mutex
	s    view.Snapshot
	have bool
}

func (f *fixed) Latest() (view.Snapshot, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, f.have
}

func (f *fixed) set(s view.Snapshot) {
	f.mu.Lock()
	f.s, f.have = s, true
	f.mu.Unlock()
}

const ordersID = "01020304-0506-0708-090a-0b0c0d0e0f10"
const unnamedID = "0a000000-0000-0000-0000-000000000000"

// twoChannels is a snapshot of a node holding 3 records on orders/1, its
// head 90 s old and waiting beyond payments' log end, beside an unnamed
// channel with nothing held and no log end known.
func twoChannels() view.Snapshot {
	return view.Snapshot{
		State:        engine.StateRunning,
		Taken:        time.Unix(1700000000, 500_000_000),
		Scope:        2,
		Received:     120,
		Delivered:    115,
		Dropped:      2,
		Held:         3,
		HeldChannels: 1,
		OldestHold:   inspect.Age{D: 90 * time.Second, Known: true},
		Channels: []view.ChannelRow{
			{Channel: "orders/1", TopicID: ordersID, Partition: 1, Settled: 40, ReceivedUpTo: 43, LogEnd: 44, HighWatermark: 46,
				Held: 3, HeadOffset: 41, HeadAge: inspect.Age{D: 90 * time.Second, Known: true}, Blocked: true, Head: 0},
			{Channel: unnamedID + "/0", TopicID: unnamedID, Partition: 0, Settled: -1, ReceivedUpTo: -1, LogEnd: -1, HighWatermark: -1,
				HeadOffset: -1, Head: -1},
		},
		Heads: []view.HeadDetail{{Head: inspect.Head{Channel: "orders/1", Offset: 41, Cause: inspect.CauseBeyondLogEnd, Blockers: []inspect.Blocker{
			{Channel: "orders/0", Cause: inspect.CauseHeld, Required: 3},
			{Channel: "payments/0", Cause: inspect.CauseBeyondLogEnd, Required: 7},
		}}}},
	}
}

// TestCollectorValues checks every metric of the collector, its values and
// labels, against a snapshot.
func TestCollectorValues(t *testing.T) {
	src := &fixed{}
	c := NewCollector(src, Options{})
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d metrics before the first snapshot, want none", n)
	}
	src.set(twoChannels())
	want := `
# HELP causalctl_blocked_heads Held heads (one per channel whose hold queue is not empty) by the cause of their wait.
# TYPE causalctl_blocked_heads gauge
causalctl_blocked_heads{cause="beyond-input"} 0
causalctl_blocked_heads{cause="beyond-log-end"} 1
causalctl_blocked_heads{cause="cycle"} 0
causalctl_blocked_heads{cause="held"} 0
causalctl_blocked_heads{cause="ready"} 0
causalctl_blocked_heads{cause="lagging"} 0
causalctl_blocked_heads{cause="deleted"} 0
causalctl_blocked_heads{cause="not-a-record"} 0
causalctl_blocked_heads{cause="not-received"} 0
causalctl_blocked_heads{cause="open-transaction"} 0
causalctl_blocked_heads{cause="out-of-scope"} 0
causalctl_blocked_heads{cause="truncated"} 0
causalctl_blocked_heads{cause="unclassified"} 0
causalctl_blocked_heads{cause="undecodable"} 0
# HELP causalctl_channel_head_age_seconds Age of the channel's held head (0 when nothing is held).
# TYPE causalctl_channel_head_age_seconds gauge
causalctl_channel_head_age_seconds{partition="0",topic="` + unnamedID + `",topic_id="` + unnamedID + `"} 0
causalctl_channel_head_age_seconds{partition="1",topic="orders",topic_id="` + ordersID + `"} 90
# HELP causalctl_channel_held_records Records held in the channel's hold queue.
# TYPE causalctl_channel_held_records gauge
causalctl_channel_held_records{partition="0",topic="` + unnamedID + `",topic_id="` + unnamedID + `"} 0
causalctl_channel_held_records{partition="1",topic="orders",topic_id="` + ordersID + `"} 3
# HELP causalctl_channel_last_stable_offset The channel's last stable offset: the end a read_committed reader reads up to (absent until known).
# TYPE causalctl_channel_last_stable_offset gauge
causalctl_channel_last_stable_offset{partition="1",topic="orders",topic_id="` + ordersID + `"} 44
# HELP causalctl_channel_log_end_offset The channel's high watermark: the offset the next record written gets (absent until known).
# TYPE causalctl_channel_log_end_offset gauge
causalctl_channel_log_end_offset{partition="1",topic="orders",topic_id="` + ordersID + `"} 46
# HELP causalctl_channel_received_offset The highest position received or advanced past on the channel; absent while none is.
# TYPE causalctl_channel_received_offset gauge
causalctl_channel_received_offset{partition="1",topic="orders",topic_id="` + ordersID + `"} 43
# HELP causalctl_channel_settled_offset The channel's settled position: every record at or below it is delivered; absent while none is.
# TYPE causalctl_channel_settled_offset gauge
causalctl_channel_settled_offset{partition="1",topic="orders",topic_id="` + ordersID + `"} 40
# HELP causalctl_disconnected_seconds How long the shadow node has been unable to reach its brokers, retrying (0 while connected).
# TYPE causalctl_disconnected_seconds gauge
causalctl_disconnected_seconds 0
# HELP causalctl_failed_closed 1 once the gate failed closed on an undecodable header (its reason code the label), else 0.
# TYPE causalctl_failed_closed gauge
causalctl_failed_closed{reason=""} 0
# HELP causalctl_held_records Records held now, in every hold queue.
# TYPE causalctl_held_records gauge
causalctl_held_records 3
# HELP causalctl_last_snapshot_timestamp_seconds When the snapshot this scrape reports was taken (Unix time).
# TYPE causalctl_last_snapshot_timestamp_seconds gauge
causalctl_last_snapshot_timestamp_seconds 1.7000000005e+09
# HELP causalctl_metrics_channels_dropped Channels in scope this scrape exports no per-channel series of: over --metrics-max-channels (held channels are kept first), or beyond the snapshot's row cap.
# TYPE causalctl_metrics_channels_dropped gauge
causalctl_metrics_channels_dropped 0
# HELP causalctl_oldest_hold_age_seconds Age of the oldest held head: how long ago it was received (0 when nothing is held).
# TYPE causalctl_oldest_hold_age_seconds gauge
causalctl_oldest_hold_age_seconds 90
# HELP causalctl_records_delivered_total Records the gate delivered.
# TYPE causalctl_records_delivered_total counter
causalctl_records_delivered_total 115
# HELP causalctl_records_dropped_total Records the gate dropped: received again at or below a position already delivered (the replay guard).
# TYPE causalctl_records_dropped_total counter
causalctl_records_dropped_total 2
# HELP causalctl_records_received_total Records the shadow node's gate received.
# TYPE causalctl_records_received_total counter
causalctl_records_received_total 120
# HELP causalctl_scope_channels Channels the shadow node consumes.
# TYPE causalctl_scope_channels gauge
causalctl_scope_channels 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// Failed closed: 1, with the reason code as the label.
	s := twoChannels()
	s.State = engine.StateFailedClosed
	s.Failure = &inspect.Failure{Channel: "orders/1", Offset: 44, Code: "truncated"}
	src.set(s)
	want = `
# HELP causalctl_failed_closed 1 once the gate failed closed on an undecodable header (its reason code the label), else 0.
# TYPE causalctl_failed_closed gauge
causalctl_failed_closed{reason="truncated"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "causalctl_failed_closed"); err != nil {
		t.Error(err)
	}
}

// TestRegistryLint runs client_golang's linter of the Prometheus naming
// conventions (base units, _total on counters, no reserved suffixes) over
// everything the registry exports, Go and process collectors included.
func TestRegistryLint(t *testing.T) {
	src := &fixed{}
	src.set(twoChannels())
	reg := NewRegistry(LiveSource(src, Options{}, nil))
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "causalctl_held_records"} {
		if !have[name] {
			t.Errorf("the registry exports no %s", name)
		}
	}
	// A registry of its own: nothing of ours in the global one.
	global, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range global {
		if strings.HasPrefix(mf.GetName(), "causalctl_") {
			t.Errorf("%s is in the global registry", mf.GetName())
		}
	}
}

func TestBlockedByCause(t *testing.T) {
	// Every cause inspect knows is a label value, and a head counts under
	// its own cause (inspect ranks the blockers).
	for _, c := range inspect.Causes() {
		s := view.Snapshot{HeldChannels: 1, Heads: []view.HeadDetail{{Head: inspect.Head{Cause: c, RootCause: inspect.CauseLagging}}}}
		got := BlockedByCause(&s)
		if got[string(c)] != 1 || len(got) != 1 {
			t.Errorf("%s: %v", c, got)
		}
		if !slices.Contains(Causes, string(c)) {
			t.Errorf("cause %s is no label value", c)
		}
	}
	// Heads beyond the detail cap are counted, unclassified.
	s := view.Snapshot{HeldChannels: 5, HeadsOmitted: 3, Heads: []view.HeadDetail{
		{Head: inspect.Head{Cause: inspect.CauseHeld}}, {Head: inspect.Head{Cause: inspect.CauseLagging}},
	}}
	got := BlockedByCause(&s)
	if got[CauseUnclassified] != 3 || got[CauseHeld] != 1 || got[CauseLagging] != 1 {
		t.Errorf("%v", got)
	}
}

// TestCountersMonotonic runs a real gate over random records, some
// duplicated (dropped by the replay guard), and scrapes after each: the
// counters equal the snapshot's and never go down, not even when an older
// snapshot is served again; the gauges follow the snapshot both ways.
func TestCountersMonotonic(t *testing.T) {
	a := clock.Channel{Topic: clock.TopicID{0xa}, Partition: 0}
	b := clock.Channel{Topic: clock.TopicID{0xb}, Partition: 0}
	names := &clock.Names{}
	if err := names.Add("a", a.Topic); err != nil {
		t.Fatal(err)
	}
	if err := names.Add("b", b.Topic); err != nil {
		t.Fatal(err)
	}
	r, err := engine.New(engine.Config{Scope: []clock.Channel{a, b}, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	tr := view.NewEvents(8)
	src := &fixed{}
	c := NewCollector(src, Options{})
	now := time.Unix(1000, 0)
	rng := rand.New(rand.NewPCG(7, 7))
	next := map[clock.Channel]int64{}
	var snaps []view.Snapshot
	var last map[string]float64
	heldGoesDown := false
	for step := range 400 {
		ch, other := a, b
		if rng.IntN(2) == 1 {
			ch, other = b, a
		}
		off := next[ch]
		if settled := r.Gate().Settled(ch); settled >= 0 && rng.IntN(10) == 0 {
			off = rng.Int64N(settled + 1) // delivered already: dropped
		} else {
			next[ch]++
		}
		it := &record.Item{Kind: record.KindRecord, Topic: map[clock.Channel]string{a: "a", b: "b"}[ch], TopicID: ch.Topic, Offset: off}
		if need := next[other] + rng.Int64N(3) - 1; need >= 0 && rng.IntN(3) == 0 {
			hdr := clock.Encode(clock.MustNew(clock.Entry{Channel: other, Position: need}))
			it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: hdr}}
		}
		now = now.Add(time.Second)
		if err := r.Feed(it, func(ev *engine.Event) error { tr.Observe(ev, now); return nil }); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		s := view.SnapshotOf(r, view.SnapshotOptions{State: engine.StateRunning, Now: now, Events: tr})
		snaps = append(snaps, s)
		src.set(s)
		got := scrape(t, c)
		if got["causalctl_records_received_total"] != float64(s.Received) ||
			got["causalctl_records_delivered_total"] != float64(s.Delivered) ||
			got["causalctl_records_dropped_total"] != float64(s.Dropped) ||
			got["causalctl_held_records"] != float64(s.Held) {
			t.Fatalf("step %d: scraped %v, snapshot received %d delivered %d dropped %d held %d", step, got, s.Received, s.Delivered, s.Dropped, s.Held)
		}
		if last != nil {
			for _, name := range []string{"causalctl_records_received_total", "causalctl_records_delivered_total", "causalctl_records_dropped_total"} {
				if got[name] < last[name] {
					t.Fatalf("step %d: %s went down from %v to %v", step, name, last[name], got[name])
				}
			}
			heldGoesDown = heldGoesDown || got["causalctl_held_records"] < last["causalctl_held_records"]
		}
		last = got
	}
	if last["causalctl_records_dropped_total"] == 0 || !heldGoesDown {
		t.Fatalf("the run exercised too little: %v, held went down: %v", last, heldGoesDown)
	}
	// An older snapshot served again: the counters stay, the gauges follow.
	old := snaps[len(snaps)/2]
	src.set(old)
	got := scrape(t, c)
	if got["causalctl_records_received_total"] != last["causalctl_records_received_total"] {
		t.Errorf("received went back to %v from %v", got["causalctl_records_received_total"], last["causalctl_records_received_total"])
	}
	if got["causalctl_held_records"] != float64(old.Held) {
		t.Errorf("held %v, want the snapshot's %d", got["causalctl_held_records"], old.Held)
	}
}

// scrape collects c and returns each metric without labels by name.
func scrape(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 0 {
				out[mf.GetName()] = value(m)
			}
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// TestCollectorTaskLabel: with per-task gates every per-channel series
// says its task; without, none has the label.
func TestCollectorTaskLabel(t *testing.T) {
	s := twoChannels()
	for i := range s.Channels {
		s.Channels[i].Task = s.Channels[i].Partition
	}
	s.Tasks = []view.TaskRow{{Task: 0}, {Task: 1, Held: 3, HeldChannels: 1}}
	src := &fixed{}
	src.set(s)
	want := `
# HELP causalctl_channel_held_records Records held in the channel's hold queue.
# TYPE causalctl_channel_held_records gauge
causalctl_channel_held_records{partition="0",task="0",topic="` + unnamedID + `",topic_id="` + unnamedID + `"} 0
causalctl_channel_held_records{partition="1",task="1",topic="orders",topic_id="` + ordersID + `"} 3
`
	if err := testutil.CollectAndCompare(NewCollector(src, Options{Tasks: true}), strings.NewReader(want), "causalctl_channel_held_records"); err != nil {
		t.Error(err)
	}
	if err := testutil.CollectAndCompare(NewRegistry(LiveSource(src, Options{Tasks: true}, nil)), strings.NewReader(want), "causalctl_channel_held_records"); err != nil {
		t.Errorf("registry: %v", err)
	}
	// Without the option the series stay as they were.
	plain := strings.NewReplacer(`task="0",`, "", `task="1",`, "").Replace(want)
	if err := testutil.CollectAndCompare(NewCollector(src, Options{}), strings.NewReader(plain), "causalctl_channel_held_records"); err != nil {
		t.Errorf("without tasks: %v", err)
	}
}
