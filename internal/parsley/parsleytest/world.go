package parsleytest

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// ShopHoldingOnePayment is a stopped process "shop" of one task on a
// kfake cluster: it receives orders and payments (one partition each),
// and its store holds payments/0@1 behind a claim orders/0 ≥ 5. It
// returns the cluster and an admin client on it (closed with the test).
func ShopHoldingOnePayment(t *testing.T, ctx context.Context) (*kfake.Cluster, *kadm.Client) {
	t.Helper()
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders", "payments", parsley.ChangelogTopic("shop")))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	adm := kadm.NewClient(w)
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	orders, payments := clock.Channel{Topic: ids["orders"]}, clock.Channel{Topic: ids["payments"]}
	recs := Bindings("shop", 0, map[string]clock.TopicID{"orders": ids["orders"], "payments": ids["payments"]})
	recs = append(recs, Held{Channel: payments, Offset: 1, Timestamp: -1, Causes: []clock.Entry{{Channel: orders, Position: 5}}}.Entry("shop", 0))
	kafkatest.Produce(t, c, recs...)
	return c, adm
}

// ShopBehind puts process "shop" of ShopHoldingOnePayment behind its log
// ends: it writes behind+2 records to orders/0 and commits the group
// shop's offsets at orders/0 and payments/0 2, so that a read on from the
// committed offsets reads behind records.
func ShopBehind(t *testing.T, ctx context.Context, c *kfake.Cluster, adm *kadm.Client, behind int) {
	t.Helper()
	var recs []*kgo.Record
	for i := range behind + 2 {
		recs = append(recs, &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "order %d", i)})
	}
	kafkatest.Produce(t, c, recs...)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 2, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: "payments", Partition: 0, At: 2, LeaderEpoch: -1})
	r, err := adm.CommitOffsets(ctx, "shop", offs)
	if err == nil {
		err = r.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}
