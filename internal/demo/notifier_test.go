package demo_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// readChangelog reads the notifier's changelog read_committed from its
// start to its end into one decoded store per partition (task).
func readChangelog(t *testing.T, addr string) map[int32]*parsley.Task {
	t.Helper()
	stores := map[int32]*parsley.Store{}
	for _, it := range readTopics(t, addr, demo.NotifierChangelog) {
		if it.Kind != record.KindRecord {
			continue // a position: a marker or a gap
		}
		s := stores[it.Partition]
		if s == nil {
			s = parsley.NewStore(it.Partition)
			stores[it.Partition] = s
		}
		s.Apply(it.Offset, it.Key, it.Value)
	}
	tasks := map[int32]*parsley.Task{}
	for p, s := range stores {
		tasks[p] = s.Decode()
	}
	return tasks
}

// diffState lists how the decoded changelog differs from the notifier's
// own gate state.
func diffState(d *demo.Demo, tasks map[int32]*parsley.Task, state []demo.TaskState) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if len(tasks) != len(state) {
		add("%d changelog partitions, %d tasks", len(tasks), len(state))
	}
	names := d.Names()
	for _, ts := range state {
		task := tasks[ts.Task]
		if task == nil {
			add("task %d: no changelog partition", ts.Task)
			continue
		}
		if task.Version != 1 || len(task.Corrupt) > 0 {
			add("task %d: version %d, corrupt %v", ts.Task, task.Version, task.Corrupt)
		}
		for _, topic := range demo.Topics {
			if task.Names[topic.Name] != d.TopicID(topic.Name) {
				add("task %d: name %s bound to %v", ts.Task, topic.Name, task.Names[topic.Name])
			}
		}
		var scope []clock.Channel
		for _, cs := range ts.Channels {
			scope = append(scope, cs.Channel)
			ch := names.Channel(cs.Channel)
			c := task.Channel(cs.Channel)
			if c == nil {
				if cs.FedUpTo >= 0 || len(cs.Held) > 0 {
					add("task %d: %s: not in the store", ts.Task, ch)
				}
				continue
			}
			if c.FedUpTo != cs.FedUpTo || c.Settled() != cs.Settled {
				add("task %d: %s: store fed %d settled %d, gate fed %d settled %d", ts.Task, ch, c.FedUpTo, c.Settled(), cs.FedUpTo, cs.Settled)
			}
			var held []int64
			for i, h := range c.Held {
				held = append(held, h.Offset)
				if i < len(cs.Clocks) && !slices.Equal(h.Record.Causes, cs.Clocks[i].Entries()) {
					add("task %d: %s@%d: store causes %v, gate clock %v", ts.Task, ch, h.Offset, h.Record.Causes, cs.Clocks[i])
				}
			}
			if !slices.Equal(held, cs.Held) {
				add("task %d: %s: store holds %v, gate %v", ts.Task, ch, held, cs.Held)
			}
		}
		for _, c := range task.Channels {
			if !slices.Contains(scope, c.Channel) {
				add("task %d: store names %s, outside its scope", ts.Task, names.Channel(c.Channel))
			}
		}
	}
	return diffs
}

// runNotifier runs a dangling-fault demo with its notifier until the
// notifier received everything written, then stops it.
func runNotifier(t *testing.T, sabotage bool) (*demo.Demo, []demo.TaskState) {
	t.Helper()
	return runNotifierWith(t, func(_ *demo.Demo, n *demo.Notifier) {
		if sabotage {
			demo.SkipTombstones(n)
		}
	})
}

// runNotifierWith is runNotifier calling before once the notifier has
// started, before the pipeline runs.
func runNotifierWith(t *testing.T, before func(*demo.Demo, *demo.Notifier)) (*demo.Demo, []demo.TaskState) {
	t.Helper()
	return runNotifierOn(t, notifierDemo(t), before)
}

// notifierDemo starts the demo runNotifier runs.
func notifierDemo(t *testing.T) *demo.Demo {
	t.Helper()
	return start(t, demo.Config{Seed: 4, Fault: demo.FaultDangling, FaultStep: 8, Steps: 40,
		Lags: map[string]time.Duration{demo.TopicOrders: 300 * time.Millisecond, demo.TopicPayments: 100 * time.Millisecond}})
}

// runNotifierOn is runNotifierWith on the demo d, not yet run.
func runNotifierOn(t *testing.T, d *demo.Demo, before func(*demo.Demo, *demo.Notifier)) (*demo.Demo, []demo.TaskState) {
	t.Helper()
	ctx := testCtx(t)
	n, err := d.StartNotifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before(d, n)
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitRecords(ctx, d.Produced()); err != nil {
		t.Fatal(err)
	}
	n.Stop()
	if err := n.Err(); err != nil {
		t.Fatal(err)
	}
	return d, n.State()
}

