package holds_test

import (
	"context"
	"strings"
	"testing"

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
