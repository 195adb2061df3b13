package fleet

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// The refresher's clock in these tests; held records are written 5 minutes
// before it.
var (
	now     = time.Unix(1700000000, 0)
	written = now.Add(-5 * time.Minute)
)

// cluster is a kfake cluster with two business topics of two partitions,
// three records on each partition, and the process shop's changelog.
type cluster struct {
	t   *testing.T
	c   *kfake.Cluster
	adm *kadm.Client
	ids map[string]clock.TopicID
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := kafkatest.Cluster(t, kfake.SeedTopics(2, "orders", "payments", parsley.ChangelogTopic("shop")))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	k := &cluster{t: t, c: c, adm: kadm.NewClient(w), ids: map[string]clock.TopicID{}}
	k.learnIDs()
	var recs []*kgo.Record
	for _, name := range []string{"orders", "payments"} {
		for p := range int32(2) {
			for range 3 {
				recs = append(recs, &kgo.Record{Topic: name, Partition: p, Value: []byte("x")})
			}
		}
	}
	kafkatest.Produce(t, c, recs...)
	return k
}

func (k *cluster) learnIDs() {
	md, err := k.adm.Metadata(context.Background())
	if err != nil {
		k.t.Fatal(err)
	}
	for _, td := range md.Topics {
		k.ids[td.Topic] = clock.TopicID(td.ID)
	}
}

func (k *cluster) ch(topic string, p int32) clock.Channel {
	return clock.Channel{Topic: k.ids[topic], Partition: p}
}

// begin writes app's task p store's version and bindings, fed-up-to 2 on
// both channels.
func (k *cluster) begin(app string, p int32) {
	cl := parsley.ChangelogTopic(app)
	recs := []*kgo.Record{k.entry(cl, p, parsley.Key{Tag: parsley.TagVersion}, []byte{1})}
	for _, name := range []string{"orders", "payments"} {
		recs = append(recs,
			k.entry(cl, p, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, k.ids[name])),
			k.entry(cl, p, parsley.Key{Tag: parsley.TagFedUpTo, Channel: k.ch(name, p)}, parsley.AppendPosition(nil, 2)))
	}
	kafkatest.Produce(k.t, k.c, recs...)
}

func (k *cluster) entry(topic string, p int32, key parsley.Key, v []byte) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: p, Key: parsley.AppendKey(nil, key), Value: v}
}

// hold writes a held record of app's task at ch@off waiting for causes;
// release tombstones it.
func (k *cluster) hold(app string, ch clock.Channel, off int64, causes ...clock.Entry) {
	v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: written.UnixMilli(), Key: []byte("k"), Value: []byte("v"), Causes: causes})
	kafkatest.Produce(k.t, k.c, k.entry(parsley.ChangelogTopic(app), ch.Partition, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: off}, v))
}

func (k *cluster) release(app string, ch clock.Channel, off int64) {
	kafkatest.Produce(k.t, k.c, k.entry(parsley.ChangelogTopic(app), ch.Partition, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: off}, nil))
}

func newRefresher(t *testing.T, k *cluster, prefix string) *Refresher {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: k.c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	tr := New(Config{Client: cl, AppPrefix: prefix, Now: func() time.Time { return now }, TxnWait: 10 * time.Second})
	t.Cleanup(tr.Close)
	return tr
}

// refresh refreshes and returns the snapshot, failing on a refresh error.
func refresh(t *testing.T, tr *Refresher) *Snapshot {
	t.Helper()
	if err := tr.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := tr.Latest()
	return s
}

func task(t *testing.T, s *Snapshot, app string, n int32) *Task {
	t.Helper()
	for i := range s.Processes {
		if s.Processes[i].App != app {
			continue
		}
		for j := range s.Processes[i].Tasks {
			if s.Processes[i].Tasks[j].Task == n {
				return &s.Processes[i].Tasks[j]
			}
		}
	}
	t.Fatalf("no task %s/%d in %+v", app, n, s.Processes)
	return nil
}

func held(tk *Task, topic string) TopicHolds {
	for _, th := range tk.Topics {
		if th.Topic == topic {
			return th
		}
	}
	return TopicHolds{Topic: topic, Held: -1}
}

