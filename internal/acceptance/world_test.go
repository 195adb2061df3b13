package acceptance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// This file writes random Parsley worlds for the agreement property
// (agreement_property_test.go): one process per seed, on a cluster many
// seeds share, each under topic names of its own. A world's process has
// 1–8 tasks over two or three business topics of as many partitions;
// each task's store holds records of every shape a head can take, and
// its log every fault the demo has:
//   - dangling: a claim past the log's end (beyond-log-end);
//   - catching up: a claim on a record in the log past the committed
//     offset, which reading on delivers (the demo's slow feed);
//   - ready: a claim the store already has, a head nothing blocks — and
//     a blocked record behind it;
//   - chain and cycle: claims on held records (two heads claiming each
//     other);
//   - undecodable: a record past the committed offset whose
//     parsley.causes header is cut short (the task fails closed);
//   - open transaction: a claim on an offset an open transaction holds
//     the last stable offset below; and an entry of the changelog in a
//     transaction left open (the task's store is read behind it);
//   - marker claim: a claim on a commit marker's offset;
//   - corrupt entries: a held record's value that cannot be read;
//   - unfolded: a store with nothing held at all.
// Half the processes run (a member of their group subscribes to their
// topics), the others are stopped.

// worldTopics is how many business topics a world has at most.
const worldTopics = 3

// world is one generated Parsley process, as written.
type world struct {
	Seed    uint64
	App     string
	Tasks   int32
	Topics  []string
	Running bool
	// Shapes lists what the world's stores and logs hold, for the
	// failure message and the coverage count.
	Shapes map[string]int
}

func (w *world) String() string {
	return fmt.Sprintf("seed %d (app %s, %d tasks, topics %s, running %v, shapes %v)", w.Seed, w.App, w.Tasks, strings.Join(w.Topics, ","), w.Running, w.Shapes)
}

// worldWriter writes worlds to one cluster.
type worldWriter struct {
	t      *testing.T
	addr   string
	plain  *kgo.Client
	adm    *kadm.Client
	now    time.Time
	prefix string
	// topicPrefix, when set, names the business topics instead of the
	// application id: TOPICPREFIX SEED p.a, …
	topicPrefix string
	// open are the producers whose transactions stay open, and members
	// the running processes' members: closed when the test ends.
	open, members []*kgo.Client
}

// worldCluster starts a one-broker kfake cluster and a world writer on
// it, both closed when the test ends.
func worldCluster(t *testing.T, prefix string, now time.Time) (*kfake.Cluster, *worldWriter) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ww := newWorldWriter(t, c.ListenAddrs()[0], prefix, now)
	t.Cleanup(ww.close)
	return c, ww
}

func newWorldWriter(t *testing.T, addr, prefix string, now time.Time) *worldWriter {
	t.Helper()
	plain, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	return &worldWriter{t: t, addr: addr, plain: plain, adm: kadm.NewClient(plain), now: now, prefix: prefix}
}

// close closes the writer's clients, the running processes' members and
// the producers of the open transactions with them.
func (w *worldWriter) close() {
	for _, c := range w.members {
		c.Close()
	}
	for _, c := range w.open {
		c.Close()
	}
	w.plain.Close()
}

// txnClient is a transactional producer of id.
func (w *worldWriter) txnClient(id string) *kgo.Client {
	w.t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(w.addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.TransactionalID(id), kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// chanLog is what a world wrote to one business channel.
type chanLog struct {
	topic string
	ch    clock.Channel
	// end is the log end offset once written; committed the process's
	// committed offset (its position).
	end, committed int64
	// records are the offsets of the records (markers are not records).
	records []int64
	// marker is the offset of a commit marker, -1 when none; openAt the
	// first offset of an open transaction, -1 when none.
	marker, openAt int64
	// held are the offsets the store holds, in order.
	held []int64
}

func (w *worldWriter) produce(recs ...*kgo.Record) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.plain.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		w.t.Fatal(err)
	}
}

