package holds_test

import (
	"context"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// TestAppEveryBoundTopicDeleted: with every topic the store binds
// deleted, replay --app reads on nothing instead of failing with exit 1
// "no topic selected", and holds --app answers, as state does.
func TestAppEveryBoundTopicDeleted(t *testing.T) {
	ctx := context.Background()
	c, adm := parsleytest.ShopHoldingOnePayment(t, ctx)
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

// TestHeadBlockedByDeletedTopic: the store holds payments/0@1 behind a
// claim on orders/0, and orders is deleted. The channel's claim is met for
// good once the process sees the deletion (SPEC §6), so the head is
// neither not-received nor lagging: every way into the process calls it
// deleted, with the next step that says so.
func TestHeadBlockedByDeletedTopic(t *testing.T) {
	ctx := context.Background()
	c, adm := parsleytest.ShopHoldingOnePayment(t, ctx)
	// The process had read orders/0 up to 2: the channel is in its scope.
	md, err := adm.Metadata(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	orders := clock.Channel{Topic: clock.TopicID(md.Topics["orders"].ID)}
	kafkatest.Produce(t, c, parsleytest.FedUpTo("shop", 0, orders, 2))
	for _, args := range [][]string{{"state", "--app", "shop"}, {"holds", "--app", "shop"}, {"processes", "--app", "shop"}} {
		_, out, _ := run(t, c, append(args, "-o", "json")...)
		if strings.Contains(out, `"deleted"`) {
			t.Fatalf("%v before the deletion: %s", args, out)
		}
	}
	r, err := adm.DeleteTopics(ctx, "orders")
	if err == nil {
		err = r.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		args []string
		want string
	}{
		{[]string{"state", "--app", "shop", "-o", "json"}, `"cause":"deleted","root":{"channel":"payments/0","offset":1,"cause":"deleted"}`},
		{[]string{"holds", "--app", "shop", "-o", "json"}, `"cause":"deleted","root":{"channel":"payments/0","offset":1,"cause":"deleted"}`},
		{[]string{"processes", "--app", "shop", "-o", "json"}, `"causes":{"deleted":1}`},
		{[]string{"holds", "--app", "shop"}, "Parsley settles"},
	} {
		_, out, errOut := run(t, c, c2.args...)
		if !strings.Contains(out, c2.want) {
			t.Errorf("%v: lacks %s:\n%s%s", c2.args, c2.want, out, errOut)
		}
		if strings.Contains(out, "not-received") {
			t.Errorf("%v: still not-received:\n%s", c2.args, out)
		}
	}
}