// TestRefresherFollows: a process's changelog is read to its end and then
// followed — a hold written after the first refresh is seen at the next,
// a tombstone releases it — with the holds per task and topic, the oldest
// record's time, the head's cause, the lags; an idle refresh diagnoses
// nothing; only the task whose store changed is diagnosed again.
func TestRefresherFollows(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	k.begin("shop", 1)
	// Task 1 holds payments/1@2, waiting for orders/1@9: never written.
	k.hold("shop", k.ch("payments", 1), 2, clock.Entry{Channel: k.ch("orders", 1), Position: 9})

	tr := newRefresher(t, k, "")
	if _, ok := tr.Latest(); ok {
		t.Fatal("a snapshot before the first refresh")
	}
	if err := tr.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := refresh(t, tr)
	if s.Followed != 1 || len(s.Processes) != 1 || s.Processes[0].App != "shop" || s.Processes[0].GroupState != "Dead" {
		t.Fatalf("snapshot %+v", s)
	}
	t1 := task(t, s, "shop", 1)
	if got := held(t1, "payments"); got.Held != 1 || !got.OldestWritten.Equal(written) {
		t.Errorf("task 1 payments: %+v, want 1 held written at %v", got, written)
	}
	if got := held(t1, "orders"); got.Held != 0 {
		t.Errorf("task 1 orders: %+v, want a 0 series", got)
	}
	if t1.Heads[inspect.CauseBeyondLogEnd] != 1 || len(t1.Heads) != 1 {
		t.Errorf("task 1 heads %v, want one beyond-log-end", t1.Heads)
	}
	if t1.Assigned {
		t.Error("task 1 assigned with no group")
	}
	for _, c := range t1.Channels {
		// Fed up to 2 of 3 records: nothing left to feed; no offsets committed.
		if c.FedLag != 0 || c.CommittedLag != -1 {
			t.Errorf("channel %+v, want fed lag 0 and no committed lag", c)
		}
	}
	if t0 := task(t, s, "shop", 0); t0.HeldCount() != 0 || len(t0.Heads) != 0 {
		t.Errorf("task 0 %+v, want nothing held", t0)
	}
	if s.Diagnosed != 2 {
		t.Errorf("%d diagnoses, want 2 (both tasks)", s.Diagnosed)
	}

	if s = refresh(t, tr); s.Diagnosed != 2 {
		t.Errorf("an idle refresh diagnosed %d tasks", s.Diagnosed-2)
	}

	// Written after the first read: task 0 holds payments/0@1 behind a
	// lagging order; task 1's head is released.
	k.hold("shop", k.ch("payments", 0), 1, clock.Entry{Channel: k.ch("orders", 0), Position: 1})
	k.release("shop", k.ch("payments", 1), 2)
	s = refresh(t, tr)
	if got := held(task(t, s, "shop", 1), "payments"); got.Held != 0 || !got.OldestWritten.IsZero() {
		t.Errorf("task 1 after the tombstone: %+v", got)
	}
	t0 := task(t, s, "shop", 0)
	if got := held(t0, "payments"); got.Held != 1 {
		t.Errorf("task 0 after the new hold: %+v", got)
	}
	// Fed up to orders/0@2, the cause 1 is below it yet not delivered:
	// the gate delivers a record it was fed; the head is ready.
	if t0.Ready != 1 || len(t0.Heads) != 0 {
		t.Errorf("task 0 heads %v, %d ready: want one ready, no held head", t0.Heads, t0.Ready)
	}
	if s.Diagnosed != 4 {
		t.Errorf("%d diagnoses after both tasks changed, want 4", s.Diagnosed)
	}
	k.release("shop", k.ch("payments", 0), 1)
	if s = refresh(t, tr); s.Diagnosed != 5 {
		t.Errorf("%d diagnoses after task 0 alone changed, want 5", s.Diagnosed)
	}
}

