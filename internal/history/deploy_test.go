package history

import (
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/parsley"
)

// The deploy question of a notifier-like task: shipments/0 holds @5,
// which waits for orders/0@3; orders/0 has read to 2.
func TestDeploy(t *testing.T) {
	orders := clock.Channel{Topic: clock.TopicID{15: 1}}
	shipments := clock.Channel{Topic: clock.TopicID{15: 2}}
	payments := clock.Channel{Topic: clock.TopicID{15: 3}}
	names := map[clock.TopicID]string{orders.Topic: "orders", shipments.Topic: "shipments", payments.Topic: "payments"}
	state := func() []gate.ChannelState {
		return []gate.ChannelState{
			{Channel: orders, Fed: 2, Reached: 2, Known: true},
			{Channel: shipments, Fed: 5, Reached: 5, Known: true, Held: []gate.SeedRecord{{Offset: 5, Clock: clock.MustNew(clock.Entry{Channel: orders, Position: 3})}}},
		}
	}
	unit := Unit{Process: "notifier"}

	// Dropping shipments while it holds: stranded, and the start refused.
	plan, err := Deploy(DeployInput{Unit: unit, State: state(), Names: names, Starts: map[clock.Channel]int64{orders: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Stranded) != 1 || plan.Stranded[0].Channel != shipments || len(plan.Stranded[0].Held) != 1 || plan.Stranded[0].Held[0] != 5 {
		t.Errorf("stranded: %+v", plan.Stranded)
	}
	if len(plan.Refusals) != 1 || plan.Refusals[0].Reason != parsley.ReasonRemovedWithHeld || plan.Refusals[0].Channel != shipments {
		t.Errorf("refusals: %+v", plan.Refusals)
	}

	// Adding payments: it joins at its start; shipments@5 stays held.
	plan, err = Deploy(DeployInput{Unit: unit, State: state(), Names: names, Starts: map[clock.Channel]int64{orders: 3, shipments: 6, payments: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Refusals) != 0 || len(plan.Stranded) != 0 {
		t.Errorf("refused: %+v %+v", plan.Refusals, plan.Stranded)
	}
	if len(plan.Joins) != 1 || plan.Joins[0] != (Seed{Channel: payments, At: 7}) {
		t.Errorf("joins: %+v", plan.Joins)
	}
	if len(plan.StillHeld) != 1 || plan.StillHeld[0].Offset != 5 || len(plan.Delivers) != 0 {
		t.Errorf("held %+v, delivers %+v", plan.StillHeld, plan.Delivers)
	}

	// Dropping orders, which holds nothing: shipments@5's cause is outside
	// the scope now, so it delivers at once.
	plan, err = Deploy(DeployInput{Unit: unit, State: state(), Names: names, Starts: map[clock.Channel]int64{shipments: 6}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Refusals) != 0 || len(plan.Delivers) != 1 || plan.Delivers[0].Channel != shipments || plan.Delivers[0].Offset != 5 || len(plan.StillHeld) != 0 {
		t.Errorf("refusals %+v, delivers %+v, held %+v", plan.Refusals, plan.Delivers, plan.StillHeld)
	}

	// Truncated past where orders resumes: refused.
	plan, err = Deploy(DeployInput{Unit: unit, State: state(), Names: names, Starts: map[clock.Channel]int64{orders: 3, shipments: 6},
		LogStart: map[clock.Channel]int64{orders: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Refusals) != 1 || plan.Refusals[0].Reason != parsley.ReasonPositionsDiscarded {
		t.Errorf("refusals: %+v", plan.Refusals)
	}
}
