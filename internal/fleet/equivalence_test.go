package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
	"github.com/causalctl/causalctl/internal/process"
)

// TestRefreshMatchesFullRead: over a random sequence of writes to many
// processes — held records and their tombstones, fed-up-to positions,
// some in transactions, business records, committed offsets, processes'
// changelogs created and deleted — a refresher refreshed after every step,
// which reads only what moved and reads processes concurrently, exports
// exactly what a refresher made anew at that step exports (every parsley_
// series of the exposition); a step that writes nothing reads no
// changelog and diagnoses no task.
func TestRefreshMatchesFullRead(t *testing.T) {
	const (
		parts = 3
		steps = 40
	)
	business := []string{"orders", "payments"}
	c := kafkatest.Cluster(t, kfake.SeedTopics(parts, business...))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("equivalence"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(txn.Close)
	adm := kadm.NewClient(w)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := map[string]clock.TopicID{}
	learn := func() {
		md, err := adm.Metadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, td := range md.Topics {
			ids[td.Topic] = clock.TopicID(td.ID)
		}
	}
	learn()

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 27))
	live := map[string]bool{}                // apps whose changelog exists
	holds := map[string][]parsleytest.Held{} // app/task → its live holds
	ends := map[string]int64{}               // business topic/partition → records written
	create := func(app string) {
		if _, err := adm.CreateTopic(ctx, parts, 1, nil, parsley.ChangelogTopic(app)); err != nil {
			t.Fatal(err)
		}
		learn()
		var recs []*kgo.Record
		for p := range int32(parts) {
			recs = append(recs, parsleytest.Bindings(app, p, map[string]clock.TopicID{"orders": ids["orders"], "payments": ids["payments"]})...)
		}
		kafkatest.Produce(t, c, recs...)
		live[app] = true
	}
	for i := range 12 {
		create(fmt.Sprintf("app%02d", i))
	}
	next := 12
	var gone []string

	inc := newRefresher(t, c, ctx)
	for step := range steps {
		var apps []string
		for app := range live {
			apps = append(apps, app)
		}
		slices.Sort(apps)
		app := apps[rng.IntN(len(apps))]
		p := rng.Int32N(parts)
		key := fmt.Sprintf("%s/%d", app, p)
		name := business[rng.IntN(len(business))]
		ch := clock.Channel{Topic: ids[name], Partition: p}
		idle := false
		switch r := rng.IntN(10); {
		case r < 3: // a hold, waiting for the other topic
			other := clock.Channel{Topic: ids[business[0]], Partition: p}
			if other.Topic == ch.Topic {
				other.Topic = ids[business[1]]
			}
			h := parsleytest.Held{Channel: ch, Offset: int64(rng.IntN(8)), Timestamp: time.Unix(1700000000, 0).UnixMilli() - int64(rng.IntN(1e6)),
				Value: []byte("v"), Causes: []clock.Entry{{Channel: other, Position: int64(rng.IntN(8))}}}
			holds[key] = append(holds[key], h)
			kafkatest.Produce(t, c, h.Entry(app, p))
		case r < 4 && len(holds[key]) > 0: // a release and a fed-up-to, in one transaction
			h := holds[key][0]
			holds[key] = holds[key][1:]
			kafkatest.Transact(t, txn, h.Release(app, p), parsleytest.FedUpTo(app, p, ch, int64(rng.IntN(8))))
		case r < 5:
			kafkatest.Produce(t, c, parsleytest.FedUpTo(app, p, ch, int64(rng.IntN(8))))
		case r < 6: // business records
			var recs []*kgo.Record
			for range 1 + rng.IntN(3) {
				recs = append(recs, &kgo.Record{Topic: name, Partition: p, Value: []byte("x")})
			}
			ends[fmt.Sprintf("%s/%d", name, p)] += int64(len(recs))
			kafkatest.Produce(t, c, recs...)
		case r < 7: // the group commits
			var o kadm.Offsets
			o.Add(kadm.Offset{Topic: name, Partition: p, At: ends[fmt.Sprintf("%s/%d", name, p)], LeaderEpoch: -1})
			if _, err := adm.CommitOffsets(ctx, app, o); err != nil {
				t.Fatal(err)
			}
		case r < 8: // a process appears, or one deleted appears again
			if len(gone) > 0 && rng.IntN(2) == 0 {
				create(gone[0])
				gone = gone[1:]
				break
			}
			create(fmt.Sprintf("app%02d", next))
			next++
		case r < 9 && len(live) > 4: // a process disappears
			if _, err := adm.DeleteTopics(ctx, parsley.ChangelogTopic(app)); err != nil {
				t.Fatal(err)
			}
			delete(live, app)
			gone = append(gone, app)
			for p := range int32(parts) {
				delete(holds, fmt.Sprintf("%s/%d", app, p))
			}
		default:
			idle = true
		}

		before, _ := inc.Latest()
		if err := inc.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		if err := inc.Refresh(ctx); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		after, _ := inc.Latest()
		if idle && before != nil && (after.Diagnosed != before.Diagnosed || after.ChangelogReads != before.ChangelogReads) {
			t.Errorf("step %d wrote nothing, yet the refresh diagnosed %d tasks and read %d changelogs",
				step, after.Diagnosed-before.Diagnosed, after.ChangelogReads-before.ChangelogReads)
		}
		anew := newRefresher(t, c, ctx)
		if err := anew.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		if err := anew.Refresh(ctx); err != nil {
			t.Fatalf("step %d, read anew: %v", step, err)
		}
		got, want := exposition(t, inc), exposition(t, anew)
		if got != want {
			t.Fatalf("step %d: the refreshed Refresher exports\n%s\nread anew:\n%s", step, got, want)
		}
		if n := strings.Count(got, "parsley_group_members{"); n != len(live) {
			t.Fatalf("step %d: %d processes exported, want %d", step, n, len(live))
		}
		agree(t, ctx, c, step, inc)
		anew.Close()
	}
}