// TestNotifierState checks that the notifier's changelog, read back as
// `state` reads it, is its gates' state at the moment it stopped: every
// channel's fed-up-to and settled position, every held record and its
// clock, the dangling shipment among them; and that its group's committed
// offsets are where it resumes, fed-up-to + 1.
func TestNotifierState(t *testing.T) {
	d, state := runNotifier(t, false)
	tasks := readChangelog(t, d.Addr())
	for _, diff := range diffState(d, tasks, state) {
		t.Error(diff)
	}
	pay1 := clock.Channel{Topic: d.TopicID(demo.TopicPayments), Partition: 1}
	dangling := false
	for _, task := range tasks {
		for _, c := range task.Channels {
			if h, ok := c.Head(); ok {
				if pos, ok := clockOf(t, h.Record).Get(pay1); ok && pos > 100000 && c.Channel.Topic == d.TopicID(demo.TopicShipments) {
					dangling = true
				}
			}
		}
	}
	if !dangling {
		t.Error("no task holds a shipment claiming payments/1 beyond its log end")
	}

	cl, err := kafka.Dial(testCtx(t), kafka.Config{Brokers: []string{d.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offsets, err := cl.GroupOffsets(testCtx(t), demo.NotifierApp)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ts := range state {
		for _, cs := range ts.Channels {
			n++
			if got, ok := offsets[cs.Channel]; !ok || got != cs.Committed || got != cs.FedUpTo+1 {
				t.Errorf("%s: committed %d (%v), notifier %d, fed up to %d", d.Names().Channel(cs.Channel), got, ok, cs.Committed, cs.FedUpTo)
			}
		}
	}
	if n != len(d.Channels()) || len(offsets) != n {
		t.Errorf("%d channels in the tasks, %d committed offsets, want %d", n, len(offsets), len(d.Channels()))
	}
}

// TestNotifierUnpublishedCommit checks that the notifier notices a commit
// franz-go ends as an abort (TestUnpublishedCommitsRetried) — here its
// first, of its store's version and names and the group's initial
// offsets — and commits the same entries and offsets in a new
// transaction: its changelog still says what its gates hold.
func TestNotifierUnpublishedCommit(t *testing.T) {
	d := notifierDemo(t)
	hits := demo.UnpublishFirstCommits(d, demo.NotifierTxnID)
	d, state := runNotifierOn(t, d, func(*demo.Demo, *demo.Notifier) {})
	if hits() != 1 {
		t.Fatalf("%d commits of the notifier met unpublished partitions, want 1: the test shows nothing", hits())
	}
	for _, diff := range diffState(d, readChangelog(t, d.Addr()), state) {
		t.Error(diff)
	}
}

// TestNotifierRefusedBatch checks that a notifier whose batch the broker
// refuses aborts its transaction and commits the same entries and offsets
// in a new one: its changelog still says what its gates hold.
func TestNotifierRefusedBatch(t *testing.T) {
	var refused <-chan struct{}
	d, state := runNotifierWith(t, func(d *demo.Demo, _ *demo.Notifier) { refused = refuseOnce(d, demo.NotifierTxnID) })
	select {
	case <-refused:
	default:
		t.Fatal("the broker refused nothing: the test shows nothing")
	}
	for _, diff := range diffState(d, readChangelog(t, d.Addr()), state) {
		t.Error(diff)
	}
}

func clockOf(t *testing.T, r parsley.HeldRecord) clock.Clock {
	t.Helper()
	c, err := r.Clock()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNotifierOpenTxn checks that an open transaction shows in the
// notifier's state: task 1 holds a shipment claiming payments/1 past what
// it could read of it (its fed-up-to stops below the open transaction).
func TestNotifierOpenTxn(t *testing.T) {
	d := start(t, demo.Config{Seed: 4, Fault: demo.FaultOpenTxn, FaultStep: 8, Steps: 30, Lags: map[string]time.Duration{}})
	ctx := testCtx(t)
	n, err := d.StartNotifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	pay1 := clock.Channel{Topic: d.TopicID(demo.TopicPayments), Partition: 1}
	ship1 := clock.Channel{Topic: d.TopicID(demo.TopicShipments), Partition: 1}
	behind := func(ts []demo.TaskState) bool {
		var fed int64 = -1
		var head clock.Clock
		for _, cs := range ts[1].Channels {
			switch {
			case cs.Channel == pay1:
				fed = cs.FedUpTo
			case cs.Channel == ship1 && len(cs.Clocks) > 0:
				head = cs.Clocks[0]
			}
		}
		pos, ok := head.Get(pay1)
		return ok && pos > fed
	}
	if err := n.Wait(ctx, behind); err != nil {
		t.Fatal(err)
	}
	n.Stop()
	state := n.State()
	tasks := readChangelog(t, d.Addr())
	for _, diff := range diffState(d, tasks, state) {
		t.Error(diff)
	}
	h, ok := tasks[1].Channel(ship1).Head()
	if !ok {
		t.Fatal("task 1 holds nothing on shipments/1")
	}
	if pos, _ := clockOf(t, h.Record).Get(pay1); pos <= tasks[1].Channel(pay1).FedUpTo {
		t.Errorf("the head of shipments/1 claims payments/1@%d, fed up to %d", pos, tasks[1].Channel(pay1).FedUpTo)
	}
}

// TestNotifierStateReference proves TestNotifierState's comparison can
// fail: a writer that never tombstones delivered records leaves held
// records the gates no longer hold.
func TestNotifierStateReference(t *testing.T) {
	d, state := runNotifier(t, true)
	if diffs := diffState(d, readChangelog(t, d.Addr()), state); len(diffs) == 0 {
		t.Fatal("a changelog without tombstones matched the gates' state")
	}
}

// TestNotifierStop checks that a stopped notifier writes nothing more
// while the pipeline goes on, and that its group keeps its offsets and
// loses its member.
func TestNotifierStop(t *testing.T) {
	d := start(t, demo.Config{Seed: 2, Steps: 40, Lags: map[string]time.Duration{}})
	ctx := testCtx(t)
	n, err := d.StartNotifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, d.Addr()))
	members := func() int {
		t.Helper()
		gs, err := adm.DescribeGroups(ctx, demo.NotifierApp)
		if err != nil {
			t.Error(err)
			return -1
		}
		return len(gs[demo.NotifierApp].Members)
	}
	ends := func() map[int32]int64 {
		t.Helper()
		l, err := adm.ListEndOffsets(ctx, demo.NotifierChangelog)
		if err != nil {
			t.Error(err)
		}
		out := map[int32]int64{}
		l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
		return out
	}
	select {
	case <-n.Joined():
	case <-ctx.Done():
		t.Fatal("the notifier's member never joined")
	}
	if m := members(); m != 1 {
		t.Errorf("running: %d members, want 1", m)
	}
	var before map[int32]int64
	var produced, received int64
	demo.OnStep(d, func(step int) {
		if step != 15 {
			return
		}
		if err := n.WaitRecords(ctx, 1); err != nil {
			t.Error(err)
		}
		n.Stop()
		if err := n.Err(); err != nil {
			t.Error(err)
		}
		before, produced, received = ends(), d.Produced(), n.Records()
	})
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if d.Produced() <= produced {
		t.Fatalf("the pipeline wrote nothing after the notifier stopped")
	}
	if after := ends(); !maps.Equal(before, after) {
		t.Errorf("the changelog's ends moved after Stop: %v, then %v", before, after)
	}
	if n.Records() != received {
		t.Errorf("received %d records after Stop", n.Records()-received)
	}
	if m := members(); m != 0 {
		t.Errorf("stopped: %d members, want 0", m)
	}
	offs, err := adm.FetchOffsets(ctx, demo.NotifierApp)
	if err != nil || len(offs) == 0 {
		t.Errorf("stopped: offsets %v, %v", offs, err)
	}
}

func newClient(t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestNotifierFailsClosed checks that an undecodable header ends the
// notifier as it ends Parsley: its error names the code, what it received
// before is its committed state, its offsets stop below the record, and
// its member leaves the group.
func TestNotifierFailsClosed(t *testing.T) {
	d := start(t, demo.Config{Seed: 3, Fault: demo.FaultUndecodable, FaultStep: 8, Steps: 25, Lags: map[string]time.Duration{}})
	ctx := testCtx(t)
	n, err := d.StartNotifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.Joined():
	case <-ctx.Done():
		t.Fatal("the notifier's member never joined")
	}
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.Done():
	case <-ctx.Done():
		t.Fatal("the notifier did not fail closed")
	}
	ie, ok := engine.FailureOf(n.Err())
	if !ok || ie.Code != "truncated" || !strings.HasPrefix(ie.Channel, "shipments/") {
		t.Fatalf("notifier error %v", n.Err())
	}
	state := n.State()
	for _, diff := range diffState(d, readChangelog(t, d.Addr()), state) {
		t.Error(diff)
	}
	for _, ts := range state {
		for _, cs := range ts.Channels {
			if d.Names().Channel(cs.Channel) == ie.Channel && cs.Committed > ie.Offset {
				t.Errorf("%s: committed %d, past the undecodable record at %d", ie.Channel, cs.Committed, ie.Offset)
			}
		}
	}
	gs, err := kadm.NewClient(newClient(t, d.Addr())).DescribeGroups(ctx, demo.NotifierApp)
	if err != nil {
		t.Fatal(err)
	}
	if m := len(gs[demo.NotifierApp].Members); m != 0 {
		t.Errorf("failed: %d members, want 0", m)
	}
}
