package holds_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// TestHoldsAppBehindOpenTransaction: an attach whose changelog read an
// open transaction stopped says the state is partial (SPEC §6), on the
// task it concerns, in text and JSON — not a bare "Nothing held".
func TestHoldsAppBehindOpenTransaction(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders", parsley.ChangelogTopic("shop")))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("shop-0"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	md, err := kadm.NewClient(w).Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	kafkatest.Produce(t, c, parsleytest.Bindings("shop", 0, map[string]clock.TopicID{"orders": ids["orders"]})...)
	if err := w.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	rec := parsleytest.FedUpTo("shop", 0, clock.Channel{Topic: ids["orders"]}, 0)
	if err := w.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := run(t, c, "holds", "--app", "shop", "--txn-wait", "100ms")
	if !strings.Contains(out, "PARTIAL") || !strings.Contains(out, "open transaction") {
		t.Errorf("no word that the state is partial:\n%s%s", out, errOut)
	}
	_, out, _ = run(t, c, "holds", "--app", "shop", "--txn-wait", "100ms", "-o", "json")
	if !strings.Contains(out, `"behind_transaction_from":`) {
		t.Errorf("JSON does not say where the read stopped:\n%s", out)
	}
}