// agree checks that the refresher's snapshot and `processes` (the one
// reader, process.Summarize, and the one summary, inspect.SummarizeProcess)
// say the same of every process: records held, heads by cause, ready
// heads, failed tasks and the next start's refusals.
func agree(t *testing.T, ctx context.Context, c *kfake.Cluster, step int, tr *fleet.Refresher) {
	t.Helper()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	now := time.Unix(1700000000, 0)
	rows, err := process.Summarize(ctx, cl, process.Selection{}, 10*time.Second, 4, now)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := tr.Latest()
	byApp := map[string]fleet.Process{}
	for _, p := range snap.Processes {
		byApp[p.App] = p
	}
	for _, r := range rows {
		if r.Err != nil {
			t.Fatalf("step %d: %s: %v", step, r.App, r.Err)
		}
		p, ok := byApp[r.App]
		if !ok {
			t.Errorf("step %d: %s listed by processes, not by the exporter", step, r.App)
			continue
		}
		held, ready, failed, heads := 0, 0, 0, map[string]int{}
		for _, task := range p.Tasks {
			held += task.HeldCount()
			ready += task.Ready
			if task.FailedClosed != nil {
				failed++
			}
			for cause, n := range task.Heads {
				heads[string(cause)] += n
			}
		}
		causes := map[string]int{}
		for cause, n := range r.Causes {
			causes[string(cause)] += n
		}
		refusals := map[string]int{}
		for reason, n := range p.StartRefusals {
			if n > 0 {
				refusals[string(reason)] = n
			}
		}
		rowRefusals := map[string]int{}
		for _, rf := range r.Refusals {
			rowRefusals[string(rf.Reason)]++
		}
		if held != r.HeldRecords || ready != r.Ready || failed != len(r.FailedClosed) || !maps.Equal(heads, causes) || !maps.Equal(refusals, rowRefusals) {
			t.Errorf("step %d: %s: the exporter holds %d records, %d ready, %d failed, heads %v, refusals %v; processes %d, %d, %d, %v, %v",
				step, r.App, held, ready, failed, heads, refusals, r.HeldRecords, r.Ready, len(r.FailedClosed), causes, rowRefusals)
		}
	}
}

// newRefresher is a Refresher of its own client on c, with a clock that
// does not move.
func newRefresher(t *testing.T, c *kfake.Cluster, ctx context.Context) *fleet.Refresher {
	t.Helper()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return fleet.New(fleet.Config{Client: cl, Now: func() time.Time { return time.Unix(1700000000, 0) }, TxnWait: 10 * time.Second})
}

// exposition is the parsley_ series the exporter's collector renders of
// tr's latest snapshot, in the text format.
func exposition(t *testing.T, tr *fleet.Refresher) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewProcessCollector(tr, func() time.Time { return time.Unix(1700000000, 0) }, metrics.Options{}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "parsley_") {
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.String()
}
