package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// TestRetentionChangeDiagnosesAgain: a refresh that finds nothing changed
// diagnoses no task; one after the held record's topic changed its
// retention.ms diagnoses the task again (the retention headroom is dated
// from it), and so does one after its cleanup policy changed.
func TestRetentionChangeDiagnosesAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, adm := parsleytest.ShopHoldingOnePayment(t, ctx)
	tr := newRefresher(t, c, ctx)
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	diagnosed := func() uint64 {
		t.Helper()
		if err := tr.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		s, _ := tr.Latest()
		return s.Diagnosed
	}
	first := diagnosed()
	if first == 0 {
		t.Fatal("the first refresh diagnosed nothing")
	}
	if n := diagnosed(); n != first {
		t.Fatalf("an idle refresh diagnosed %d tasks", n-first)
	}
	last := first
	for _, set := range [][2]string{{"retention.ms", "3600000"}, {"cleanup.policy", "compact,delete"}} {
		value := set[1]
		r, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: set[0], Value: &value}}, "payments")
		if err == nil {
			_, err = r.On("payments", nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := diagnosed(); n == last {
			t.Errorf("payments' %s set to %s: the task was not diagnosed again", set[0], value)
		} else {
			last = n
		}
		if n := diagnosed(); n != last {
			t.Errorf("an idle refresh after %s diagnosed %d tasks", set[0], n-last)
		}
	}
}
