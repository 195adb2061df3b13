package inspect

import (
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/replay"
)

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
	// Shard is set on the summary of one shard of a per-task replay
	// (replay --tasks --shard K/N); MergeShards combines them.
	Shard *replay.Shard `json:"shard,omitempty"`
}

// MergeTasks is one summary of per-task replays (replay --tasks): the
// counts summed, every channel marked with its task, the tasks in order.
func MergeTasks(tasks []int32, sums []*Summary) *Summary {
	out := &Summary{Channels: []ChannelSummary{}, Cycles: [][]string{}}
	for i, s := range sums {
		out.Received += s.Received
		out.Delivered += s.Delivered
		out.Dropped += s.Dropped
		out.Held += s.Held
		out.Skipped += s.Skipped
		out.Cycles = append(out.Cycles, s.Cycles...)
		out.Interrupted = out.Interrupted || s.Interrupted
		if out.Failed == nil {
			out.Failed = s.Failed
		}
		for _, c := range s.Channels {
			task := tasks[i]
			c.Task = &task
			out.Channels = append(out.Channels, c)
		}
	}
	return out
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
	// Task is the Parsley task whose gate has the channel (--tasks).
	Task *int32 `json:"task,omitempty"`
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
	// Cause is the head's own cause and RootCause that of its chain's
	// root (see inspect.Cause).
	Cause     Cause `json:"cause"`
	RootCause Cause `json:"root_cause"`
}

// BlockerSummary is one unmet entry of a head's clock.
type BlockerSummary struct {
	Channel  string `json:"channel"`
	Required int64  `json:"required"`
	Settled  *int64 `json:"settled"`
	Kind     Cause  `json:"kind"`
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

// SummaryOf describes the state of r now, its heads classified with f.
func SummaryOf(r *engine.Replayer, f Facts) *Summary {
	g, names := r.Gate(), r.Names()
	st := g.Stats()
	s := &Summary{
		Received:  st.Received,
		Delivered: st.Delivered,
		Dropped:   st.Dropped,
		Held:      st.Held,
		Skipped:   r.Skipped(),
	}
	rep := Diagnose(Input{Gate: g, Names: names, Facts: f})
	s.Cycles = rep.Cycles
	heads := make(map[string]*Head, len(rep.Heads))
	for i := range rep.Heads {
		heads[rep.Heads[i].Channel] = &rep.Heads[i]
	}
	t := &Labels{Names: names}
	order, labels, ids := t.Order(g)
	for i, ch := range order {
		cs := ChannelSummary{
			Channel:      labels[i],
			TopicID:      ids[i],
			Settled:      position(g.Settled(ch)),
			ReceivedUpTo: position(g.Fed(ch)),
			Held:         g.Depth(ch),
		}
		if h := heads[labels[i]]; h != nil {
			hs := &HeadSummary{Offset: h.Offset, Undecodable: h.Undecodable, Blockers: []BlockerSummary{},
				Cause: h.Cause, RootCause: h.RootCause}
			for _, b := range h.Blockers {
				hs.Blockers = append(hs.Blockers, BlockerSummary{Channel: b.Channel, Required: b.Required, Settled: position(b.Settled), Kind: b.Cause})
			}
			if h.Cycle != nil {
				hs.Cyclic = true
			} else if len(h.Chain) > 1 {
				hs.Root = h.Root
			}
			cs.Head = hs
		}
		s.Channels = append(s.Channels, cs)
	}
	return s
}

// SetFailure records in s where the replay failed, when err is an
// *engine.InputError from a gate that failed closed.
func (s *Summary) SetFailure(err error) {
	if ie, ok := engine.FailureOf(err); ok {
		s.Failed = NewFailure(ie)
	}
}

// NewFailure is the Failure of a gate that failed closed.
func NewFailure(ie *engine.InputError) *Failure {
	return &Failure{Channel: ie.Channel, Offset: ie.Offset, Line: ie.Line, Code: string(ie.Code), Error: ie.Err.Error()}
}