// TestRefresherRediscovers: a changelog created later is followed at the
// next discovery, one deleted is dropped, and --app-prefix narrows.
func TestRefresherRediscovers(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	tr := newRefresher(t, k, "")
	narrow := newRefresher(t, k, "other")
	ctx := context.Background()
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := narrow.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if s := refresh(t, narrow); s.Followed != 0 {
		t.Errorf("--app-prefix other follows %d changelogs", s.Followed)
	}
	if s := refresh(t, tr); s.Followed != 1 {
		t.Fatalf("followed %d", s.Followed)
	}

	if _, err := k.adm.CreateTopic(ctx, 1, 1, nil, parsley.ChangelogTopic("other")); err != nil {
		t.Fatal(err)
	}
	k.learnIDs()
	k.begin("other", 0)
	k.hold("other", k.ch("orders", 0), 2, clock.Entry{Channel: k.ch("payments", 0), Position: 5})
	for _, x := range []*Refresher{tr, narrow} {
		if err := x.Discover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := refresh(t, tr)
	if s.Followed != 2 || len(s.Processes) != 2 || s.Processes[0].App != "other" {
		t.Fatalf("after the new changelog: %+v", s)
	}
	if got := held(task(t, s, "other", 0), "orders"); got.Held != 1 {
		t.Errorf("other's task 0: %+v", got)
	}
	if s := refresh(t, narrow); s.Followed != 1 || len(s.Processes) != 1 || s.Processes[0].App != "other" {
		t.Errorf("--app-prefix other: %+v", s)
	}

	if _, err := k.adm.DeleteTopics(ctx, parsley.ChangelogTopic("shop")); err != nil {
		t.Fatal(err)
	}
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if s := refresh(t, tr); s.Followed != 1 || len(s.Processes) != 1 || s.Processes[0].App != "other" {
		t.Errorf("after deleting shop's changelog: %+v", s)
	}
}

// TestRefresherStartRefusals: a refresh predicts the process's next start
// from the live store and cluster — nothing refused while they agree; a
// received topic deleted while task 1 holds one of its records is
// CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES from the next refresh, with
// no store entry written in between.
func TestRefresherStartRefusals(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	k.begin("shop", 1)
	k.hold("shop", k.ch("payments", 1), 2, clock.Entry{Channel: k.ch("orders", 1), Position: 9})
	tr := newRefresher(t, k, "")
	ctx := context.Background()
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	s := refresh(t, tr)
	if got := s.Processes[0].StartRefusals; len(got) != 0 {
		t.Errorf("refusals %v while the store and the cluster agree", got)
	}
	r, err := k.adm.DeleteTopics(ctx, "payments")
	if err == nil {
		err = r.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	s = refresh(t, tr)
	want := map[parsley.Reason]int{parsley.ReasonDeletedWithUndelivered: 1}
	if got := s.Processes[0].StartRefusals; !maps.Equal(got, want) {
		t.Errorf("refusals %v after payments was deleted, want %v", got, want)
	}
}

func TestRefresherFollowerFailing(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	k.begin("shop", 1)
	k.hold("shop", k.ch("payments", 1), 2, clock.Entry{Channel: k.ch("orders", 1), Position: 9})
	fault := k.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: parsley.ChangelogTopic("shop"), Partitions: []int32{1},
		Err: kerr.NotLeaderForPartition, Count: -1})
	tr := newRefresher(t, k, "")
	tr.cfg.TxnWait = 300 * time.Millisecond
	ctx := context.Background()
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	err := tr.Refresh(ctx)
	if err == nil || !strings.Contains(err.Error(), "shop: reading shop-__parsley.ordering-changelog/1 failed at position 0") ||
		!strings.Contains(err.Error(), "NOT_LEADER_FOR_PARTITION") {
		t.Fatalf("refresh: %v, want the failing partition, its position and the cause", err)
	}
	if s, _ := tr.Latest(); len(s.Processes) != 0 || s.Errors != 1 {
		t.Errorf("snapshot %+v: want no process and one error", s)
	}
	fault.Remove()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := tr.Refresh(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healed, the refresh still fails: %v", err)
		}
	}
	s, _ := tr.Latest()
	if got := held(task(t, s, "shop", 1), "payments"); got.Held != 1 || task(t, s, "shop", 1).BehindTransaction {
		t.Errorf("healed: task 1 %+v", task(t, s, "shop", 1))
	}
}

