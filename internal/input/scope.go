package input

import (
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
)

// Scope is what --scope and --start resolve to over an input: the channels
// a command's gate consumes and where it starts them.
type Scope struct {
	Channels []clock.Channel
	Starts   map[clock.Channel]int64
}

// ResolveScope is the one resolver of --scope and --start, for every
// command that runs the gate: scope specs (channels, or bare topics meaning
// all their partitions in the input; default every input channel) and
// start specs (CH=OFFSET) over the channels of the input. A start naming a
// channel outside the scope is a usage error.
func ResolveScope(scope, start []string, inputChannels []clock.Channel, names *clock.Names) (Scope, error) {
	chans, err := scopeChannels(scope, inputChannels, names)
	if err != nil {
		return Scope{}, err
	}
	starts, err := ParseStarts(start, names)
	if err != nil {
		return Scope{}, err
	}
	for ch := range starts {
		if !slices.Contains(chans, ch) {
			return Scope{}, specErrorf("--start: channel %s is not in the scope", names.Channel(ch))
		}
	}
	return Scope{Channels: chans, Starts: starts}, nil
}

// scopeChannels turns --scope specs into channels. A bare topic (name or
// UUID) means every partition of it in the input; a channel may name a
// partition the input lacks — its entries then gate heads that wait for it.
// A topic UUID must be known, by a name or by a channel of the input: a
// mistyped UUID is refused like a mistyped name, not read as a topic that
// is never written to.
func scopeChannels(specs []string, inputChannels []clock.Channel, names *clock.Names) ([]clock.Channel, error) {
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
				return nil, specErrorf("--scope: %v", err)
			}
			if !knownTopic(ch.Topic, inputChannels, names) {
				return nil, specErrorf("--scope: channel %q: topic UUID %s is not in the input and has no name (mistyped? bind it with --topic-id NAME=UUID)", spec, ch.Topic)
			}
			add(ch)
			continue
		}
		id, err := names.ParseTopic(spec)
		if err != nil {
			return nil, specErrorf("--scope: %v", err)
		}
		n := len(out)
		for _, ch := range inputChannels {
			if ch.Topic == id {
				add(ch)
			}
		}
		if len(out) == n {
			return nil, specErrorf("--scope: topic %s has no partition in the input: name its channels as %s/PARTITION", spec, spec)
		}
	}
	return out, nil
}

// knownTopic reports whether id is named or has a channel in the input.
func knownTopic(id clock.TopicID, inputChannels []clock.Channel, names *clock.Names) bool {
	if _, ok := names.Name(id); ok {
		return true
	}
	return slices.ContainsFunc(inputChannels, func(ch clock.Channel) bool { return ch.Topic == id })
}
