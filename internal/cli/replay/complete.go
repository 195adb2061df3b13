package replay

import (
	"strings"

	"github.com/causalctl/causalctl/internal/replay"
)

// interleaves lists the --interleave modes by the names replay parses, for
// its completion.
func interleaves() []string {
	var out []string
	for m := replay.File; m <= replay.Random; m++ {
		name, _, _ := strings.Cut(replay.Interleave{Mode: m}.String(), ":")
		out = append(out, name)
	}
	return out
}
