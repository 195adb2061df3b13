package process

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
	"github.com/causalctl/causalctl/internal/upstream"
)

// now is the tests' clock.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// chainFleet is a chain as it comes about, beside bystanders processes
// that have nothing to do with it: enricher (stopped) sent enriched in
// transactions named after its application id; router (stopped) holds an
// orders record whose clock needs an enriched record never sent, and sent
// routed; billing holds an orders record needing a routed record never
// sent. Each bystander by000… holds an orders record needing a side record
// never sent, which no process writes. It returns a client on the cluster
// and a func that tombstones a process's held record, as Parsley does once
// it delivers it.
func chainFleet(tb testing.TB, bystanders int) (*kafka.Client, func(app string)) {
	tb.Helper()
	apps := []string{"enricher", "router", "billing"}
	for i := range bystanders {
		apps = append(apps, fmt.Sprintf("by%03d", i))
	}
	opts := []kfake.Opt{kfake.SeedTopics(1, "clicks", "enriched", "routed", "orders", "side")}
	for _, app := range apps {
		opts = append(opts, kfake.SeedTopics(1, parsley.ChangelogTopic(app)))
	}
	c := kafkatest.Cluster(tb, opts...)
	client := func(o ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics()}, o...)...)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(cl.Close)
		return cl
	}
	md, err := kadm.NewClient(client()).Metadata(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	ch := func(topic string) clock.Channel { return clock.Channel{Topic: ids[topic]} }
	var recs []*kgo.Record
	for range 3 {
		recs = append(recs, &kgo.Record{Topic: "orders", Value: []byte("o")}, &kgo.Record{Topic: "clicks", Value: []byte("c")})
	}
	kafkatest.Produce(tb, c, recs...)
	kafkatest.Transact(tb, client(kgo.TransactionalID("enricher-0_0")), &kgo.Record{Topic: "enriched", Value: []byte("e")})
	kafkatest.Transact(tb, client(kgo.TransactionalID("router-0_0")), &kgo.Record{Topic: "routed", Value: []byte("r")})
	held := func(app, waitsOn string) *kgo.Record {
		return parsleytest.Held{Channel: ch("orders"), Offset: 1, Timestamp: now.Add(-time.Minute).UnixMilli(),
			Causes: []clock.Entry{{Channel: ch(waitsOn), Position: 9}}}.Entry(app, 0)
	}
	store := func(app, waitsOn string) {
		names := map[string]clock.TopicID{"orders": ids["orders"], waitsOn: ids[waitsOn]}
		entries := []*kgo.Record{parsleytest.StoreEntry(app, 0, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})}
		if waitsOn == "" {
			names = map[string]clock.TopicID{"clicks": ids["clicks"]}
			entries = append(parsleytest.Bindings(app, 0, names), parsleytest.FedUpTo(app, 0, ch("clicks"), 2))
		} else {
			entries = append(entries, parsleytest.Bindings(app, 0, names)...)
			entries = append(entries, parsleytest.FedUpTo(app, 0, ch("orders"), 1), parsleytest.FedUpTo(app, 0, ch(waitsOn), 0), held(app, waitsOn))
		}
		kafkatest.Transact(tb, client(kgo.TransactionalID(app+"-store")), entries...)
	}
	store("enricher", "")
	store("router", "enriched")
	store("billing", "routed")
	for _, app := range apps[3:] {
		store(app, "side")
	}
	cl, err := kafka.Dial(context.Background(), kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cl.Close)
	deliver := func(app string) {
		waitsOn := map[string]string{"router": "enriched", "billing": "routed"}[app]
		if waitsOn == "" {
			waitsOn = "side"
		}
		gone := held(app, waitsOn)
		gone.Value = nil
		kafkatest.Transact(tb, client(kgo.TransactionalID(app+"-store")), gone)
	}
	return cl, deliver
}

// everyRoot is the upstream root of every process from every process
// read, the way processes resolves them.
func everyRoot(ctx context.Context, cl *kafka.Client) (map[string]upstream.Root, error) {
	rows, err := Summarize(ctx, cl, Selection{}, time.Second, DefaultConcurrency, now)
	if err != nil {
		return nil, err
	}
	return Upstream(ctx, cl, rows, nil)
}

