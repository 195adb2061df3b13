package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
	"github.com/causalctl/causalctl/internal/process"
)

// TestReadOnBoundPartial: a refresher bounded below how far the process
// is behind says its task's read on was cut short — Task.ReadOnPartial
// and parsley_task_read_on_partial 1 — as processes, at the same bound,
// says the process is PARTIAL; unbounded, neither says so and the
// series is 0.
func TestReadOnBoundPartial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, adm := parsleytest.ShopHoldingOnePayment(t, ctx)
	parsleytest.ShopBehind(t, ctx, c, adm, 8)
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	now := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		max     int64
		partial bool
	}{{3, true}, {-1, false}, {0, false}} {
		readOn := process.ReadOnOptions{MaxRecords: tc.max}
		tr := fleet.New(fleet.Config{Client: cl, Now: func() time.Time { return now }, TxnWait: 10 * time.Second, ReadOn: readOn})
		if err := tr.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		if err := tr.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		snap, _ := tr.Latest()
		if len(snap.Processes) != 1 || len(snap.Processes[0].Tasks) != 1 {
			t.Fatalf("bound %d: snapshot %+v", tc.max, snap.Processes)
		}
		if got := snap.Processes[0].Tasks[0].ReadOnPartial; got != tc.partial {
			t.Errorf("bound %d: the refresher's task partial %v, want %v", tc.max, got, tc.partial)
		}
		want := `parsley_task_read_on_partial{app="shop",task="0"} 0`
		if tc.partial {
			want = `parsley_task_read_on_partial{app="shop",task="0"} 1`
		}
		if got := exposition(t, tr); !strings.Contains(got, want) {
			t.Errorf("bound %d: no %s in\n%s", tc.max, want, got)
		}
		rows, err := process.Summarize(ctx, cl, process.Selection{ReadOn: readOn}, 10*time.Second, 1, now)
		if err != nil || len(rows) != 1 || rows[0].Err != nil {
			t.Fatalf("bound %d: processes %+v, %v", tc.max, rows, err)
		}
		if rows[0].ReadOnPartial != tc.partial {
			t.Errorf("bound %d: processes says partial %v, the exporter %v", tc.max, rows[0].ReadOnPartial, tc.partial)
		}
		tr.Close()
	}
}
