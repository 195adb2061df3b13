package parsleytest

import (
	"context"
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
