package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/replay"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start starts a demo broker, closed when the test ends.
func start(t *testing.T, cfg demo.Config) *demo.Demo {
	t.Helper()
	d, err := demo.New(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// runSteps starts a demo and runs its pipeline for steps steps, unpaced.
func runSteps(t *testing.T, cfg demo.Config, steps int) *demo.Demo {
	t.Helper()
	cfg.Steps, cfg.Tick = steps, 0
	d := start(t, cfg)
	if err := d.Run(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return d
}

// readAll reads the demo's topics from the log start to the end.
func readAll(t *testing.T, addr string) []*capture.Item {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sels, _ := kafka.ParseTopicSels([]string{"orders,payments,shipments"})
	spec, _ := kafka.ParseOffsets("start", time.Now())
	r, err := cl.OpenRange(ctx, sels, spec)
	if err != nil {
		t.Fatal(err)
	}
	var items []*capture.Item
	for {
		it, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return items
		}
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it.Clone()) // valid until the next call only
	}
}

type sliceSource struct{ items []*capture.Item }

func (s *sliceSource) Next() (*capture.Item, error) {
	if len(s.items) == 0 {
		return nil, io.EOF
	}
	it := s.items[0]
	s.items = s.items[1:]
	return it, nil
}

func recordID(t *testing.T, it *capture.Item) int {
	t.Helper()
	var v struct {
		ID *int `json:"id"`
	}
	if err := json.Unmarshal(it.Value, &v); err != nil || v.ID == nil {
		t.Fatalf("%s/%d@%d: value %q has no id", it.Topic, it.Partition, it.Offset, it.Value)
	}
	return *v.ID
}

// oracle checks a delivery sequence against the simulation's ground truth
// — the true causal pasts of the records — and never reads a clock.
type oracle struct {
	truth     map[int]demo.TrueRecord
	at        map[clock.Channel]map[int64]int // (channel, offset) → record ID
	order     map[clock.Channel][]int         // record IDs per channel, in offset order
	scope     map[clock.Channel]bool
	next      map[clock.Channel]int
	delivered map[int]bool
	errs      []string
}

func newOracle(truth []demo.TrueRecord, scope []clock.Channel) *oracle {
	o := &oracle{truth: map[int]demo.TrueRecord{}, at: map[clock.Channel]map[int64]int{}, order: map[clock.Channel][]int{},
		scope: map[clock.Channel]bool{}, next: map[clock.Channel]int{}, delivered: map[int]bool{}}
	for _, ch := range scope {
		o.scope[ch] = true
	}
	for _, r := range truth {
		o.truth[r.ID] = r
		if o.at[r.Channel] == nil {
			o.at[r.Channel] = map[int64]int{}
		}
		o.at[r.Channel][r.Offset] = r.ID
		o.order[r.Channel] = append(o.order[r.Channel], r.ID)
	}
	for ch, ids := range o.order {
		slices.SortFunc(ids, func(a, b int) int { return int(o.truth[a].Offset - o.truth[b].Offset) })
		o.order[ch] = ids
	}
	return o
}

func (o *oracle) fail(format string, args ...any) {
	if len(o.errs) < 10 {
		o.errs = append(o.errs, fmt.Sprintf(format, args...))
	}
}

func (o *oracle) deliver(ch clock.Channel, off int64) {
	id, ok := o.at[ch][off]
	switch {
	case !ok:
		o.fail("delivered %v@%d, which holds no record of the run", ch, off)
		return
	case !o.scope[ch]:
		o.fail("delivered %v@%d outside the scope", ch, off)
		return
	case o.delivered[id]:
		o.fail("delivered %v@%d twice", ch, off)
		return
	}
	if want := o.order[ch][o.next[ch]]; want != id {
		o.fail("delivered %v@%d before %v@%d", ch, off, ch, o.truth[want].Offset)
	}
	o.next[ch]++
	for _, a := range o.truth[id].Ancestors {
		if ar := o.truth[a]; o.scope[ar.Channel] && !o.delivered[a] {
			o.fail("delivered %v@%d before its ancestor %v@%d", ch, off, ar.Channel, ar.Offset)
		}
	}
	o.delivered[id] = true
}

func (o *oracle) complete() {
	for ch, ids := range o.order {
		if !o.scope[ch] {
			continue
		}
		for _, id := range ids {
			if !o.delivered[id] {
				o.fail("%v@%d never delivered", ch, o.truth[id].Offset)
				break
			}
		}
	}
}

// TestHonestStamps runs the pipeline for several seeds, reads what it
// wrote back from the broker, replays it offline under several scopes
// (some skipping intermediate topics: the ignore branch) and interleavings,
// and checks every delivery against the true causal pasts.
func TestHonestStamps(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			d := runSteps(t, demo.Config{Seed: seed, RecordTruth: true}, 60)
			items := readAll(t, d.Addr())
			truth := d.Truth()
			byID := map[int]demo.TrueRecord{}
			for _, r := range truth {
				byID[r.ID] = r
			}
			records, positions := 0, 0
			for _, it := range items {
				if it.Kind != capture.KindRecord {
					positions++
					continue
				}
				records++
				r, ok := byID[recordID(t, it)]
				if ch := (clock.Channel{Topic: it.TopicID, Partition: it.Partition}); !ok || r.Channel != ch || r.Offset != it.Offset {
					t.Fatalf("%s/%d@%d: the simulation recorded %+v", it.Topic, it.Partition, it.Offset, r)
				}
			}
			if records != len(truth) || records < 150 {
				t.Fatalf("%d records read, %d written", records, len(truth))
			}
			if d.Aborted() == 0 || positions <= 7*2 {
				t.Errorf("%d aborted records, %d position items: want transactions with gaps", d.Aborted(), positions)
			}

			id := func(topic string, parts ...int32) []clock.Channel {
				var out []clock.Channel
				for _, p := range parts {
					out = append(out, clock.Channel{Topic: d.TopicID(topic), Partition: p})
				}
				return out
			}
			all := d.Channels()
			scopes := map[string][]clock.Channel{
				"all":                  all,
				"orders+shipments":     append(id("orders", 0, 1, 2), id("shipments", 0, 1)...),
				"payments+shipments":   append(id("payments", 0, 1), id("shipments", 0, 1)...),
				"orders/1+shipments/1": append(id("orders", 1), id("shipments", 1)...),
			}
			held := 0
			for name, scope := range scopes {
				for _, il := range []string{"file", "random:1", "random:2", "round-robin", "channel"} {
					inter, _ := replay.ParseInterleave(il)
					src, err := replay.Reorder(&sliceSource{items: slices.Clone(items)}, inter, d.Names(), 0)
					if err != nil {
						t.Fatal(err)
					}
					r, err := replay.New(replay.Config{Scope: scope, Names: d.Names()})
					if err != nil {
						t.Fatal(err)
					}
					o := newOracle(truth, scope)
					maxHeld := int64(0)
					err = replay.Run(context.Background(), src, r, func(ev *replay.Event) error {
						if ev.Type == replay.EventDeliver {
							o.deliver(ev.Channel, ev.Offset)
						}
						if ev.Type == replay.EventDrop {
							o.fail("dropped %v@%d", ev.Channel, ev.Offset)
						}
						maxHeld = max(maxHeld, r.Gate().Stats().Held)
						return nil
					}, nil, time.Now)
					if err != nil {
						t.Fatalf("%s %s: %v", name, il, err)
					}
					o.complete()
					if len(o.errs) > 0 {
						t.Errorf("scope %s, interleave %s:\n  %s", name, il, strings.Join(o.errs, "\n  "))
					}
					if s := inspect.SummaryOf(r, inspect.Facts{}); s.Held != 0 || len(s.Cycles) != 0 {
						t.Errorf("scope %s, interleave %s: %d held at the end", name, il, s.Held)
					}
					held += int(maxHeld)
				}
			}
			if held == 0 {
				t.Error("no interleaving ever held a record: the test shows nothing")
			}
		})
	}
}

