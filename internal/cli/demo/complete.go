package demo

import "github.com/causalctl/causalctl/internal/demo"

// faults lists the --fault values, for its completion.
func faults() []string {
	out := []string{"none\tno fault (the default)"}
	for _, fl := range demo.Faults {
		out = append(out, string(fl))
	}
	return out
}
