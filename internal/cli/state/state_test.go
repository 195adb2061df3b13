package state

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

const app = "shop-shipper"

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// receive is one business record a task's gate received: its channel
// (topic, partition), offset and clock.
type receive struct {
	topic  string
	p      int32
	off    int64
	causes map[string]int64 // "topic/p" → position
}

// fixture is a world of three topics of different partition counts and a
// process of three tasks, each task's gate run over the records it
// received; the changelog written from those gates, as a Parsley process
// writes it, in transactions.
type fixture struct {
	c     *kfake.Cluster
	ids   map[string]clock.TopicID
	gates map[int32]*gate.Gate
	// ready is a head written as held although nothing blocks it: the
	// process stopped before it ran it.
	ready clock.Channel
}

func (f *fixture) ch(topic string, p int32) clock.Channel {
	return clock.Channel{Topic: f.ids[topic], Partition: p}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	topics := map[string]int32{"orders": 3, "payments": 2, "shipments": 3}
	opts := []kfake.Opt{kfake.SeedTopics(3, parsley.ChangelogTopic(app))}
	for name, n := range topics {
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	f := &fixture{c: kafkatest.Cluster(t, opts...), ids: map[string]clock.TopicID{}, gates: map[int32]*gate.Gate{}}
	adm := kadm.NewClient(newWriter(t, f.c))
	md, err := adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		f.ids[td.Topic] = clock.TopicID(td.ID)
	}
	// Business logs: five records on every partition, three on
	// shipments, and an open transaction after the three on shipments/0.
	var recs []*kgo.Record
	for name, n := range topics {
		count := 5
		if name == "shipments" {
			count = 3
		}
		for p := range n {
			for range count {
				recs = append(recs, &kgo.Record{Topic: name, Partition: p, Value: []byte("x")})
			}
		}
	}
	kafkatest.Produce(t, f.c, recs...)
	open := newWriter(t, f.c, kgo.TransactionalID("shipments-tx"))
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.ProduceSync(context.Background(), &kgo.Record{Topic: "shipments", Partition: 0, Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// What each task received, in order. One head per cause:
	// task 0: orders/0@2 needs shipments/0@3, in the open transaction;
	//         payments/0@4 needs orders/0@2, held behind it.
	// task 1: orders/1@3 needs payments/1@3, not read yet (lagging).
	// task 2: orders/2@1 needs shipments/2@9, never written; and
	//         shipments/2@2, written held though nothing blocks it.
	plan := map[int32][]receive{
		0: append(append(run("orders", 0, 5, map[int64]map[string]int64{2: {"shipments/0": 3}}),
			run("shipments", 0, 3, nil)...), run("payments", 0, 5, map[int64]map[string]int64{4: {"orders/0": 2}})...),
		1: append(run("orders", 1, 4, map[int64]map[string]int64{3: {"payments/1": 3}}), run("payments", 1, 2, nil)...),
		2: append(run("orders", 2, 2, map[int64]map[string]int64{1: {"shipments/2": 9}}), run("shipments", 2, 2, nil)...),
	}
	scopes := map[int32][]string{0: {"orders", "payments", "shipments"}, 1: {"orders", "payments", "shipments"}, 2: {"orders", "shipments"}}
	tx := newWriter(t, f.c, kgo.TransactionalID(app+"-0"))
	for task := range int32(3) {
		var scope []clock.Channel
		for _, name := range scopes[task] {
			scope = append(scope, f.ch(name, task))
		}
		g, err := gate.New(scope)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range plan[task] {
			var es []clock.Entry
			for at, pos := range r.causes {
				name, p, _ := strings.Cut(at, "/")
				es = append(es, clock.Entry{Channel: f.ch(name, int32(p[0]-'0')), Position: pos})
			}
			if err := g.Receive(f.ch(r.topic, r.p), r.off, clock.MustNew(es...), nil); err != nil {
				t.Fatal(err)
			}
		}
		g.Drain(nil)
		f.gates[task] = g
	}
	f.ready = f.ch("shipments", 2)

	cl := parsley.ChangelogTopic(app)
	entry := func(p int32, k parsley.Key, v []byte) *kgo.Record {
		return &kgo.Record{Topic: cl, Partition: p, Key: parsley.AppendKey(nil, k), Value: v}
	}
	pos := func(n int64) []byte { return parsley.AppendPosition(nil, n) }
	held := func(ts int64, c clock.Clock) []byte {
		return parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: ts, Key: []byte("k"), Value: []byte("value"), Causes: c.Entries()})
	}
	// 1: the version and the bindings, twice (each partition repeats
	// them), and a held record later tombstoned.
	var first []*kgo.Record
	for task := range int32(3) {
		for range 2 {
			first = append(first, entry(task, parsley.Key{Tag: parsley.TagVersion}, []byte{1}))
			for _, name := range scopes[task] {
				first = append(first, entry(task, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, f.ids[name])))
			}
		}
		first = append(first, entry(task, parsley.Key{Tag: parsley.TagHeld, Channel: f.ch("orders", task), Position: 0}, held(1, clock.Clock{})))
	}
	txnDo(t, tx, true, first...)
	// 2: aborted — none of it may count.
	txnDo(t, tx, false, entry(1, parsley.Key{Tag: parsley.TagHeld, Channel: f.ch("payments", 1), Position: 1}, held(2, clock.Clock{})),
		entry(0, parsley.Key{Tag: parsley.TagFedUpTo, Channel: f.ch("orders", 0)}, pos(99)))
	// 3: the state of each gate; the tombstone of the delivered record.
	var state []*kgo.Record
	writtenAt := now.Add(-3 * time.Minute).UnixMilli()
	for task := range int32(3) {
		g := f.gates[task]
		state = append(state, entry(task, parsley.Key{Tag: parsley.TagHeld, Channel: f.ch("orders", task), Position: 0}, nil))
		for _, ch := range g.Scope() {
			state = append(state, entry(task, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, pos(g.Fed(ch))))
			for _, h := range g.Queue(ch) {
				state = append(state, entry(task, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: h.Offset}, held(writtenAt, h.Clock)))
			}
		}
	}
	// The ready head: received and written held, never run.
	state = append(state, entry(2, parsley.Key{Tag: parsley.TagFedUpTo, Channel: f.ready}, pos(2)),
		entry(2, parsley.Key{Tag: parsley.TagHeld, Channel: f.ready, Position: 2}, held(writtenAt, clock.Clock{})))
	txnDo(t, tx, true, state...)
	// 4: left open at the end of task 1's partition: it must neither
	// count nor stall the read.
	tx2 := newWriter(t, f.c, kgo.TransactionalID(app+"-1"))
	if err := tx2.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx2.ProduceSync(context.Background(), entry(1, parsley.Key{Tag: parsley.TagFedUpTo, Channel: f.ch("orders", 1)}, pos(77))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return f
}

