package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/record"
)

// newCluster starts a one-broker in-process cluster, closed when the test
// ends. Seed topics with kfake.SeedTopics.
func newCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// testCtx is a context bounded well below the package's time budget.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// writer returns a producing client for seeding the cluster: tests write
// with it, never with the package under test.
func writer(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func produce(t *testing.T, cl *kgo.Client, rs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// rec builds a record for partition 0 of topic.
func rec(topic, value string) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: 0, Value: []byte(value)}
}

// txn runs one transaction of records on a transactional client, ending it
// with commit or abort.
func txn(t *testing.T, cl *kgo.Client, commit bool, rs ...*kgo.Record) {
	t.Helper()
	ctx := testCtx(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, cl, rs...)
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction: %v", err)
	}
}

// newAdmin returns an admin client for setting up and inspecting c.
func newAdmin(t *testing.T, c *kfake.Cluster) *kadm.Client {
	t.Helper()
	return kadm.NewClient(writer(t, c))
}

// dialTest connects the package's client to c with short timeouts.
func dialTest(t *testing.T, c *kfake.Cluster) *Client {
	t.Helper()
	cl, err := Dial(testCtx(t), Config{Brokers: c.ListenAddrs(), DialTimeout: 2 * time.Second, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// drain reads r to io.EOF.
func drain(t *testing.T, r *Range) []*record.Item {
	t.Helper()
	ctx := testCtx(t)
	var items []*record.Item
	for {
		it, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return items
		}
		if err != nil {
			t.Fatalf("next after %d items: %v", len(items), err)
		}
		items = append(items, it.Clone()) // valid until the next call only
		if len(items) > 100000 {
			t.Fatal("range does not end")
		}
	}
}

// countRecords calls next until io.EOF and returns how many of the items
// were records, calling each (when not nil) after every item.
func countRecords(tb testing.TB, next func() (*record.Item, error), each func()) int {
	tb.Helper()
	n := 0
	for {
		it, err := next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			tb.Fatalf("next after %d records: %v", n, err)
		}
		if it.Kind == record.KindRecord {
			n++
		}
		if each != nil {
			each()
		}
	}
}

// trace renders items compactly: "p0" is a position at 0, "r3=v" a record
// at offset 3 with value v; channels are prefixed when more than one.
func trace(items []*record.Item, withChannel bool) string {
	var parts []string
	for _, it := range items {
		s := ""
		if withChannel {
			s = fmt.Sprintf("%s/%d:", it.Topic, it.Partition)
		}
		switch it.Kind {
		case record.KindPosition:
			s += fmt.Sprintf("p%d", it.Offset)
		case record.KindRecord:
			s += fmt.Sprintf("r%d=%s", it.Offset, it.Value)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// parseRange parses topic selections and an offsets expression.
func parseRange(t *testing.T, topics []string, offsets string) ([]TopicSel, OffsetSpec) {
	t.Helper()
	sels, err := ParseTopicSels(topics)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseOffsets(offsets, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return sels, spec
}

// openDrain opens a range for an offsets expression and drains it.
func openDrain(t *testing.T, cl *Client, topics []string, offsets string, opts ...ReadOption) []*record.Item {
	t.Helper()
	sels, spec := parseRange(t, topics, offsets)
	r, err := cl.OpenRange(testCtx(t), sels, spec, opts...)
	if err != nil {
		t.Fatalf("open %v %s: %v", topics, offsets, err)
	}
	return drain(t, r)
}

// fakeClock is a Clock whose Sleep returns at once, moving its time on.
type fakeClock = kafkatest.StepClock

func newFakeClock() *fakeClock { return kafkatest.NewStepClock(time.Unix(1_700_000_000, 0)) }