// TestRefresherRefreshDropsDeleted: a changelog deleted since the last
// discovery is dropped by the next refresh, which reads the others
// without an error.
func TestRefresherRefreshDropsDeleted(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	ctx := context.Background()
	if _, err := k.adm.CreateTopic(ctx, 1, 1, nil, parsley.ChangelogTopic("other")); err != nil {
		t.Fatal(err)
	}
	k.learnIDs()
	k.begin("other", 0)
	tr := newRefresher(t, k, "")
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if s := refresh(t, tr); len(s.Processes) != 2 {
		t.Fatalf("%d processes, want 2", len(s.Processes))
	}
	if _, err := k.adm.DeleteTopics(ctx, parsley.ChangelogTopic("shop")); err != nil {
		t.Fatal(err)
	}
	if s := refresh(t, tr); len(s.Processes) != 1 || s.Processes[0].App != "other" || s.Followed != 1 {
		t.Errorf("after shop's changelog was deleted: %+v", s)
	}
}

// TestRefresherRunTellsRefreshes: Run calls OnRefresh after each refresh,
// once its snapshot is published.
func TestRefresherRunTellsRefreshes(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	tr := newRefresher(t, k, "")
	told := make(chan *Snapshot, 1)
	tr.cfg.OnRefresh = func() {
		s, _ := tr.Latest()
		select {
		case told <- s:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tr.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case s := <-told:
		if s == nil || len(s.Processes) != 1 {
			t.Errorf("told before the snapshot was published: %+v", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("OnRefresh not called")
	}
}

// TestRefresherOpenTransaction: a changelog partition an open transaction
// holds below its high watermark is read to its last stable offset,
// without waiting, and its task is behind a transaction, the entry of the
// open transaction not applied; once it commits, the next refresh reads
// it and the task is no longer behind.
func TestRefresherOpenTransaction(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	k.begin("shop", 1)
	w, err := kgo.NewClient(kgo.SeedBrokers(k.c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("shop-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: written.UnixMilli(), Key: []byte("k"), Value: []byte("v"),
		Causes: []clock.Entry{{Channel: k.ch("orders", 1), Position: 9}}})
	if err := w.ProduceSync(ctx, k.entry(parsley.ChangelogTopic("shop"), 1, parsley.Key{Tag: parsley.TagHeld, Channel: k.ch("payments", 1), Position: 2}, v)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tr := newRefresher(t, k, "")
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	s := refresh(t, tr)
	if took := time.Since(begun); took > 5*time.Second {
		t.Errorf("the refresh took %s: it waited for the open transaction", took)
	}
	if t1 := task(t, s, "shop", 1); !t1.BehindTransaction || t1.HeldCount() != 0 {
		t.Errorf("task 1 under an open transaction: %+v, want behind and nothing held", t1)
	}
	if t0 := task(t, s, "shop", 0); t0.BehindTransaction {
		t.Errorf("task 0 behind a transaction: %+v", t0)
	}
	if err := w.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	s = refresh(t, tr)
	if t1 := task(t, s, "shop", 1); t1.BehindTransaction || t1.HeldCount() != 1 {
		t.Errorf("task 1 once committed: %+v, want 1 held, not behind", t1)
	}
}

// TestRefresherDescribesGroupsAtOnce: a refresh describes every process's
// group in one request, not one a process.
func TestRefresherDescribesGroupsAtOnce(t *testing.T) {
	k := newCluster(t)
	ctx := context.Background()
	for _, app := range []string{"a", "b", "c"} {
		if _, err := k.adm.CreateTopic(ctx, 1, 1, nil, parsley.ChangelogTopic(app)); err != nil {
			t.Fatal(err)
		}
	}
	k.learnIDs()
	for _, app := range []string{"a", "b", "c"} {
		k.begin(app, 0)
	}
	tr := newRefresher(t, k, "")
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	k.c.ControlKey(kmsg.DescribeGroups.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		k.c.KeepControl()
		requests.Add(1)
		return nil, nil, false
	})
	if s := refresh(t, tr); len(s.Processes) != 4 {
		t.Fatalf("%d processes, want 4", len(s.Processes))
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d DescribeGroups requests for 4 processes, want 1", n)
	}
}