// write generates and writes the world of seed.
func (w *worldWriter) write(seed uint64) *world {
	t := w.t
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	wd := &world{Seed: seed, App: fmt.Sprintf("%s%dp", w.prefix, seed), Tasks: 1 + r.Int32N(8), Running: r.IntN(2) == 0, Shapes: map[string]int{}}
	nTopics := 2 + r.IntN(worldTopics-1)
	for i := range nTopics {
		name := fmt.Sprintf("%s.%c", wd.App, 'a'+i)
		if w.topicPrefix != "" {
			name = fmt.Sprintf("%s%dp.%c", w.topicPrefix, seed, 'a'+i)
		}
		wd.Topics = append(wd.Topics, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := w.adm.CreateTopics(ctx, wd.Tasks, 1, nil, append(slices.Clone(wd.Topics), parsley.ChangelogTopic(wd.App))...)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("%s: creating topics: %v", wd, err)
	}
	ids := map[string]clock.TopicID{}
	for _, name := range wd.Topics {
		ids[name] = clock.TopicID(res[name].ID)
	}

	// The logs: a few records with nothing claimed on each channel; some
	// channels end in a committed transaction (a marker), some in an
	// open one.
	logs := map[int32][]*chanLog{}
	for task := range wd.Tasks {
		for _, name := range wd.Topics {
			cl := &chanLog{topic: name, ch: clock.Channel{Topic: ids[name], Partition: task}, marker: -1, openAt: -1}
			n := r.IntN(6)
			var recs []*kgo.Record
			for range n {
				recs = append(recs, &kgo.Record{Topic: name, Partition: task, Value: []byte("v"), Timestamp: w.now.Add(-time.Hour)})
			}
			if n > 0 {
				w.produce(recs...)
			}
			for i := range int64(n) {
				cl.records = append(cl.records, i)
			}
			cl.end = int64(n)
			logs[task] = append(logs[task], cl)
		}
	}
	// The process's position: somewhere in each log.
	for task := range wd.Tasks {
		for _, cl := range logs[task] {
			cl.committed = r.Int64N(cl.end + 1)
		}
	}
	// Faults of the log, after the position: a committed transaction (a
	// marker to claim), an open one, an undecodable record.
	txn := 0
	for task := range wd.Tasks {
		for _, cl := range logs[task] {
			switch k := r.IntN(12); {
			case k == 0:
				tc := w.txnClient(fmt.Sprintf("%s-m%d", wd.App, txn))
				txn++
				kafkatest.Transact(t, tc, &kgo.Record{Topic: cl.topic, Partition: task, Value: []byte("t"), Timestamp: w.now.Add(-time.Hour)})
				tc.Close()
				cl.records = append(cl.records, cl.end)
				cl.marker = cl.end + 1
				cl.end += 2
				wd.Shapes["marker"]++
			case k == 1:
				tc := w.txnClient(fmt.Sprintf("%s-o%d", wd.App, txn))
				txn++
				w.open = append(w.open, tc)
				if err := tc.BeginTransaction(); err != nil {
					t.Fatal(err)
				}
				if err := tc.ProduceSync(ctx, &kgo.Record{Topic: cl.topic, Partition: task, Value: []byte("o"), Timestamp: w.now.Add(-time.Hour)}).FirstErr(); err != nil {
					t.Fatal(err)
				}
				cl.openAt = cl.end
				cl.end++
				wd.Shapes["open-txn"]++
			case k == 2 && cl.openAt < 0:
				w.produce(&kgo.Record{Topic: cl.topic, Partition: task, Value: []byte("u"), Timestamp: w.now.Add(-time.Hour),
					Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: []byte{1}}}})
				cl.records = append(cl.records, cl.end)
				cl.end++
				wd.Shapes["undecodable"]++
			}
		}
	}

	// The stores.
	wr := w.txnClient(wd.App + "-store")
	defer wr.Close()
	for task := range wd.Tasks {
		chans := logs[task]
		recs := parsleytest.Bindings(wd.App, task, ids)
		var entries []*kgo.Record
		// What a held record may claim, by the shape it is to have.
		claim := func(self *chanLog) (clock.Entry, string) {
			other := chans[r.IntN(len(chans))]
			if len(chans) > 1 {
				for other == self {
					other = chans[r.IntN(len(chans))]
				}
			}
			switch k := r.IntN(8); {
			case k == 0 || (k == 1 && other.committed >= other.end):
				return clock.Entry{Channel: other.ch, Position: other.end + 1000 + r.Int64N(1000)}, "dangling"
			case k == 1:
				return clock.Entry{Channel: other.ch, Position: other.committed + r.Int64N(other.end-other.committed)}, "catching-up"
			case k == 2 && other.committed > 0:
				return clock.Entry{Channel: other.ch, Position: r.Int64N(other.committed)}, "ready"
			case k == 3 && len(other.held) > 0:
				return clock.Entry{Channel: other.ch, Position: other.held[r.IntN(len(other.held))]}, "chain"
			case k == 4 && other.marker >= 0:
				return clock.Entry{Channel: other.ch, Position: other.marker}, "marker-claim"
			case k == 5 && other.openAt >= 0:
				return clock.Entry{Channel: other.ch, Position: other.openAt + r.Int64N(2)}, "open-txn-claim"
			default:
				return clock.Entry{Channel: other.ch, Position: other.end + r.Int64N(3)}, "waiting"
			}
		}
		for _, cl := range chans {
			if cl.committed == 0 {
				continue
			}
			recs = append(recs, parsleytest.FedUpTo(wd.App, task, cl.ch, cl.committed-1))
			// Held: some of the records below the position, oldest first.
			for _, off := range cl.records {
				if off >= cl.committed || r.IntN(3) == 0 {
					continue
				}
				cl.held = append(cl.held, off)
			}
		}
		for _, cl := range chans {
			for i, off := range cl.held {
				e, shape := claim(cl)
				if i > 0 && shape == "ready" {
					shape = "behind-ready"
				}
				wd.Shapes[shape]++
				ts := w.now.Add(-time.Duration(1+r.IntN(3600)) * time.Second).UnixMilli()
				if r.IntN(6) == 0 {
					ts = -1
				}
				h := parsleytest.Held{Channel: cl.ch, Offset: off, Timestamp: ts, Value: []byte("h"), Causes: []clock.Entry{e}}
				if r.IntN(15) == 0 {
					// Corrupt: a value cut short.
					entries = append(entries, parsleytest.StoreEntry(wd.App, task, parsley.Key{Tag: parsley.TagHeld, Channel: cl.ch, Position: off}, []byte{0, 1}))
					wd.Shapes["corrupt"]++
					continue
				}
				entries = append(entries, h.Entry(wd.App, task))
			}
		}
		if len(entries) == 0 {
			wd.Shapes["nothing-held"]++
		}
		kafkatest.Transact(t, wr, append(recs, entries...)...)
	}
	// A cycle: two held records claiming each other, sometimes.
	if wd.Tasks > 0 && r.IntN(4) == 0 {
		task := r.Int32N(wd.Tasks)
		a, b := logs[task][0], logs[task][1]
		if a.committed > 0 && b.committed > 0 {
			oa, ob := a.committed-1, b.committed-1
			ts := w.now.Add(-10 * time.Minute).UnixMilli()
			kafkatest.Transact(t, wr,
				parsleytest.Held{Channel: a.ch, Offset: oa, Timestamp: ts, Value: []byte("c"), Causes: []clock.Entry{{Channel: b.ch, Position: ob}}}.Entry(wd.App, task),
				parsleytest.Held{Channel: b.ch, Offset: ob, Timestamp: ts, Value: []byte("c"), Causes: []clock.Entry{{Channel: a.ch, Position: oa}}}.Entry(wd.App, task))
			wd.Shapes["cycle"]++
		}
	}

	// An open transaction on the changelog, sometimes: an entry of one
	// task written and not committed, which holds that partition's read
	// below it (behind a transaction).
	if r.IntN(8) == 0 {
		tc := w.txnClient(wd.App + "-open-store")
		w.open = append(w.open, tc)
		if err := tc.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		task := r.Int32N(wd.Tasks)
		if err := tc.ProduceSync(ctx, parsleytest.FedUpTo(wd.App, task, logs[task][0].ch, logs[task][0].end+5)).FirstErr(); err != nil {
			t.Fatal(err)
		}
		wd.Shapes["changelog-open-txn"]++
	}

	// The group's committed offsets, then (running) its member.
	var offs kadm.Offsets
	for task := range wd.Tasks {
		for _, cl := range logs[task] {
			offs.Add(kadm.Offset{Topic: cl.topic, Partition: task, At: cl.committed, LeaderEpoch: -1})
		}
	}
	resp, err := w.adm.CommitOffsets(ctx, wd.App, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("%s: committing offsets: %v", wd, err)
	}
	if wd.Running {
		w.join(ctx, wd)
	}
	return wd
}

// join makes a member of wd's group, subscribed to its topics, and waits
// until it is assigned them; it never commits.
func (w *worldWriter) join(ctx context.Context, wd *world) {
	w.t.Helper()
	assigned := make(chan struct{})
	m, err := kgo.NewClient(kgo.SeedBrokers(w.addr), kgo.DisableClientMetrics(), kgo.ConsumerGroup(wd.App), kgo.ConsumeTopics(wd.Topics...),
		kgo.DisableAutoCommit(), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case <-assigned:
			default:
				close(assigned)
			}
		}))
	if err != nil {
		w.t.Fatal(err)
	}
	w.members = append(w.members, m)
	// Polling drives the join; the records fetched are dropped.
	go func() {
		for {
			if fs := m.PollFetches(context.Background()); fs.IsClientClosed() {
				return
			}
		}
	}()
	select {
	case <-assigned:
	case <-ctx.Done():
		w.t.Fatalf("%s: the member was never assigned", wd)
	}
}