// run is records 0…n−1 of topic/p, with the given clocks at some offsets.
func run(topic string, p int32, n int64, causes map[int64]map[string]int64) []receive {
	var out []receive
	for off := range n {
		out = append(out, receive{topic: topic, p: p, off: off, causes: causes[off]})
	}
	return out
}

func newWriter(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func txnDo(t *testing.T, cl *kgo.Client, commit bool, rs ...*kgo.Record) {
	t.Helper()
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

// runState runs causalctl state with args against c.
func runState(t *testing.T, c *kfake.Cluster, args ...string) (string, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cmdutiltest.Factory(ios, strings.Join(c.ListenAddrs(), ","))
	f.Now = func() time.Time { return now }
	err := cmdutiltest.Execute(cmdutiltest.AsRoot(NewCmdState(f, nil)), args...)
	if err != nil && cmdutil.ExitCode(err) != cmdutil.ExitFound {
		t.Logf("stderr %s, error %v", errOut, err)
	}
	return out.String(), cmdutil.ExitCode(err)
}

// TestStateAgainstTheGates: the JSON, field by field, against each task's
// own gate over the same records, with one head per cause.
func TestStateAgainstTheGates(t *testing.T) {
	f := newFixture(t)
	out, code := runState(t, f.c, "--app", app, "--txn-wait", "100ms", "-o", "json")
	if code != cmdutil.ExitFound {
		t.Fatalf("exit %d, want 4; output %s", code, out)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.App == nil || *rep.App != app || rep.Changelog != parsley.ChangelogTopic(app) || rep.Group == nil || rep.Group.State != "Dead" {
		t.Errorf("header %+v", rep)
	}
	if len(rep.Tasks) != 3 {
		t.Fatalf("%d tasks", len(rep.Tasks))
	}
	// orders/1@3 is lagging in the store: read on from where the task
	// resumes, it delivers, so it is catching up, no held head.
	wantCause := map[string]string{
		"orders/0": "open-transaction", "payments/0": "held",
		"orders/2": "beyond-log-end", "shipments/2": "ready",
	}
	wantRoot := map[string]string{"orders/0": "orders/0@2", "payments/0": "orders/0@2", "orders/2": "orders/2@1"}
	catching := map[string]bool{"orders/1": true}
	seen := 0
	for _, jt := range rep.Tasks {
		g := f.gates[jt.Task]
		if jt.ScopeSource != inspect.ScopeState || jt.AssignedTo != nil {
			t.Errorf("task %d: scope from %s, assigned %v", jt.Task, jt.ScopeSource, jt.AssignedTo)
		}
		// The open transaction of task 1 is neither counted nor waited
		// for beyond the flag.
		if behind := jt.BehindTransactionFrom != nil; behind != (jt.Task == 1) {
			t.Errorf("task %d: behind a transaction from %v", jt.Task, jt.BehindTransactionFrom)
		}
		if len(jt.Channels) != len(g.Scope()) {
			t.Errorf("task %d: %d channels, the gate has %d", jt.Task, len(jt.Channels), len(g.Scope()))
		}
		for _, jc := range jt.Channels {
			ch := f.ch(strings.Split(jc.Channel, "/")[0], jt.Task)
			wantSettled, wantHeld, wantFed := g.Settled(ch), g.Depth(ch), g.Fed(ch)
			if ch == f.ready {
				wantSettled, wantHeld, wantFed = 1, 1, 2
			}
			if jc.TopicID != ch.Topic.String() || val(jc.Settled) != wantSettled || jc.Held != wantHeld || val(jc.FedUpTo) != wantFed {
				t.Errorf("task %d %s: settled %d held %d fed %d, the gate's %d %d %d", jt.Task, jc.Channel,
					val(jc.Settled), jc.Held, val(jc.FedUpTo), wantSettled, wantHeld, wantFed)
			}
			if jc.Committed != nil || jc.Frontier != nil {
				t.Errorf("%s: committed %v frontier %v, want null", jc.Channel, jc.Committed, jc.Frontier)
			}
			h, ok := g.Head(ch)
			if ch == f.ready {
				h, ok = gate.Held{Offset: 2}, true
			}
			if catching[jc.Channel] {
				if jc.Head != nil || !slices.Contains(jt.CatchingUp, jc.Channel+"@"+strconv.FormatInt(h.Offset, 10)) {
					t.Errorf("%s: head %+v, catching up %v: want no head, catching up from @%d", jc.Channel, jc.Head, jt.CatchingUp, h.Offset)
				}
				continue
			}
			if (jc.Head != nil) != ok {
				t.Errorf("%s: head %+v, the gate's %v", jc.Channel, jc.Head, ok)
				continue
			}
			if !ok {
				continue
			}
			seen++
			jh := jc.Head
			if jh.Offset != h.Offset || string(jh.Cause) != wantCause[jc.Channel] {
				t.Errorf("%s: head @%d cause %s, want @%d %s", jc.Channel, jh.Offset, jh.Cause, h.Offset, wantCause[jc.Channel])
			}
			if r := wantRoot[jc.Channel]; jh.Root.String() != r {
				t.Errorf("%s: root %v, want %q", jc.Channel, jh.Root, r)
			}
			if val(jh.WrittenMsAgo) != (3*time.Minute).Milliseconds() || val64(jh.KeySize) != 1 || val64(jh.ValueSize) != 5 {
				t.Errorf("%s: written %v ago, sizes %v %v", jc.Channel, jh.WrittenMsAgo, jh.KeySize, jh.ValueSize)
			}
			if ch != f.ready && len(jh.Blockers) != len(g.Blockers(ch)) {
				t.Errorf("%s: blockers %+v, the gate's %v", jc.Channel, jh.Blockers, g.Blockers(ch))
			}
			for i, b := range jh.Blockers {
				gb := g.Blockers(ch)[i]
				if gb.Channel == f.ready {
					gb.Settled = 2 // the ready head delivers when the gate is seeded
				}
				if b.Required != gb.Required || val(b.Settled) != gb.Settled {
					t.Errorf("%s: blocker %+v, the gate's %+v", jc.Channel, b, gb)
				}
			}
		}
	}
	if seen != len(wantCause) {
		t.Errorf("%d heads, want %d", seen, len(wantCause))
	}
}

func val(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func val64(p *int) int64 {
	if p == nil {
		return -1
	}
	return int64(*p)
}

// TestCorruptState: each corrupt entry is refused by name — partition,
// offset, key — with exit 1, after everything else was reported.
func TestCorruptState(t *testing.T) {
	ch := clock.Channel{Topic: clock.TopicID{0xab, 15: 1}, Partition: 0}
	good := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: 5, Causes: []clock.Entry{}})
	cases := []struct {
		name   string
		key    []byte
		value  []byte
		reason string
	}{
		{"held-record version", parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: 3}), append([]byte{2}, good[1:]...), "version"},
		{"trailing bytes", parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: 3}), append(good, 0), ""},
		{"short position", parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}), []byte{0, 1}, ""},
		{"unknown key", []byte{'z', 1, 2}, []byte{1}, ""},
		{"store version", []byte{'v'}, []byte{9}, "version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := parsley.ChangelogTopic(app)
			c := kafkatest.Cluster(t, kfake.SeedTopics(2, topic))
			v := []byte{1}
			if tc.key[0] == 'v' {
				v = tc.value
			}
			kafkatest.Produce(t, c,
				&kgo.Record{Topic: topic, Partition: 0, Key: []byte{'v'}, Value: v},
				&kgo.Record{Topic: topic, Partition: 0, Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}), Value: parsley.AppendPosition(nil, 3)},
				&kgo.Record{Topic: topic, Partition: 1, Key: []byte{'v'}, Value: []byte{1}},
				&kgo.Record{Topic: topic, Partition: 1, Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}), Value: parsley.AppendPosition(nil, 7)})
			if tc.key[0] != 'v' {
				kafkatest.Produce(t, c, &kgo.Record{Topic: topic, Partition: 0, Key: tc.key, Value: tc.value})
			}
			out, code := runState(t, c, "--app", app, "-o", "json")
			if code != cmdutil.ExitFailure {
				t.Fatalf("exit %d, want 1: %s", code, out)
			}
			var rep jsonReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			wantOff := int64(2)
			if tc.key[0] == 'v' {
				wantOff = 0
			}
			if len(rep.Corrupt) != 1 || rep.Corrupt[0].Partition != 0 || val(rep.Corrupt[0].Offset) != wantOff ||
				rep.Corrupt[0].Key != hexOf(tc.key) || !strings.Contains(rep.Corrupt[0].Reason, tc.reason) {
				t.Errorf("corrupt %+v, want partition 0 offset %d key %x", rep.Corrupt, wantOff, tc.key)
			}
			// Nothing else is lost: task 1 whole, and task 0's other entries.
			if len(rep.Tasks) != 2 || len(rep.Tasks[1].Channels) != 1 || val(rep.Tasks[1].Channels[0].FedUpTo) != 7 {
				t.Fatalf("tasks %+v", rep.Tasks)
			}
			if tc.name != "short position" && (len(rep.Tasks[0].Channels) != 1 || val(rep.Tasks[0].Channels[0].FedUpTo) != 3) {
				t.Errorf("task 0 %+v", rep.Tasks[0])
			}
			text, _ := runState(t, c, "--app", app)
			if !strings.Contains(text, "CORRUPT: partition 0 offset") || !strings.Contains(text, hexOf(tc.key)) {
				t.Errorf("text does not name the entry:\n%s", text)
			}
		})
	}
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// TestStateText: the text names every task, the heads by root and the
// causes.
func TestStateText(t *testing.T) {
	f := newFixture(t)
	out, code := runState(t, f.c, "--app", app, "--txn-wait", "100ms")
	if code != cmdutil.ExitFound {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Task 0:", "Task 1:", "behind an open transaction from", "Task 2:",
		"open-transaction at orders/0@2", "└─ payments/0@4", "catching up: orders/1@3", "beyond-log-end at orders/2@1",
		"ready: shipments/2@2", "next step:"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}