// TestDeterministic checks that a seed fixes every record, header and
// offset.
func TestDeterministic(t *testing.T) {
	sig := func(seed uint64) string {
		d := runSteps(t, demo.Config{Seed: seed}, 25)
		var b strings.Builder
		for _, it := range readAll(t, d.Addr()) {
			fmt.Fprintf(&b, "%s/%d@%d %v %s", it.Topic, it.Partition, it.Offset, it.Kind, it.Value)
			// Topic UUIDs differ between brokers: compare clocks by name.
			// Clocks print in UUID order: sort their entries by name.
			c, key, err := clock.FromHeaders(it.Headers)
			var es []string
			for _, e := range c.Entries() {
				es = append(es, fmt.Sprintf("%s=%d", d.Names().Channel(e.Channel), e.Position))
			}
			slices.Sort(es)
			fmt.Fprintf(&b, " %s=%s %v", key, es, err)
			b.WriteByte('\n')
		}
		return b.String()
	}
	// The order of items across channels depends on fetches; sort lines.
	sorted := func(s string) string {
		lines := strings.Split(s, "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	a, b, c := sorted(sig(7)), sorted(sig(7)), sorted(sig(8))
	if a != b {
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Errorf("two runs of seed 7 wrote different records, first difference:\n%s\n%s", al[i], bl[i])
				break
			}
		}
	}
	if a == c {
		t.Error("seeds 7 and 8 wrote the same records")
	}
}

