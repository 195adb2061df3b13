package history

import (
	"fmt"
	"maps"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// DeployInput is one task as it stands and the declaration about to be
// deployed: the deploy question, what the task will do when it restarts
// with it.
type DeployInput struct {
	Unit Unit
	// State is the task's gate state now (from its ordering state).
	State []gate.ChannelState
	// Starts are the positions the next execution reads each channel of
	// the new declaration from (committed offsets; the log start of a
	// channel without one): its keys are the new scope.
	Starts map[clock.Channel]int64
	// LogStart is each channel's log start; Deleted the topics that no
	// longer exist; Names the topics' names by ID.
	LogStart map[clock.Channel]int64
	Deleted  map[clock.TopicID]bool
	Names    map[clock.TopicID]string
}

// Stranded is a channel the declaration drops while it holds records.
type Stranded struct {
	Channel clock.Channel
	Held    []int64
}

// Seed is a channel that joins the scope, and where it is read from.
type Seed struct {
	Channel clock.Channel
	At      int64
}

// DeployPlan is the answer: by the same rules as a history replay.
type DeployPlan struct {
	// Refusals are what refuses the start (empty: it starts).
	Refusals []Refusal
	Stranded []Stranded
	Joins    []Seed
	// Delivers are the held records that deliver at once when it starts;
	// StillHeld those that stay held, with what blocks each.
	Delivers  []Delivery
	StillHeld []gate.Held
}

// Deploy answers the deploy question for one task.
func Deploy(in DeployInput) (*DeployPlan, error) {
	plan := &DeployPlan{}
	before := map[clock.Channel]bool{}
	for _, cs := range in.State {
		before[cs.Channel] = true
		if _, kept := in.Starts[cs.Channel]; !kept && len(cs.Held) > 0 {
			s := Stranded{Channel: cs.Channel}
			for _, r := range cs.Held {
				s.Held = append(s.Held, r.Offset)
			}
			plan.Stranded = append(plan.Stranded, s)
		}
	}
	for _, ch := range slices.SortedFunc(maps.Keys(in.Starts), clock.Channel.Compare) {
		if !before[ch] {
			plan.Joins = append(plan.Joins, Seed{Channel: ch, At: in.Starts[ch]})
		}
	}
	h := &History{Names: in.Names}
	u := newUnit(in.Unit)
	if len(in.State) > 0 {
		g, err := gate.Restore(in.State)
		if err != nil {
			return nil, fmt.Errorf("task %s: the ordering state: %w", in.Unit, err)
		}
		g.Drain(nil) // what it delivers as it stands is not the deploy's doing
		u.g, u.started = g, true
		for _, cs := range in.State {
			u.order = append(u.order, cs.Channel)
		}
	}
	logStart := in.LogStart
	if logStart == nil {
		logStart = map[clock.Channel]int64{}
	}
	dead := in.Deleted
	if dead == nil {
		dead = map[clock.TopicID]bool{}
	}
	st := &Step{Kind: StepRead, Unit: in.Unit, ExecStart: in.Starts}
	if err := u.start(h, st, dead, func(Rule) bool { return true }); err != nil {
		return nil, fmt.Errorf("task %s: %w", in.Unit, err)
	}
	if !u.out.Stopped {
		// It resumes each channel at its start: one below the log start
		// refuses as soon as it is read (RuleTruncated).
		for _, ch := range u.order {
			if s, ok := logStart[ch]; ok && in.Starts[ch] < s {
				u.refuse(truncated(h, ch, 0, in.Starts[ch], s))
				break
			}
		}
	}
	plan.Refusals = u.out.Refusals
	if u.out.Stopped {
		return plan, nil
	}
	plan.Delivers = u.pending
	for _, ch := range u.order {
		plan.StillHeld = append(plan.StillHeld, u.g.Queue(ch)...)
	}
	return plan, nil
}
