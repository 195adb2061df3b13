package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/record"
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
func readAll(t *testing.T, addr string) []*record.Item {
	t.Helper()
	return readTopics(t, addr, "orders,payments,shipments")
}

// readTopics reads topics (comma-separated) read_committed from the log
// start to the end.
func readTopics(t *testing.T, addr, topics string) []*record.Item {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sels, _ := kafka.ParseTopicSels([]string{topics})
	spec, _ := kafka.ParseOffsets("start", time.Now())
	r, err := cl.OpenRange(ctx, sels, spec)
	if err != nil {
		t.Fatal(err)
	}
	var items []*record.Item
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

type sliceSource struct{ items []*record.Item }

func (s *sliceSource) Next() (*record.Item, error) {
	if len(s.items) == 0 {
		return nil, io.EOF
	}
	it := s.items[0]
	s.items = s.items[1:]
	return it, nil
}

func recordID(t *testing.T, it *record.Item) int {
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
			items, records, positions := readTruth(t, d)
			truth := d.Truth()
			if records < 150 {
				t.Fatalf("%d records read", records)
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
					r, err := engine.New(engine.Config{Scope: scope, Names: d.Names()})
					if err != nil {
						t.Fatal(err)
					}
					o := newOracle(truth, scope)
					maxHeld := int64(0)
					err = engine.Run(context.Background(), src, r, func(ev *engine.Event) error {
						if ev.Type == engine.EventDeliver {
							o.deliver(ev.Channel, ev.Offset)
						}
						if ev.Type == engine.EventDrop {
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

// readTruth reads d's topics and checks them against its truth: every
// record committed is there once, at the offset the simulation recorded,
// and nothing else is. It returns the items read and how many of them are
// records and positions.
func readTruth(t *testing.T, d *demo.Demo) (items []*record.Item, records, positions int) {
	t.Helper()
	items = readAll(t, d.Addr())
	truth := d.Truth()
	byID := map[int]demo.TrueRecord{}
	for _, r := range truth {
		byID[r.ID] = r
	}
	seen := map[int]bool{}
	for _, it := range items {
		if it.Kind != record.KindRecord {
			positions++
			continue
		}
		records++
		id := recordID(t, it)
		r, ok := byID[id]
		if ch := (clock.Channel{Topic: it.TopicID, Partition: it.Partition}); !ok || seen[id] || r.Channel != ch || r.Offset != it.Offset {
			t.Fatalf("%s/%d@%d: record %d (seen before: %v); the simulation recorded %+v", it.Topic, it.Partition, it.Offset, id, seen[id], r)
		}
		seen[id] = true
	}
	if records != len(truth) {
		t.Fatalf("%d records read, %d written", records, len(truth))
	}
	return items, records, positions
}

// refuseOnce makes d's broker refuse the first produce request of the
// transactional producer txid with OUT_OF_ORDER_SEQUENCE_NUMBER, writing
// none of it, as the embedded broker has been seen to do now and then
// under load. refused is closed once it has.
func refuseOnce(d *demo.Demo, txid string) (refused <-chan struct{}) {
	done := make(chan struct{})
	demo.Cluster(d).ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.ProduceRequest)
		if req.TransactionID == nil || *req.TransactionID != txid {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode, sp.BaseOffset = rp.Partition, kerr.OutOfOrderSequenceNumber.Code, -1
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		close(done)
		return resp, nil, true
	})
	return done
}

// TestRefusedBatchRetried checks that a transaction whose batch the broker
// refuses is aborted and written again in a new one, as an exactly-once
// producer does: the run goes on, and the log holds every committed
// record once, where the simulation says.
func TestRefusedBatchRetried(t *testing.T) {
	for _, txid := range []string{"causalctl-demo-shop", "causalctl-demo-shipping"} {
		t.Run(txid, func(t *testing.T) {
			d := start(t, demo.Config{Seed: 3, RecordTruth: true, Steps: 30})
			refused := refuseOnce(d, txid)
			if err := d.Run(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-refused:
			default:
				t.Fatal("the broker refused nothing: the test shows nothing")
			}
			readTruth(t, d)
		})
	}
}

// TestUnpublishedCommitsRetried checks that a commit franz-go ends as an
// abort — EndTransaction(TryCommit) run before the producer published the
// partitions written, which sends an abort and returns nil
// (docs/troubleshooting.md) — is noticed and written again in a new
// transaction: every record the pipeline recorded as committed, the late
// producer's among them, is read read_committed at the offset it
// recorded.
func TestUnpublishedCommitsRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault demo.Fault
		hits  int // the producers that commit
	}{{"services", demo.NoFault, 3}, {"late-producer", demo.FaultOpenTxn, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			d := start(t, demo.Config{Seed: 3, RecordTruth: true, Fault: tc.fault, FaultStep: 5, Steps: 5 + demo.OpenTxnSteps + 5})
			hits := demo.UnpublishFirstCommits(d)
			if err := d.Run(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if hits() != tc.hits {
				t.Fatalf("%d commits met unpublished partitions, want %d: the test shows nothing", hits(), tc.hits)
			}
			readTruth(t, d)
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
	f := cmdutiltest.Factory(ios, "")
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

// TestSlowFaultLive watches the notifier through a live driver over the
// embedded broker under the slow fault: once the fault is injected, a head
// is held on a payments channel that lags below its log end (the stalled
// feed), and once the stall is over and the node has caught up nothing is
// held. How long holds last is TestSlowFaultHoldAges's, on a fake clock.
func TestSlowFaultLive(t *testing.T) {
	d := start(t, demo.Config{Seed: 6, Fault: demo.FaultSlow, Tick: 20 * time.Millisecond, FaultStep: 25, Stall: 1200 * time.Millisecond,
		Lags: map[string]time.Duration{demo.TopicOrders: 100 * time.Millisecond}})
	ctx := testCtx(t)
	cl, fol, err := d.Follow(ctx, kafka.FetchWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	feed := d.Watch(fol)
	defer feed.Close()
	drv, err := live.New(feed, live.Config{Replay: engine.Config{Scope: d.Channels(), Names: cl.Names()}, Interval: 20 * time.Millisecond})
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

	select {
	case <-d.Faulted():
	case <-ctx.Done():
		t.Fatal("the fault was never injected")
	}
	for stalled := false; !stalled; {
		select {
		case s := <-drv.Snapshots():
			for _, h := range s.Heads {
				for _, b := range h.Blockers {
					stalled = stalled || strings.HasPrefix(b.Channel, demo.TopicPayments+"/") && b.Cause == inspect.CauseLagging
				}
			}
		case <-ctx.Done():
			t.Fatalf("no head held on a lagging payments channel after the fault; status %+v", drv.Status())
		}
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

// TestSlowFaultHoldAges replays a slow-fault run through the notifier's
// feed and a live driver on synctest's fake clock, each step's records
// written at step×tick as a follower at the log end reads them: hold ages
// stay within the orders lag before the fault, reach about the stall while
// the payments feed stalls, fall back within the lag once it has
// recovered, and nothing is held once the node has caught up.
func TestSlowFaultHoldAges(t *testing.T) {
	const (
		tick      = 20 * time.Millisecond
		lag       = 100 * time.Millisecond // of orders
		stall     = 1200 * time.Millisecond
		faultStep = 25
		steps     = 150
	)
	d := runSteps(t, demo.Config{Seed: 6, Fault: demo.FaultSlow, FaultStep: faultStep, Stall: stall, RecordTruth: true,
		Lags: map[string]time.Duration{demo.TopicOrders: lag}}, steps)
	items := readAll(t, d.Addr())
	items, stepOf := byStep(t, items, d.Truth())
	records := 0
	for _, it := range items {
		if it.Kind == record.KindRecord {
			records++
		}
	}

	synctest.Test(t, func(t *testing.T) {
		src := &pacedSource{items: items, steps: stepOf, tick: tick, faultStep: faultStep,
			faulted: make(chan struct{}), start: time.Now(), ends: map[clock.Channel]int64{}}
		faulted := src.faulted
		feed := d.WatchFaulted(src, faulted)
		drv, err := live.New(feed, live.Config{Replay: engine.Config{Scope: d.Channels(), Names: d.Names()}, Interval: tick})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- drv.Run(ctx) }()
		defer func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("driver: %v", err)
			}
			feed.Close()
		}()

		// Status is as of the latest snapshot, one tick old at most.
		var before, during, after time.Duration
		var faultAt time.Time
		for range steps + (stall+lag)/tick + 10 {
			time.Sleep(tick)
			age := drv.Status().OldestHold.D
			select {
			case <-faulted:
				if faultAt.IsZero() {
					faultAt = time.Now()
				}
			default:
			}
			switch since := time.Since(faultAt); {
			case faultAt.IsZero() || since <= tick:
				before = max(before, age)
			case since <= stall:
				during = max(during, age)
			case since > stall+lag+tick:
				after = max(after, age)
			}
		}
		t.Logf("oldest hold: %s before the fault, %s during the stall, %s after it", before, during, after)
		if before == 0 || before > lag {
			t.Errorf("oldest hold before the fault %s: want some, no older than the orders lag %s", before, lag)
		}
		if during < stall-4*tick || during > stall { // the first stalled hold begins a tick after the fault; status is a tick old
			t.Errorf("oldest hold during the stall %s: want about the stall, %s", during, stall)
		}
		if after == 0 || after > lag {
			t.Errorf("oldest hold after the stall %s: want some, no older than the orders lag %s", after, lag)
		}
		feed.Flush()
		time.Sleep(2 * tick)
		st := drv.Status()
		if st.Held != 0 || !st.LagKnown || st.Lag != 0 || st.Received != int64(records) || st.Delivered != st.Received {
			t.Errorf("after the flush: status %+v, want all %d records delivered", st, records)
		}
	})
}

// byStep orders items by the step at which they were written, keeping
// each channel's order, and returns them with their steps: a record's from
// the truth, a position item's that of the record before it on its channel
// (it follows its transaction), or of the one after it when none is
// before.
func byStep(t *testing.T, items []*record.Item, truth []demo.TrueRecord) ([]*record.Item, []int) {
	t.Helper()
	type at struct {
		ch  clock.Channel
		off int64
	}
	written := map[at]int{}
	for _, r := range truth {
		written[at{r.Channel, r.Offset}] = r.Step
	}
	steps := make([]int, len(items))
	last := map[clock.Channel]int{}
	var unset []int // position items before their channel's first record
	for i, it := range items {
		ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
		if it.Kind != record.KindRecord {
			s, ok := last[ch]
			steps[i] = s
			if !ok {
				unset = append(unset, i)
			}
			continue
		}
		s, ok := written[at{ch, it.Offset}]
		if !ok {
			t.Fatalf("%s/%d@%d: not in the truth", it.Topic, it.Partition, it.Offset)
		}
		steps[i], last[ch] = s, s
		for _, j := range unset {
			if items[j].TopicID == ch.Topic && items[j].Partition == ch.Partition {
				steps[j] = s
			}
		}
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return steps[i] - steps[j] })
	sorted, sortedSteps := make([]*record.Item, len(items)), make([]int, len(items))
	for k, i := range order {
		sorted[k], sortedSteps[k] = items[i], steps[i]
	}
	return sorted, sortedSteps
}

// pacedSource is a live.Source replaying a recorded run as a follower at
// the log end reads it: items of step s at start+s×tick (in their order,
// which keeps each channel's), faulted closed once the fault step's are
// out. Then it waits, as a follower does.
type pacedSource struct {
	items     []*record.Item
	steps     []int
	tick      time.Duration
	faultStep int
	faulted   chan struct{}
	start     time.Time

	mu   sync.Mutex
	ends map[clock.Channel]int64
}

func (s *pacedSource) Next(ctx context.Context) (*record.Item, error) {
	if len(s.items) == 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	step := s.steps[0]
	if step > s.faultStep && s.faulted != nil {
		close(s.faulted)
		s.faulted = nil
	}
	if wait := time.Until(s.start.Add(time.Duration(step) * s.tick)); wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	it := s.items[0]
	s.items, s.steps = s.items[1:], s.steps[1:]
	s.mu.Lock()
	ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
	switch it.Kind {
	case record.KindRecord:
		s.ends[ch] = max(s.ends[ch], it.Offset+1)
	case record.KindPosition:
		s.ends[ch] = max(s.ends[ch], it.Offset)
	}
	s.mu.Unlock()
	return it, nil
}

func (s *pacedSource) LogEnds() map[clock.Channel]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.ends)
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
