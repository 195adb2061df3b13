package process

import (
	"context"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// TestReadOnBound: a process 8 records behind its log ends is read on
// whole by default and with no bound, and cut short — PARTIAL, in the
// summary too — by a bound below 8; a bound of exactly 8 reads every
// record and is not cut short. The zero options are the default bound.
func TestReadOnBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, adm := parsleytest.ShopHoldingOnePayment(t, ctx)
	parsleytest.ShopBehind(t, ctx, c, adm, 8)
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, tc := range []struct {
		max     int64
		records int64
		partial bool
	}{{0, 8, false}, {-1, 8, false}, {8, 8, false}, {3, 3, true}, {1, 1, true}} {
		p, err := Read(ctx, cl, "shop", parsley.ChangelogTopic("shop"), kafka.DefaultTxnWait, &clock.Names{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ReadOnAll(ctx, cl, p, ReadOnOptions{MaxRecords: tc.max}); err != nil {
			t.Fatal(err)
		}
		on := p.ReadOn[0]
		if on == nil || on.Records != tc.records || on.CutShort != tc.partial || p.ReadOnCutShort() != tc.partial {
			t.Errorf("bound %d: read on %+v, want %d records, cut short %v", tc.max, on, tc.records, tc.partial)
			continue
		}
		if (p.ReadOnPartialWarning() != "") != tc.partial {
			t.Errorf("bound %d: warning %q", tc.max, p.ReadOnPartialWarning())
		}
		sum := inspect.SummarizeProcess(parsley.ChangelogTopic("shop"), 1, p, nil, time.Now())
		if sum.ReadOnPartial != tc.partial {
			t.Errorf("bound %d: summary partial %v", tc.max, sum.ReadOnPartial)
		}
	}
	if got := (ReadOnOptions{}).bound(); got != inspect.DefaultReadOnMaxRecords {
		t.Errorf("the zero options bound a read on at %d, not the default", got)
	}
	if ReadOnBound(0) >= 0 || ReadOnBound(5) != 5 {
		t.Errorf("--read-on-max-records 0 is no bound, 5 is 5: got %d, %d", ReadOnBound(0), ReadOnBound(5))
	}
}
