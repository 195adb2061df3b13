package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// TestExporterSeesPurgedChangelog: a changelog purged whole
// (DeleteRecords to its end) while the group keeps its committed offsets
// is ORDERING_STATE_LOST for the exporter as for processes, with no held
// record left — for an exporter that read the store before the purge and
// one started after it. The group has no members, so the committed
// offsets name topics known only from the group's offsets: the exporter
// dropped them and said nothing.
func TestExporterSeesPurgedChangelog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, adm := parsleytest.ShopHoldingOnePayment(t, ctx)
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 0, LeaderEpoch: -1})
	o.Add(kadm.Offset{Topic: "payments", Partition: 0, At: 0, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "shop", o); err != nil {
		t.Fatal(err)
	}

	before := newRefresher(t, c, ctx)
	if err := before.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := before.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	agree(t, ctx, c, 0, before)

	ends, err := adm.ListEndOffsets(ctx, parsley.ChangelogTopic("shop"))
	if err != nil {
		t.Fatal(err)
	}
	del, err := adm.DeleteRecords(ctx, ends.Offsets())
	if err == nil {
		err = del.Error()
	}
	if err != nil {
		t.Fatal(err)
	}

	after := newRefresher(t, c, ctx)
	if err := after.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	for i, tr := range []struct {
		what string
		t    *fleet.Refresher
	}{{"read before the purge", before}, {"started after the purge", after}} {
		_ = tr.t.Refresh(ctx) // the gap is reported as an error once
		agree(t, ctx, c, i+1, tr.t)
		snap, _ := tr.t.Latest()
		if len(snap.Processes) != 1 {
			t.Fatalf("%s: %d processes", tr.what, len(snap.Processes))
		}
		p := snap.Processes[0]
		if p.StartRefusals[parsley.ReasonOrderingStateLost] == 0 {
			t.Errorf("%s: refusals %v, want ORDERING_STATE_LOST", tr.what, p.StartRefusals)
		}
		for _, task := range p.Tasks {
			if n := task.HeldCount(); n != 0 {
				t.Errorf("%s: task %d still holds %d records", tr.what, task.Task, n)
			}
		}
	}
}
