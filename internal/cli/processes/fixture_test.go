package processes

import (
	"context"
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
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// world is a kfake cluster and the topic IDs it gave.
type world struct {
	c   *kfake.Cluster
	adm *kadm.Client
	ids map[string]clock.TopicID
}

func newWorld(t testing.TB, topics map[string]int32) *world {
	t.Helper()
	var opts []kfake.Opt
	for name, n := range topics {
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	w := &world{c: kafkatest.Cluster(t, opts...), ids: map[string]clock.TopicID{}}
	w.adm = kadm.NewClient(w.client(t))
	md, err := w.adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		w.ids[td.Topic] = clock.TopicID(td.ID)
	}
	return w
}

func (w *world) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(w.c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (w *world) ch(topic string, p int32) clock.Channel {
	return clock.Channel{Topic: w.ids[topic], Partition: p}
}

// fill writes n records to every partition of topic.
func (w *world) fill(t testing.TB, topic string, parts int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for p := range parts {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x"), Timestamp: now.Add(-time.Hour)})
		}
	}
	kafkatest.Produce(t, w.c, recs...)
}

// held is one held record of a store: its channel, offset, write time
// (−1: unknown) and causes ("topic/p" → position).
type held struct {
	topic  string
	off    int64
	ts     int64
	causes map[string]int64
}

// task is one task's store: fed-up-to per topic, its held records.
type task struct {
	fed  map[string]int64
	held []held
}

// store writes app's ordering changelog, one partition per task, in one
// transaction as Parsley does: the version, the bindings of topics, each
// task's fed-up-to and held records.
func (w *world) store(t testing.TB, app string, topics []string, tasks []task) {
	t.Helper()
	cl := parsley.ChangelogTopic(app)
	var recs []*kgo.Record
	entry := func(p int32, k parsley.Key, v []byte) {
		recs = append(recs, &kgo.Record{Topic: cl, Partition: p, Key: parsley.AppendKey(nil, k), Value: v})
	}
	for i, tk := range tasks {
		p := int32(i)
		entry(p, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})
		for _, name := range topics {
			entry(p, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, w.ids[name]))
		}
		for name, f := range tk.fed {
			entry(p, parsley.Key{Tag: parsley.TagFedUpTo, Channel: w.ch(name, p)}, parsley.AppendPosition(nil, f))
		}
		for _, h := range tk.held {
			var es []clock.Entry
			for at, pos := range h.causes {
				name, part, _ := strings.Cut(at, "/")
				es = append(es, clock.Entry{Channel: w.ch(name, int32(part[0]-'0')), Position: pos})
			}
			v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: h.ts, Key: []byte("k"), Value: []byte("v"), Causes: clock.MustNew(es...).Entries()})
			entry(p, parsley.Key{Tag: parsley.TagHeld, Channel: w.ch(h.topic, p), Position: h.off}, v)
		}
	}
	kafkatest.Transact(t, w.client(t, kgo.TransactionalID(app+"-tx")), recs...)
}

// commit commits offsets ("topic/p" → offset) for group, as an admin does.
func (w *world) commit(t testing.TB, group string, offsets map[string]int64) {
	t.Helper()
	var os kadm.Offsets
	for at, off := range offsets {
		name, part, _ := strings.Cut(at, "/")
		p, err := strconv.Atoi(part)
		if err != nil {
			t.Fatalf("offset at %q: %v", at, err)
		}
		os.Add(kadm.Offset{Topic: name, Partition: int32(p), At: off, LeaderEpoch: -1})
	}
	resp, err := w.adm.CommitOffsets(context.Background(), group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s: %v", group, err)
	}
}

// join keeps a member of group subscribed to topics for the test, and
// returns once it has its assignment.
func (w *world) join(t testing.TB, group string, topics ...string) {
	t.Helper()
	assigned := make(chan struct{}, 1)
	w.client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.DisableAutoCommit(), kgo.ClientID(group),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	select {
	case <-assigned:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no assignment within 30s", group)
	}
}

// proc is one Parsley-like process of a test cluster, as written.
type proc struct {
	app       string
	topics    []string // received, sorted
	tasks     []task
	committed map[string]int64 // "topic/p" → offset
	running   bool             // a member is joined
}

// fixture is a test cluster: its processes, the records written to each
// partition of each business topic, an ordinary group.
type fixture struct {
	*world
	procs   []proc
	written map[string]int64
}

