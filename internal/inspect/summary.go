package inspect

import (
	"cmp"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/replay"
)

func topicLabel(names *clock.Names, ch clock.Channel) string {
	if name, ok := names.Name(ch.Topic); ok {
		return name
	}
	return ch.Topic.String()
}

// Summary is the state of a replay: SPEC §5's summary object, with a few
// additions (skipped, interleave, per-channel received_up_to, the head's
// wait-chain root, and how the replay ended).
type Summary struct {
	Received  int64 `json:"received"`
	Delivered int64 `json:"delivered"`
	Dropped   int64 `json:"dropped"`
	Held      int64 `json:"held"`
	// Skipped counts records on channels outside the scope.
	Skipped    int64            `json:"skipped"`
	Interleave string           `json:"interleave,omitempty"`
	Channels   []ChannelSummary `json:"channels"`
	// Cycles lists wait-graph cycles, each a list of channels; with honest
	// stamps there are none.
	Cycles [][]string `json:"cycles"`
	// Failed is set when the gate failed closed.
	Failed *Failure `json:"failed,omitempty"`
	// Interrupted is set when the replay was stopped before the end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ChannelSummary is one channel in scope.
type ChannelSummary struct {
	Channel string `json:"channel"`
	TopicID string `json:"topic_id"`
	// Settled is the settled position, nil while unknown.
	Settled *int64 `json:"settled"`
	// ReceivedUpTo is the highest position received or advanced past, nil
	// while unknown.
	ReceivedUpTo *int64       `json:"received_up_to"`
	Held         int          `json:"held"`
	Head         *HeadSummary `json:"head,omitempty"`
}

// HeadSummary is a held head and why it is held.
type HeadSummary struct {
	Offset int64 `json:"offset"`
	// Undecodable is the reason code of a head held by --undecodable=hold.
	Undecodable string           `json:"undecodable,omitempty"`
	Blockers    []BlockerSummary `json:"blockers"`
	// Root is the channel whose head the wait chain from this head ends
	// at, when the chain leaves this channel and ends: a chain that runs
	// into a wait cycle has no root, and Cyclic says so.
	Root   string `json:"root,omitempty"`
	Cyclic bool   `json:"cyclic,omitempty"`
}

// BlockerSummary is one unmet entry of a head's clock.
type BlockerSummary struct {
	Channel  string `json:"channel"`
	Required int64  `json:"required"`
	Settled  *int64 `json:"settled"`
	Kind     string `json:"kind"`
}

// Failure describes where the gate failed closed.
type Failure struct {
	Channel string `json:"channel"`
	Offset  int64  `json:"offset"`
	Line    int64  `json:"line,omitempty"`
	Code    string `json:"code"`
	Error   string `json:"error"`
}

func position(p int64) *int64 {
	if p < 0 {
		return nil
	}
	return &p
}

// SummaryOf describes the state of r now.
func SummaryOf(r *replay.Replayer) *Summary {
	g, names := r.Gate(), r.Names()
	st := g.Stats()
	s := &Summary{
		Received:  st.Received,
		Delivered: st.Delivered,
		Dropped:   st.Dropped,
		Held:      st.Held,
		Skipped:   r.Skipped(),
		Cycles:    [][]string{},
	}
	scope := g.Scope()
	// People look channels up by name: order by topic name (or UUID when
	// unnamed), then partition number.
	slices.SortStableFunc(scope, func(a, b clock.Channel) int {
		if r := strings.Compare(topicLabel(names, a), topicLabel(names, b)); r != 0 {
			return r
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	for _, ch := range scope {
		cs := ChannelSummary{
			Channel:      names.Channel(ch),
			TopicID:      ch.Topic.String(),
			Settled:      position(g.Settled(ch)),
			ReceivedUpTo: position(g.Fed(ch)),
			Held:         g.Depth(ch),
		}
		if head, ok := g.Head(ch); ok {
			hs := &HeadSummary{Offset: head.Offset, Undecodable: head.Undecodable, Blockers: []BlockerSummary{}}
			for _, b := range g.Blockers(ch) {
				hs.Blockers = append(hs.Blockers, BlockerSummary{
					Channel:  names.Channel(b.Channel),
					Required: b.Required,
					Settled:  position(b.Settled),
					Kind:     b.Kind.String(),
				})
			}
			if chain := g.WaitChain(ch); chainCycles(g, chain) {
				hs.Cyclic = true
			} else if len(chain) > 1 {
				hs.Root = names.Channel(chain[len(chain)-1])
			}
			cs.Head = hs
		}
		s.Channels = append(s.Channels, cs)
	}
	for _, cyc := range g.Cycles() {
		out := make([]string, len(cyc))
		for i, ch := range cyc {
			out[i] = names.Channel(ch)
		}
		s.Cycles = append(s.Cycles, out)
	}
	return s
}

// SetFailure records in s where the replay failed, when err is an
// *replay.InputError from a gate that failed closed.
func (s *Summary) SetFailure(err error) {
	if ie, ok := replay.FailureOf(err); ok {
		s.Failed = failureOf(ie)
	}
}

// failureOf is the Failure of a gate that failed closed.
func failureOf(ie *replay.InputError) *Failure {
	return &Failure{Channel: ie.Channel, Offset: ie.Offset, Line: ie.Line, Code: string(ie.Code), Error: ie.Err.Error()}
}

// chainCycles reports whether a wait chain stopped because it came back to
// a channel already on it: its last head waits, through a held blocker, on
// a channel of the chain.
func chainCycles(g *gate.Gate, chain []clock.Channel) bool {
	if len(chain) == 0 {
		return false
	}
	for _, b := range g.Blockers(chain[len(chain)-1]) {
		if b.Kind == gate.BlockerHeld && slices.Contains(chain, b.Channel) {
			return true
		}
	}
	return false
}