// TestRootOfReadsOnlyUpstream: RootOf reads the process asked about and
// the processes on its way upstream, level by level, and no bystander; its
// root is the one resolved over every process, for each process.
func TestRootOfReadsOnlyUpstream(t *testing.T) {
	cl, _ := chainFleet(t, 3)
	ctx := context.Background()
	all, err := everyRoot(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := all["billing"]; !ok || r.App != "router" {
		t.Fatalf("billing's root over every process %+v, want router", r)
	}
	for _, app := range []string{"billing", "router", "enricher", "by000", "gone"} {
		got, read, err := rootOf(ctx, cl, app, nil, nil, time.Second, DefaultConcurrency, now)
		if err != nil {
			t.Fatalf("%s: %v", app, err)
		}
		want, ok := all[app]
		switch {
		case ok && (got == nil || got.Text() != want.Text() || got.Topic != want.Topic || !slices.Equal(got.Via, want.Via)):
			t.Errorf("%s: root %+v, over every process %+v", app, got, want)
		case !ok && got != nil:
			t.Errorf("%s: root %+v, over every process none", app, got)
		}
		if app == "billing" && !slices.Equal(read, []string{"billing", "router", "enricher"}) {
			t.Errorf("billing: read %v, want billing, router, enricher and no bystander", read)
		}
		if app == "by000" && !slices.Equal(read, []string{"by000"}) {
			t.Errorf("by000: read %v, want by000 alone (nobody writes side)", read)
		}
	}
}

// TestRootOfSummarisesSelf: a process the caller has read (state --app,
// holds --app) is summarised as read, not read again, so its root comes
// from the snapshot the caller reports. billing is read while it holds its
// orders record; Parsley then delivers it. Its root from what was read is
// still router, as over every process then; read again, it has none.
func TestRootOfSummarisesSelf(t *testing.T) {
	cl, deliver := chainFleet(t, 1)
	ctx := context.Background()
	self, err := Read(ctx, cl, "billing", "", time.Second, &clock.Names{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ReadOnAll(ctx, cl, self, ReadOnOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := everyRoot(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	deliver("billing")
	sum := inspect.SummarizeProcess(self.Changelog.Topic, 1, self, nil, now)
	got, read, err := rootOf(ctx, cl, "billing", &sum, nil, time.Second, DefaultConcurrency, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := before["billing"]; got == nil || got.Text() != want.Text() || !slices.Equal(got.Via, want.Via) {
		t.Errorf("root from billing as read %+v, want %+v (over every process before it delivered)", got, want)
	}
	if !slices.Equal(read, []string{"billing", "router", "enricher"}) {
		t.Errorf("summarised %v, want billing, router, enricher", read)
	}
	if again, err := RootOf(ctx, cl, "billing", nil, nil, time.Second, DefaultConcurrency, now); err != nil || again != nil {
		t.Errorf("root read again after billing delivered: %+v, %v; want none", again, err)
	}
	// Another changelog than the app's is no snapshot of it: read again.
	other, err := Read(ctx, cl, "by000", "", time.Second, &clock.Names{})
	if err != nil {
		t.Fatal(err)
	}
	otherSum := inspect.SummarizeProcess(other.Changelog.Topic, 1, other, nil, now)
	if r, err := RootOf(ctx, cl, "billing", &otherSum, nil, time.Second, DefaultConcurrency, now); err != nil || r != nil {
		t.Errorf("root of billing given by000's read: %+v, %v; want billing read again, none", r, err)
	}
}

// BenchmarkRootOf measures one process's upstream root (state and holds
// --app) beside n bystander processes: read along the way upstream
// (RootOf) against reading every process (how it was done before).
// Figures in docs/performance.md.
func BenchmarkRootOf(b *testing.B) {
	for _, n := range []int{10, 100} {
		cl, _ := chainFleet(b, n)
		ctx := context.Background()
		b.Run(fmt.Sprintf("upstream-only/bystanders=%d", n), func(b *testing.B) {
			for b.Loop() {
				if r, err := RootOf(ctx, cl, "billing", nil, nil, time.Second, DefaultConcurrency, now); err != nil || r == nil {
					b.Fatal(r, err)
				}
			}
		})
		b.Run(fmt.Sprintf("every-process/bystanders=%d", n), func(b *testing.B) {
			for b.Loop() {
				if roots, err := everyRoot(ctx, cl); err != nil || roots["billing"].App == "" {
					b.Fatal(roots, err)
				}
			}
		})
	}
}
