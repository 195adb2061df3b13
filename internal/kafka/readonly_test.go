package kafka

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
)

// keyRecorder observes every request the cluster receives while on.
type keyRecorder struct {
	mu   sync.Mutex
	on   bool
	keys map[int16]int
}

func (k *keyRecorder) install(c *kfake.Cluster) {
	k.keys = make(map[int16]int)
	c.ControlKey(-1, func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.on {
			k.keys[req.Key()]++
		}
		return nil, nil, false // observe only: the cluster answers as usual
	})
}

func (k *keyRecorder) set(on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.on = on
}

// TestReadOnly checks that reading topics, group offsets and a whole range
// sends only read requests, and leaves no group or committed offset behind.
func TestReadOnly(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(2, "ro"))

	// Seed records and a group with committed offsets, then close the
	// seeding clients so that nothing else talks to the cluster.
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("ro-tx"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		txn(t, w, i%3 != 2, &kgo.Record{Topic: "ro", Partition: int32(i % 2), Value: []byte("v")})
	}
	w.Close()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	var committed kadm.Offsets
	committed.AddOffset("ro", 0, 2, -1)
	committed.AddOffset("ro", 1, 4, -1)
	if err := adm.CommitAllOffsets(testCtx(t), "g1", committed); err != nil {
		t.Fatal(err)
	}
	before, err := adm.FetchOffsets(testCtx(t), "g1")
	if err != nil {
		t.Fatal(err)
	}

	var rec keyRecorder
	rec.install(c)
	rec.set(true)

	cl := dialTest(t, c)
	if _, err := cl.Topics(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	starts, err := cl.GroupOffsets(testCtx(t), "g1")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := cl.Names().ID("ro")
	if want := map[clock.Channel]int64{{Topic: id, Partition: 0}: 2, {Topic: id, Partition: 1}: 4}; !maps.Equal(starts, want) {
		t.Errorf("group offsets %v, want %v", starts, want)
	}
	if _, err := cl.GroupOffsets(testCtx(t), "no-such-group"); !errors.Is(err, ErrNoCommittedOffsets) {
		t.Errorf("missing group: %v, want ErrNoCommittedOffsets", err)
	}
	spec, _ := ParseOffsets("start", time.Now())
	r, err := cl.OpenRange(testCtx(t), []TopicSel{{Topic: "ro", Partition: AllPartitions}}, spec, WithStarts(starts))
	if err != nil {
		t.Fatal(err)
	}
	// Partition 0 holds transactions 0 (commit), 2 (abort), 4 (commit) at
	// offsets 0, 2, 4, each with its marker; partition 1 holds 1 (commit),
	// 3 (commit), 5 (abort).
	got := drain(t, r)
	if want := "ro/0:p2 ro/1:p4 ro/0:p4 ro/0:r4=v ro/0:p6 ro/1:p6"; !sameMultiset(trace(got, true), want) {
		t.Errorf("got %s, want (any interleaving) %s", trace(got, true), want)
	}
	cl.Close()
	rec.set(false)

	// Only reads went out.
	allowed := map[int16]bool{
		int16(kmsg.ApiVersions): true, int16(kmsg.Metadata): true, int16(kmsg.ListOffsets): true,
		int16(kmsg.Fetch): true, int16(kmsg.FindCoordinator): true, int16(kmsg.OffsetFetch): true,
	}
	rec.mu.Lock()
	sent := slices.Sorted(maps.Keys(rec.keys))
	rec.mu.Unlock()
	for _, k := range sent {
		if !allowed[k] {
			t.Errorf("the client sent %s", kmsg.NameForKey(k))
		}
	}
	for _, k := range []kmsg.Key{kmsg.Fetch, kmsg.OffsetFetch, kmsg.ListOffsets} {
		if rec.keys[int16(k)] == 0 {
			t.Errorf("no %s seen: the recorder is not recording", kmsg.NameForKey(int16(k)))
		}
	}

	// No group appeared, and the committed offsets did not move.
	groups, err := adm.ListGroups(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if names := groups.Groups(); !slices.Equal(names, []string{"g1"}) {
		t.Errorf("groups after the run: %v, want [g1]", names)
	}
	after, err := adm.FetchOffsets(testCtx(t), "g1")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(before.Offsets(), after.Offsets(), func(a, b map[int32]kadm.Offset) bool {
		return maps.EqualFunc(a, b, func(x, y kadm.Offset) bool { return x.At == y.At })
	}) {
		t.Errorf("committed offsets moved: %v → %v", before, after)
	}
}