// replayJSON runs `causalctl replay` on the demo's topics in-process.
func replayJSON(t *testing.T, addr string) (code int, sum inspect.Summary, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
	code = cli.Run(testCtx(t), f, []string{"replay", "--brokers", addr, "-t", "orders,payments,shipments", "-o", "json"})
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("replay: exit %d, output %q, stderr %s", code, out, errOut)
	}
	return code, sum, errOut.String()
}

// TestFaults checks that each fault leaves its symptom in the log, as
// `causalctl replay` on the demo's topics shows it.
func TestFaults(t *testing.T) {
	t.Run("undecodable", func(t *testing.T) {
		d := runSteps(t, demo.Config{Seed: 3, Fault: demo.FaultUndecodable, FaultStep: 8}, 25)
		code, sum, stderr := replayJSON(t, d.Addr())
		if code != 1 || sum.Failed == nil || sum.Failed.Code != "truncated" || !strings.HasPrefix(sum.Failed.Channel, "shipments/") {
			t.Fatalf("exit %d, failed %+v, stderr %s", code, sum.Failed, stderr)
		}
		if !strings.Contains(stderr, "failed closed") || !strings.Contains(stderr, "truncated") {
			t.Errorf("stderr %q", stderr)
		}
		assertFaulted(t, d)
	})
	t.Run("dangling", func(t *testing.T) {
		d := runSteps(t, demo.Config{Seed: 4, Fault: demo.FaultDangling, FaultStep: 8}, 25)
		code, sum, stderr := replayJSON(t, d.Addr())
		if code != 0 || sum.Failed != nil {
			t.Fatalf("exit %d, %s", code, stderr)
		}
		found := false
		for _, c := range sum.Channels {
			if c.Head == nil {
				continue
			}
			if !strings.HasPrefix(c.Channel, "shipments/") {
				t.Errorf("held head on %s: %+v", c.Channel, c.Head)
			}
			for _, b := range c.Head.Blockers {
				if b.Channel == "payments/1" && b.Kind == "beyond-log-end" && b.Required > 100000 {
					found = true
				}
			}
		}
		if !found || sum.Held == 0 {
			t.Fatalf("no head held on a beyond-log-end payments/1 blocker: %+v", sum)
		}
		assertFaulted(t, d)
	})
	t.Run("cycle", func(t *testing.T) {
		d := runSteps(t, demo.Config{Seed: 5, Fault: demo.FaultCycle, FaultStep: 8}, 25)
		code, sum, stderr := replayJSON(t, d.Addr())
		if code != 0 {
			t.Fatalf("exit %d, %s", code, stderr)
		}
		// A cycle starts at its smallest channel, by topic UUID.
		want := []string{"payments/0", "shipments/0"}
		if !slices.ContainsFunc(sum.Cycles, func(c []string) bool { c = slices.Clone(c); slices.Sort(c); return slices.Equal(c, want) }) {
			t.Fatalf("cycles %v, want %v", sum.Cycles, want)
		}
		assertFaulted(t, d)
	})
}

func assertFaulted(t *testing.T, d *demo.Demo) {
	t.Helper()
	select {
	case <-d.Faulted():
	default:
		t.Error("Faulted not closed")
	}
}

// TestForeignClient checks that a plain Kafka consumer, in a consumer
// group, reads the demo's topics at its address.
func TestForeignClient(t *testing.T) {
	d := runSteps(t, demo.Config{Seed: 1}, 10)
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Addr()), kgo.ConsumeTopics("orders", "payments", "shipments"),
		kgo.ConsumerGroup("foreign"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	n := int64(0)
	for n < d.Produced() {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d records: %v", n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if len(r.Headers) > 1 || !bytes.HasPrefix(r.Value, []byte(`{"id":`)) {
				t.Errorf("record %s/%d@%d: headers %v value %q", r.Topic, r.Partition, r.Offset, r.Headers, r.Value)
			}
		})
	}
	if n != d.Produced() {
		t.Errorf("read %d records, %d produced", n, d.Produced())
	}
}

