package fleet

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// TestRefresherStuckPartition: one changelog partition whose offsets the
// broker will not list (NOT_LEADER_FOR_PARTITION forever) fails its own
// process after --txn-wait (5 s, on a clock the test controls), once, and
// the same refresh reads every other process: a hold written meanwhile
// shows at once. Before, the refresh waited the request timeout (30 s) on
// the shared listing and again on the process's own, and every process's
// changes waited with it.
func TestRefresherStuckPartition(t *testing.T) {
	k := newCluster(t)
	k.begin("shop", 0)
	k.begin("shop", 1)
	ctx := context.Background()
	if _, err := k.adm.CreateTopic(ctx, 1, 1, nil, parsley.ChangelogTopic("cart")); err != nil {
		t.Fatal(err)
	}
	k.learnIDs()
	k.begin("cart", 0)

	tr := newRefresher(t, k, "")
	clk := kafkatest.NewStepClock(now)
	tr.cfg.Clock, tr.cfg.TxnWait = clk, kafka.DefaultTxnWait
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	refresh(t, tr)

	k.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: parsley.ChangelogTopic("shop"), Partitions: []int32{1},
		Err: kerr.NotLeaderForPartition, Count: -1})
	k.hold("cart", k.ch("orders", 0), 2, clock.Entry{Channel: k.ch("payments", 0), Position: 9})

	err := tr.Refresh(ctx)
	want := "shop: listing offsets of shop-__parsley.ordering-changelog/1: still failing after 5s: NOT_LEADER_FOR_PARTITION"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("refresh: %v, want the stuck partition named (%q) with the 5s waited", err, want)
	}
	if n := strings.Count(err.Error(), "listing offsets"); n != 1 {
		t.Errorf("refresh: %v: the stuck partition said %d times, want once", err, n)
	}
	if got := clk.Slept(); got < kafka.DefaultTxnWait || got >= 2*kafka.DefaultTxnWait {
		t.Errorf("the refresh waited %s on the stuck partition, want --txn-wait (%s) once", got, kafka.DefaultTxnWait)
	}
	s, _ := tr.Latest()
	if got := held(task(t, s, "cart", 0), "orders"); got.Held != 1 {
		t.Errorf("cart, beside the stuck partition: task 0 orders %+v, want the new hold seen in the same refresh", got)
	}
}
