package cmdutil

import (
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
)

// ResolveScope turns --scope specs into channels. A bare topic (name or
// UUID) means every partition of it in the input; a channel may name a
// partition the input lacks — its entries then gate heads that wait for it.
func ResolveScope(specs []string, inputChannels []clock.Channel, names *clock.Names) ([]clock.Channel, error) {
	if len(specs) == 0 {
		return inputChannels, nil
	}
	seen := map[clock.Channel]bool{}
	var out []clock.Channel
	add := func(ch clock.Channel) {
		if !seen[ch] {
			seen[ch] = true
			out = append(out, ch)
		}
	}
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if strings.Contains(spec, "/") {
			ch, err := names.ParseChannel(spec)
			if err != nil {
				return nil, Usagef("--scope: %v", err)
			}
			add(ch)
			continue
		}
		id, err := names.ParseTopic(spec)
		if err != nil {
			return nil, Usagef("--scope: %v", err)
		}
		n := len(out)
		for _, ch := range inputChannels {
			if ch.Topic == id {
				add(ch)
			}
		}
		if len(out) == n {
			return nil, Usagef("--scope: topic %s has no partition in the input: name its channels as %s/PARTITION", spec, spec)
		}
	}
	return out, nil
}
