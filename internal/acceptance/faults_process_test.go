package acceptance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// This file is the Parsley process of the fault cluster: the process that
// ordered its orders and payments, stopped, its ordering state in its
// changelog, for the table's state, processes and exporter columns.

// faultApp is the fault cluster's Parsley process; faultChangelog its
// ordering changelog (2 partitions: 2 tasks).
const faultApp = "shop"

var faultChangelog = parsley.ChangelogTopic(faultApp)

// faultHistory is how many records each task held and released before it
// stopped: the changelog's history, 3 entries each.
const faultHistory = 150

// faultEntries is how many entries the changelog holds: per task its
// bindings (3) and history, then task 0's last fed-up-to and its held
// record.
const faultEntries = 2*(3+3*faultHistory) + 2

// txnWriter is a transactional producer reaching the brokers past the
// proxies, writing uncompressed so that the changelog's bytes are many.
func (fc *faultCluster) txnWriter(t *testing.T, id string) *kgo.Client {
	t.Helper()
	w, err := kgo.NewClient(kgo.SeedBrokers(fc.Addrs()...), kgo.Dialer(fc.DialDirect),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.TransactionalID(id))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// writeProcess writes faultApp's changelog and committed offsets: each
// task held and released faultHistory records of 600 bytes (a history
// of about 200 KB, so that a fetch of it spans many TCP reads), fed up to
// the end of its channels, and task 0 still holds payments/0@149, waiting
// for orders/0@1000000, never written. Its group committed the ends.
func (fc *faultCluster) writeProcess(t *testing.T) {
	t.Helper()
	names := map[string]clock.TopicID{"orders": fc.orders, "payments": fc.payments}
	value := []byte(strings.Repeat("h", 600))
	w := fc.txnWriter(t, faultApp+"-0")
	ch := func(topic clock.TopicID, p int32) clock.Channel { return clock.Channel{Topic: topic, Partition: p} }
	// Task 0 receives payments/0 and orders/0; task 1 orders/1.
	fed := map[int32]clock.Channel{0: ch(fc.payments, 0), 1: ch(fc.orders, 1)}
	for task := range int32(2) {
		recs := kafkatest.Bindings(faultApp, task, names)
		for i := range int64(faultHistory) {
			h := kafkatest.Held{Channel: fed[task], Offset: i, Timestamp: faultNow.Add(-time.Hour).UnixMilli(), Value: value,
				Causes: []clock.Entry{{Channel: ch(fc.orders, 0), Position: i}}}
			recs = append(recs, h.Entry(faultApp, task), kafkatest.FedUpTo(faultApp, task, fed[task], i), h.Release(faultApp, task))
			if len(recs) >= 90 {
				kafkatest.Transact(t, w, recs...)
				recs = nil
			}
		}
		if task == 0 {
			held := kafkatest.Held{Channel: fed[0], Offset: faultHistory - 1, Timestamp: faultNow.Add(-5 * time.Minute).UnixMilli(), Value: value,
				Causes: []clock.Entry{{Channel: ch(fc.orders, 0), Position: 1_000_000}}}
			recs = append(recs, kafkatest.FedUpTo(faultApp, 0, ch(fc.orders, 0), faultHistory-1), held.Entry(faultApp, 0))
		}
		if len(recs) > 0 {
			kafkatest.Transact(t, w, recs...)
		}
	}
	var offs kadm.Offsets
	for _, o := range []struct {
		topic string
		p     int32
	}{{"orders", 0}, {"orders", 1}, {"payments", 0}} {
		offs.Add(kadm.Offset{Topic: o.topic, Partition: o.p, At: faultHistory, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(fc.writer(t)).CommitOffsets(ctx, faultApp, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s's offsets: %v", faultApp, err)
	}
}
