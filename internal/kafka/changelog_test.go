package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/record"
)

// testChangelog is named as Parsley names an ordering changelog; to the
// client it is just a compacted topic.
const testChangelog = "shop-shipper-__parsley.ordering-changelog"

// entry is one changelog record on partition p: a tombstone when value is
// nil.
func entry(p int32, key string, value []byte) *kgo.Record {
	return &kgo.Record{Topic: testChangelog, Partition: p, Key: []byte(key), Value: value}
}

func txWriter(t *testing.T, c *kfake.Cluster, id string) *kgo.Client {
	return writer(t, c, kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

// compacted is a naive fold of a compacted topic's read: per partition the
// last value of every key (a tombstone removes it), how many records were
// handed on, where the read stopped and the log facts when it began.
type compacted struct {
	topic   string
	topicID bool
	live    map[int32]map[string]string
	records map[int32]int
	reached map[int32]int64
	facts   map[int32]record.LogFacts
}

func readCompacted(ctx context.Context, t *testing.T, cl *Client, topic string, txnWait time.Duration, opts ...ReadOption) (*compacted, error) {
	t.Helper()
	c := &compacted{live: map[int32]map[string]string{}, records: map[int32]int{}, reached: map[int32]int64{}, facts: map[int32]record.LogFacts{}}
	err := cl.ReadCompacted(ctx, topic, txnWait, func(it *record.Item) {
		c.topic, c.topicID = it.Topic, !it.TopicID.IsZero()
		switch it.Kind {
		case record.KindRecord:
			if c.live[it.Partition] == nil {
				c.live[it.Partition] = map[string]string{}
			}
			if it.Value == nil {
				delete(c.live[it.Partition], string(it.Key))
			} else {
				c.live[it.Partition][string(it.Key)] = string(it.Value)
			}
			c.records[it.Partition]++
			c.reached[it.Partition] = it.Offset + 1
		case record.KindPosition:
			c.reached[it.Partition] = it.Offset
		case record.KindLogFacts:
			c.facts[it.Partition] = *it.Facts
		}
	}, opts...)
	return c, err
}

// live returns the live keys of partition p, with their values.
func live(c *compacted, p int32) map[string]string {
	if c.live[p] == nil {
		return map[string]string{}
	}
	return c.live[p]
}

func TestReadChangelog(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(3, testChangelog))
	w := txWriter(t, c, "shipper-0")
	txn(t, w, true, entry(0, "a", []byte("1")), entry(0, "b", []byte("1")), entry(1, "a", []byte("1")))
	txn(t, w, false, entry(0, "a", []byte("aborted")), entry(0, "x", []byte("aborted")), entry(2, "x", []byte("aborted")))
	txn(t, w, true, entry(0, "a", []byte("2")), entry(0, "b", nil), entry(2, "c", []byte("1")))
	// Partition 2 ends in a transaction left open, with a committed entry
	// of another producer after it.
	open := txWriter(t, c, "shipper-1")
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, open, entry(2, "d", []byte("open")))
	txn(t, w, true, entry(2, "e", []byte("after")))

	cl := dialTest(t, c)
	got, err := readCompacted(testCtx(t), t, cl, testChangelog, 200*time.Millisecond, FetchWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if got.topic != testChangelog || !got.topicID {
		t.Errorf("topic %q, topic id known %v", got.topic, got.topicID)
	}
	want := []map[string]string{{"a": "2"}, {"a": "1"}, {"c": "1"}}
	for p, w := range want {
		if l := live(got, int32(p)); !equalMaps(l, w) {
			t.Errorf("partition %d: live %v, want %v", p, l, w)
		}
	}
	for p := range int32(2) {
		if f := got.facts[p]; got.reached[p] != f.HighWatermark {
			t.Errorf("partition %d: read to %d of %d", p, got.reached[p], f.HighWatermark)
		}
	}
	f := got.facts[2]
	if got.reached[2] != f.LastStable || got.reached[2] >= f.HighWatermark {
		t.Errorf("partition 2: read to %d (last stable %d, high watermark %d); want stopped at the open transaction",
			got.reached[2], f.LastStable, f.HighWatermark)
	}
	if got.records[0] != 4 { // a, b, then a, b's tombstone; the aborted ones never count
		t.Errorf("partition 0: %d records handed on, want 4", got.records[0])
	}
}

// TestReadChangelogWaitsForTransaction: a transaction that commits while
// the read waits at it is read to the high watermark taken when the read
// began.
func TestReadChangelogWaitsForTransaction(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, testChangelog))
	w := txWriter(t, c, "shipper-0")
	txn(t, w, true, entry(0, "a", []byte("1")))
	open := txWriter(t, c, "shipper-1")
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, open, entry(0, "b", []byte("late")))
	txn(t, w, true, entry(0, "c", []byte("after")))

	// Commit once the reader fetches at the open transaction.
	fetched := make(chan struct{}, 1)
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.FetchRequest).Topics {
			for _, rp := range rt.Partitions {
				if rp.FetchOffset == 2 {
					select {
					case fetched <- struct{}{}:
					default:
					}
				}
			}
		}
		return nil, nil, false
	})
	done := make(chan error, 1)
	var got *compacted
	cl := dialTest(t, c)
	go func() {
		var err error
		got, err = readCompacted(context.Background(), t, cl, testChangelog, 15*time.Second, FetchWait(20*time.Millisecond))
		done <- err
	}()
	select {
	case <-fetched:
	case err := <-done:
		t.Fatalf("read ended before it reached the open transaction: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the reader never fetched at the open transaction")
	}
	if err := open.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(12 * time.Second):
		t.Fatal("the read did not end once the transaction committed")
	}
	if f := got.facts[0]; got.reached[0] != f.HighWatermark {
		t.Errorf("read to %d of %d", got.reached[0], f.HighWatermark)
	}
	if l := live(got, 0); !equalMaps(l, map[string]string{"a": "1", "b": "late", "c": "after"}) {
		t.Errorf("live %v", l)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestDescribeGroup: a running member's subscription and assignment, read
// without joining; a group that does not exist is Dead.
func TestDescribeGroup(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(2, "orders"), kfake.SeedTopics(1, "payments"))
	produce(t, writer(t, c), rec("orders", "o"), rec("payments", "p"))
	member := writer(t, c, kgo.ConsumerGroup("shop-shipper"), kgo.ConsumeTopics("orders", "payments"), kgo.ClientID("shipper-1"))
	cl := dialTest(t, c)
	ctx := testCtx(t)
	var g *record.Group
	for {
		member.PollRecords(ctx, 1) // joins; returns once assigned and a record is fetched
		var err error
		if g, err = cl.DescribeGroup(ctx, "shop-shipper"); err != nil {
			t.Fatal(err)
		}
		if g.State == "Stable" && len(g.Members) == 1 && len(g.Members[0].Assignment) == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("group never stable: %+v", g)
		}
	}
	m := g.Members[0]
	if m.ClientID != "shipper-1" || g.ProtocolType != "consumer" || len(m.Subscription) != 2 || m.Subscription[0] != "orders" {
		t.Errorf("member %+v of %+v", m, g)
	}
	if ps := m.Assignment["orders"]; len(ps) != 2 || ps[0] != 0 || ps[1] != 1 {
		t.Errorf("assignment %v", m.Assignment)
	}
	none, err := cl.DescribeGroup(ctx, "nobody")
	if err != nil || none.State != "Dead" || len(none.Members) != 0 {
		t.Errorf("unknown group: %+v, %v", none, err)
	}
}
