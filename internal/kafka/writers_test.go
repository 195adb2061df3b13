package kafka

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
)

// TestWriters: a topic's writers are the applications whose
// transactional ids begin the ids of its batches' producers, the longer
// application id winning (orders-eu-… is orders-eu's, not orders'); a
// plain producer's topic has none.
func TestWriters(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(2, "eu-out", "out", "plain"))
	client := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	kafkatest.Transact(t, client(kgo.TransactionalID("orders-eu-1_0")), &kgo.Record{Topic: "eu-out", Partition: 1, Value: []byte("a")})
	kafkatest.Transact(t, client(kgo.TransactionalID("orders-2_1")), &kgo.Record{Topic: "out", Partition: 0, Value: []byte("b")})
	kafkatest.Produce(t, c, &kgo.Record{Topic: "plain", Value: []byte("c")})
	cl := dialTest(t, c)
	got, err := cl.Writers(testCtx(t), []string{"eu-out", "out", "plain"}, []string{"orders", "orders-eu"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"eu-out": {"orders-eu"}, "out": {"orders"}}
	if len(got) != len(want) {
		t.Fatalf("writers %v, want %v", got, want)
	}
	for topic, apps := range want {
		if !slices.Equal(got[topic], apps) {
			t.Errorf("%s: %v, want %v", topic, got[topic], apps)
		}
	}
}

// TestLastWritten: the greatest timestamp of a topic's last records,
// as their writer stamped them (the transaction markers left out).
func TestLastWritten(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(2, "log", "empty"))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("w-1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	at := func(ms int64) *kgo.Record {
		return &kgo.Record{Topic: "log", Partition: int32(ms % 2), Timestamp: timeMs(ms), Value: []byte("x")}
	}
	kafkatest.Transact(t, w, at(1_000), at(5_001), at(3_000))
	cl := dialTest(t, c)
	last, ok, err := cl.LastWritten(testCtx(t), "log")
	if err != nil || !ok || last != 5_001 {
		t.Errorf("log: %d, %v, %v; want 5001", last, ok, err)
	}
	if _, ok, err := cl.LastWritten(testCtx(t), "empty"); err != nil || ok {
		t.Errorf("empty: %v, %v; want nothing seen", ok, err)
	}
}

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }
