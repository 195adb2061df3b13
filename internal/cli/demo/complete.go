package demo

import (
	"strings"

	"github.com/causalctl/causalctl/internal/demo"
)

// faults lists the --fault values, for its completion.
func faults() []string {
	out := []string{"none\tno fault (the default)"}
	for _, fl := range demo.Faults {
		out = append(out, string(fl))
	}
	return out
}

// faultUsage lists the --fault values for its usage, as faults completes
// them: "none (the default), undecodable, … or marker-claim".
func faultUsage() string {
	vals := []string{"none (the default)"}
	for _, fl := range demo.Faults {
		vals = append(vals, string(fl))
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}