// threeProcesses is the cluster of the test: three Parsley
// processes of different topics and partition counts and an ordinary
// consumer group.
//
//   - alerts (signals, alarms: 1 partition; never ran in a group): task 0
//     holds alarms/0@1, of unknown time, waiting for signals/0@50, never
//     written.
//   - billing (invoices: 2 partitions; running, one member): all read and
//     delivered, offsets at the log ends.
//   - shop-shipper (orders, payments: 3 partitions; stopped, offsets
//     committed): task 0 holds payments/0@1 (written 7m ago) waiting for
//     orders/0@3, not read yet, and payments/0@2 behind it; task 1 holds
//     orders/1@2 (3m ago) waiting for payments/1@4. Lagging, both.
//   - reporting: an ordinary group with offsets on orders.
func threeProcesses(t testing.TB) *fixture {
	t.Helper()
	parts := map[string]int32{"orders": 3, "payments": 3, "invoices": 2, "signals": 1, "alarms": 1}
	f := &fixture{written: map[string]int64{"orders": 5, "payments": 5, "invoices": 4, "signals": 3, "alarms": 2}}
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	f.procs = []proc{
		{app: "alerts", topics: []string{"alarms", "signals"}, tasks: []task{
			{fed: map[string]int64{"signals": 2, "alarms": 1}, held: []held{
				{topic: "alarms", off: 1, ts: -1, causes: map[string]int64{"signals/0": 50}},
			}},
		}},
		{app: "billing", topics: []string{"invoices"}, running: true,
			tasks:     []task{{fed: map[string]int64{"invoices": 3}}, {fed: map[string]int64{"invoices": 3}}},
			committed: map[string]int64{"invoices/0": 4, "invoices/1": 4}},
		{app: "shop-shipper", topics: []string{"orders", "payments"}, tasks: []task{
			{fed: map[string]int64{"orders": 1, "payments": 2}, held: []held{
				{topic: "payments", off: 1, ts: ago(7 * time.Minute), causes: map[string]int64{"orders/0": 3}},
				{topic: "payments", off: 2, ts: ago(2 * time.Minute)},
			}},
			{fed: map[string]int64{"orders": 2, "payments": 0}, held: []held{
				{topic: "orders", off: 2, ts: ago(3 * time.Minute), causes: map[string]int64{"payments/1": 4}},
			}},
			{fed: map[string]int64{"orders": 4, "payments": 4}},
		}, committed: map[string]int64{"orders/0": 2, "payments/0": 3, "orders/1": 3, "payments/1": 1, "orders/2": 5, "payments/2": 5}},
	}
	for _, p := range f.procs {
		parts[parsley.ChangelogTopic(p.app)] = int32(len(p.tasks))
	}
	f.world = newWorld(t, parts)
	for name, n := range f.written {
		f.fill(t, name, parts[name], int(n))
	}
	for _, p := range f.procs {
		f.store(t, p.app, p.topics, p.tasks)
		if p.committed != nil {
			f.commit(t, p.app, p.committed)
		}
		if p.running {
			f.join(t, p.app, p.topics...)
		}
	}
	f.commit(t, "reporting", map[string]int64{"orders/0": 5, "orders/1": 5})
	return f
}

// run runs causalctl processes with args against c, as a terminal when
// tty, and returns stdout, stderr and the exit code.
func run(t testing.TB, c *kfake.Cluster, tty bool, args ...string) (string, string, int) {
	t.Helper()
	return runAt(t, strings.Join(c.ListenAddrs(), ","), tty, args...)
}

// runAt runs causalctl processes against brokers.
func runAt(t testing.TB, brokers string, tty bool, args ...string) (string, string, int) {
	t.Helper()
	width := 0
	if tty {
		width = 200
	}
	return runWidth(t, brokers, width, args...)
}

// runWidth runs causalctl processes against brokers on a terminal width
// columns wide, in a pipe when width is 0.
func runWidth(t testing.TB, brokers string, width int, args ...string) (string, string, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(width > 0)
	ios.Width = width
	f := cmdutiltest.Factory(ios, brokers)
	f.Now = func() time.Time { return now }
	err := cmdutiltest.Execute(cmdutiltest.AsRoot(NewCmdProcesses(f, nil)), append([]string{}, args...)...) // never nil: cobra would read os.Args
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), cmdutil.ExitCode(err)
}
