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

// TestAppEveryBoundTopicDeleted: with every topic the store binds
// deleted, replay --app reads on nothing instead of failing with exit 1
// "no topic selected", and holds --app answers, as state does.
func TestAppEveryBoundTopicDeleted(t *testing.T) {
	ctx := context.Background()
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders", "payments", parsley.ChangelogTopic("shop")))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
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
	recs := parsleytest.Bindings("shop", 0, map[string]clock.TopicID{"orders": ids["orders"], "payments": ids["payments"]})
	recs = append(recs, parsleytest.Held{Channel: payments, Offset: 1, Timestamp: -1, Causes: []clock.Entry{{Channel: orders, Position: 5}}}.Entry("shop", 0))
	kafkatest.Produce(t, c, recs...)
	r, err := adm.DeleteTopics(ctx, "orders", "payments")
	if err == nil {
		err = r.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	_, stateOut, _ := run(t, c, "state", "--app", "shop")
	if !strings.Contains(stateOut, "1 record held") {
		t.Fatalf("state does not show the held record:\n%s", stateOut)
	}
	for _, args := range [][]string{{"holds", "--app", "shop"}, {"replay", "--app", "shop"}} {
		code, out, errOut := run(t, c, args...)
		t.Logf("%v: exit %d\n%s%s", args, code, out, errOut)
		if strings.Contains(errOut, "no topic selected") || code == 1 {
			t.Errorf("%v: exit %d:\n%s%s\nwhile state says:\n%s", args, code, out, errOut, stateOut)
		}
	}
}
