package history

import (
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// A divergence where the shadow delivered another record first names where
// it put Parsley's record, when it delivered it later.
func TestCompareNamesWhereTheShadowDeliveredLater(t *testing.T) {
	a := clock.Channel{Topic: clock.TopicID{15: 1}}
	b := clock.Channel{Topic: clock.TopicID{15: 2}}
	names := map[clock.TopicID]string{a.Topic: "a", b.Topic: "b"}
	trace := []Traced{{Channel: a, Offset: 0}}
	later := &Outcome{Deliveries: []Delivery{{Channel: b, Offset: 0, Rule: RuleCausal}, {Channel: a, Offset: 0, Rule: RuleCausal}}}
	d := compare(Unit{"p", 0}, trace, later, names).Divergence
	if d == nil || d.Position != 0 || d.Channel != a || d.Shadow != "delivered b/0@0, and a/0@0 only at delivery 1" || d.Rule != RuleCausal {
		t.Fatalf("%+v", d)
	}
	never := &Outcome{Deliveries: []Delivery{{Channel: b, Offset: 0, Rule: RuleCausal}}}
	d = compare(Unit{"p", 0}, trace, never, names).Divergence
	if d == nil || d.Shadow != "delivered b/0@0" || strings.Contains(d.Shadow, "only at") {
		t.Fatalf("%+v", d)
	}
}