// TestDataDir runs the pipeline twice over one data directory: the topics
// keep their UUIDs and records, the second run writes after the first, and
// the whole log still replays completely.
func TestDataDir(t *testing.T) {
	dir := t.TempDir()
	d1, err := demo.New(testCtx(t), demo.Config{Seed: 1, DataDir: dir, Steps: 15})
	if err != nil {
		t.Fatal(err)
	}
	if d1.Resumed() {
		t.Error("a new data directory resumed")
	}
	if err := d1.Run(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	ids := d1.Names()
	first := len(readAll(t, d1.Addr()))
	d1.Close()

	d2 := start(t, demo.Config{Seed: 2, DataDir: dir, Steps: 15})
	if !d2.Resumed() {
		t.Error("the second run did not resume")
	}
	for _, name := range []string{"orders", "payments", "shipments"} {
		a, _ := ids.ID(name)
		if b := d2.TopicID(name); a != b {
			t.Errorf("topic %s: UUID %s, then %s", name, a, b)
		}
	}
	starts := d2.Starts()
	if starts[clock.Channel{Topic: d2.TopicID("orders"), Partition: 0}] == 0 {
		t.Errorf("starts %v: want the first run's ends", starts)
	}
	if err := d2.Run(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	items := readAll(t, d2.Addr())
	if len(items) <= first {
		t.Fatalf("%d items after the second run, %d after the first", len(items), first)
	}
	code, sum, stderr := replayJSON(t, d2.Addr())
	if code != 0 || sum.Held != 0 || sum.Delivered != sum.Received || len(sum.Cycles) != 0 {
		t.Errorf("replay of both runs: exit %d, %d received, %d delivered, %d held; %s", code, sum.Received, sum.Delivered, sum.Held, stderr)
	}
}

// TestSlowFaultLive watches the notifier through a live driver under the
// slow fault: hold ages stay short before it, grow while the payments feed
// stalls, fall back once it recovers, and nothing is held once the node
// has caught up.
func TestSlowFaultLive(t *testing.T) {
	const stall = 1200 * time.Millisecond
	d := start(t, demo.Config{Seed: 6, Fault: demo.FaultSlow, Tick: 20 * time.Millisecond, FaultStep: 25, Stall: stall,
		Lags: map[string]time.Duration{demo.TopicOrders: 100 * time.Millisecond}})
	ctx := testCtx(t)
	cl, fol, err := d.Follow(ctx, kafka.FetchWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	feed := d.Watch(fol)
	defer feed.Close()
	drv, err := live.New(feed, live.Config{Replay: replay.Config{Scope: d.Channels(), Names: cl.Names()}, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopPipe := context.WithCancel(context.Background())
	dctx, stopDrv := context.WithCancel(context.Background())
	pipeDone, drvDone := make(chan error, 1), make(chan error, 1)
	go func() { pipeDone <- d.Run(pctx) }()
	go func() { drvDone <- drv.Run(dctx) }()
	defer func() {
		stopPipe()
		stopDrv()
		<-pipeDone
		<-drvDone
	}()

	var before, during time.Duration
	var faultAt time.Time
	deadline := time.Now().Add(10 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("holds did not drain after the stall: oldest before %s, during %s, now %s", before, during, drv.Status().OldestHold)
		}
		time.Sleep(20 * time.Millisecond)
		age := drv.Status().OldestHold.D
		if faultAt.IsZero() {
			select {
			case <-d.Faulted():
				faultAt = time.Now()
			default:
				before = max(before, age)
				continue
			}
		}
		since := time.Since(faultAt)
		if since < stall+200*time.Millisecond {
			during = max(during, age)
			continue
		}
		if age < 600*time.Millisecond {
			break // recovered
		}
	}
	t.Logf("oldest hold: %s before the stall, %s during it", before, during)
	if during < 900*time.Millisecond || before >= during {
		t.Errorf("oldest hold %s before the stall, %s during it: want short, then about the stall", before, during)
	}
	stopPipe()
	if err := <-pipeDone; err != nil {
		t.Fatal(err)
	}
	pipeDone <- nil
	feed.Flush()
	st := waitStatus(t, drv, func(s live.Status) bool { return s.Held == 0 && s.LagKnown && s.Lag == 0 && s.Received > 0 })
	if st.Delivered != st.Received {
		t.Errorf("status %+v", st)
	}
}

func waitStatus(t *testing.T, drv *live.Driver, ok func(live.Status) bool) live.Status {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := drv.Status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
