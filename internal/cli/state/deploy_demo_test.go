package state

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// TestDeployQuestionOnTheDemo: the deploy question against the demo's
// notifier, stopped holding a forged shipment (demo --fault dangling). A
// declaration dropping shipments names the stranded shipment records — the
// ones state shows held — and the refusal, CHANNEL_REMOVED_WITH_HELD_MESSAGES;
// one adding a topic says where each task's channel of it seeds (its log
// start: the group committed nothing on it) and that the shipments stay
// held, with no refusal.
func TestDeployQuestionOnTheDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, n := demotest.Dangling(ctx, t)
	n.Stop()
	if err := n.Err(); err != nil {
		t.Fatal(err)
	}
	state, _ := runStateAt(t, d.Addr(), "--app", demo.NotifierApp)
	held := map[int32]string{} // task → its shipments channel holding records
	heads := map[string]int64{}
	for _, jt := range state.Tasks {
		for _, jc := range jt.Channels {
			if strings.HasPrefix(jc.Channel, demo.TopicShipments+"/") && jc.Held > 0 {
				held[jt.Task], heads[jc.Channel] = jc.Channel, jc.Head.Offset
			}
		}
	}
	if len(held) == 0 {
		t.Fatalf("the notifier holds no shipment: %+v", state.Tasks)
	}

	dropped, _ := runStateAt(t, d.Addr(), "--app", demo.NotifierApp, "--receives", "orders,payments")
	for _, dp := range dropped.Deploy {
		ch, holds := held[dp.Task]
		refused := slices.ContainsFunc(dp.Refusals, func(r string) bool { return strings.HasPrefix(r, string(parsley.ReasonRemovedWithHeld)) })
		if refused != holds {
			t.Errorf("dropping shipments, task %d (holding %q): refusals %q", dp.Task, ch, dp.Refusals)
		}
		if !holds {
			continue
		}
		if len(dp.Stranded) != 1 || dp.Stranded[0].Channel != ch || len(dp.Stranded[0].Offsets) == 0 || dp.Stranded[0].Offsets[0] != heads[ch] {
			t.Errorf("dropping shipments, task %d: stranded %+v, want %s's held records from %d", dp.Task, dp.Stranded, ch, heads[ch])
		}
	}

	// A new topic, returns, with a partition for each task and two records
	// on each.
	tasks := int32(len(state.Tasks))
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Addr()), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, tasks, 1, nil, "returns"); err != nil {
		t.Fatal(err)
	}
	for p := range tasks {
		for range 2 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "returns", Partition: p, Value: []byte("r")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	added, _ := runStateAt(t, d.Addr(), "--app", demo.NotifierApp, "--receives", "orders,payments,shipments,returns")
	for _, dp := range added.Deploy {
		if len(dp.Refusals) != 0 || len(dp.Stranded) != 0 {
			t.Errorf("adding returns, task %d: refusals %q, stranded %+v", dp.Task, dp.Refusals, dp.Stranded)
		}
		want := fmt.Sprintf("returns/%d", dp.Task)
		if !slices.ContainsFunc(dp.Joins, func(j jsonDeployJoin) bool { return j.Channel == want && j.At == 0 }) {
			t.Errorf("adding returns, task %d: joins %+v, want %s from its log start, 0", dp.Task, dp.Joins, want)
		}
		if ch, holds := held[dp.Task]; holds && !slices.ContainsFunc(dp.StillHeld, func(r jsonDeployRec) bool { return r.Channel == ch && r.Offset == heads[ch] }) {
			t.Errorf("adding returns, task %d: still held %+v, want %s@%d", dp.Task, dp.StillHeld, ch, heads[ch])
		}
	}
}
