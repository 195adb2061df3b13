package gate_test

import (
	"fmt"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

func Example() {
	var names clock.Names
	names.AddFlag("orders=0f9a0000-0000-4000-8000-000000000001")
	names.AddFlag("payments=0f9a0000-0000-4000-8000-000000000002")
	orders, _ := names.ParseChannel("orders/0")
	payments, _ := names.ParseChannel("payments/0")

	g, _ := gate.New([]clock.Channel{orders, payments})
	causes, _ := names.Parse("orders/0=41")
	g.Receive(payments, 7, causes, nil) // held: orders/0@41 has not been delivered
	for _, b := range g.Blockers(payments) {
		fmt.Println("held on", names.Channel(b.Channel), "need", b.Required, b.Kind)
	}
	g.Advance(orders, 41)                     // offsets below 41 carried no business record
	g.Receive(orders, 41, clock.Clock{}, nil) // delivers, and releases payments/0@7
	for _, ev := range g.Drain(nil) {
		fmt.Println(ev.Kind, ev.Seq, names.Channel(ev.Channel), ev.Offset)
	}
	// Output:
	// held on orders/0 need 41 not-received
	// deliver 1 orders/0 41
	// deliver 2 payments/0 7
}
