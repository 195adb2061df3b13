// Package history replays what a Parsley process did across executions:
// declarations that add and remove received channels, restarts from the
// ordering state and the committed positions, rewinds, truncation, topics
// deleted and recreated, refusals and the resume after them (SPEC §7).
// Each unit (process, task) is driven through one gate, seeded from the
// state its previous execution left (gate.Restore), so every delivery is
// the gate's; the history adds only the rules between executions. It is
// pure: no I/O, no time.
package history

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/parsley"
)

// Unit is one task of one process: what one gate replays.
type Unit struct {
	Process string
	Task    int32
}

func (u Unit) String() string { return fmt.Sprintf("%s/%d", u.Process, u.Task) }

// Rule names the rule that decided a delivery or a refusal (SPEC §7).
type Rule string

const (
	// RuleCausal: the gate delivered the record when its causes were met.
	RuleCausal Rule = "causal-order"
	// RuleResume: a restart resumes from the ordering state and the
	// committed positions; a seeded head delivers at once, nothing
	// delivered before a rewind is delivered again.
	RuleResume Rule = "restart-resume"
	// RuleScope: the scope follows the declaration between executions;
	// an added channel seeds at its committed position.
	RuleScope Rule = "scope-change"
	// RuleRemovedHeld: a channel dropped while it holds records refuses.
	RuleRemovedHeld Rule = "removed-with-held"
	// RuleDeleted: a deleted or recreated topic's channels are dead; a dead
	// channel holding records refuses.
	RuleDeleted Rule = "dead-channel"
	// RuleIdentity: a topic recreated under its name is another channel.
	RuleIdentity Rule = "identity-change"
	// RuleTruncated: a committed position below the log start refuses.
	RuleTruncated Rule = "truncation"
	// RuleUndecodable: an undecodable causes header fails the task closed.
	RuleUndecodable Rule = "undecodable"
	// RuleRefusalResume: after a refusal the task stays stopped until an
	// execution whose start passes the start check.
	RuleRefusalResume Rule = "refusal-resume"
)

// Record is one record of a channel.
type Record struct {
	Offset int64
	Clock  clock.Clock
	// DecodeErr is why its causes header is undecodable; nil when it is not.
	DecodeErr error
	// Causes is the parsley.causes header as written (nil: none), which
	// Clock decodes; the audit (check --parsley-export) reads it as a
	// capture's header.
	Causes []byte
	UID    string
}

// StepKind is what a step of a history is.
type StepKind uint8

const (
	// StepRead is one read of a unit: an execution started at ExecStart
	// (a new one when it differs from the last) read each channel up to
	// NextRead.
	StepRead StepKind = iota + 1
	// StepDelete deletes a topic: its channels are dead from then on (a
	// recreation is a deletion and a new topic ID).
	StepDelete
	// StepTruncate moves a channel's log start up to LogStart.
	StepTruncate
)

// Step is one event of a history, in the order they happened.
type Step struct {
	Index int
	Kind  StepKind
	Unit  Unit
	// ExecStart and NextRead are a read's positions by channel: the
	// execution's scope is ExecStart's channels.
	ExecStart map[clock.Channel]int64
	NextRead  map[clock.Channel]int64
	// Topic is the deleted topic.
	Topic clock.TopicID
	// Channel and LogStart are a truncation's.
	Channel  clock.Channel
	LogStart int64
}

// History is what a process history is replayed from.
type History struct {
	Records  map[clock.Channel][]Record // by rising offset
	LogStart map[clock.Channel]int64    // at the start
	Steps    []Step
	// Names are the topics' names by ID: a topic recreated under its name
	// has a new ID and the same name.
	Names map[clock.TopicID]string
}

// Delivery is one record a unit delivered.
type Delivery struct {
	Channel clock.Channel
	Offset  int64
	Rule    Rule
	// Step is the index of the step it was delivered in.
	Step int
}

// Refusal is a unit's stop.
type Refusal struct {
	Reason  parsley.Reason
	Rule    Rule
	Channel clock.Channel
	Step    int
	Detail  string
}

// Outcome is what one unit did over the history.
type Outcome struct {
	Unit       Unit
	Deliveries []Delivery
	// Refusals are every refusal, in order; Stopped says the last one still
	// holds at the end.
	Refusals []Refusal
	Stopped  bool
	// Held is what its gate holds at the end, by channel.
	Held map[clock.Channel][]int64
}

// Options are the replay's; the zero value applies every rule.
type Options struct {
	// without switches rules off: only tests set it, to show each rule is
	// needed (a scenario diverges without it).
	without map[Rule]bool
}

type unit struct {
	out       *Outcome
	started   bool
	g         *gate.Gate
	execStart map[clock.Channel]int64
	order     []clock.Channel // the scope in the order channels joined
	// fedEver is the highest position fed on each channel over every
	// execution, kept when a channel leaves the scope: a channel that
	// rejoins, or is rewound, is not fed again what it was fed.
	fedEver map[clock.Channel]int64
}

// Replay drives every unit of h through its history and returns the
// outcomes by unit, in the order units first appear.
func Replay(h *History, opts Options) ([]*Outcome, error) {
	dead := map[clock.TopicID]bool{}
	logStart := maps.Clone(h.LogStart)
	if logStart == nil {
		logStart = map[clock.Channel]int64{}
	}
	units := map[Unit]*unit{}
	var order []*Outcome
	on := func(r Rule) bool { return !opts.without[r] }
	for i := range h.Steps {
		st := &h.Steps[i]
		switch st.Kind {
		case StepDelete:
			dead[st.Topic] = true
			// A running task holding records on a channel of the deleted
			// topic can no longer order them: it refuses now.
			for _, out := range order {
				u := units[out.Unit]
				if u.g == nil || out.Stopped || !on(RuleDeleted) {
					continue
				}
				for _, ch := range u.order {
					if ch.Topic == st.Topic && u.g.Depth(ch) > 0 {
						u.refuse(Refusal{Reason: parsley.ReasonDeletedWithUndelivered, Rule: RuleDeleted, Channel: ch, Step: st.Index,
							Detail: fmt.Sprintf("%d held record(s) on %s, whose topic was deleted", u.g.Depth(ch), ChannelName(h.Names, ch))})
						break
					}
				}
			}
		case StepTruncate:
			logStart[st.Channel] = max(logStart[st.Channel], st.LogStart)
		case StepRead:
			u := units[st.Unit]
			if u == nil {
				u = &unit{out: &Outcome{Unit: st.Unit}, fedEver: map[clock.Channel]int64{}}
				units[st.Unit] = u
				order = append(order, u.out)
			}
			if err := u.read(h, st, dead, logStart, on); err != nil {
				return nil, fmt.Errorf("unit %s, step %d: %w", st.Unit, st.Index, err)
			}
		default:
			return nil, fmt.Errorf("step %d: unknown kind %d", st.Index, st.Kind)
		}
	}
	for _, out := range order {
		u := units[out.Unit]
		if u.g == nil {
			continue
		}
		out.Held = map[clock.Channel][]int64{}
		for _, cs := range u.g.State() {
			for _, r := range cs.Held {
				out.Held[cs.Channel] = append(out.Held[cs.Channel], r.Offset)
			}
		}
	}
	return order, nil
}

func (u *unit) refuse(r Refusal) {
	u.out.Refusals = append(u.out.Refusals, r)
	u.out.Stopped = true
}

// read runs one read: a new execution first when the start differs.
func (u *unit) read(h *History, st *Step, dead map[clock.TopicID]bool, logStart map[clock.Channel]int64, on func(Rule) bool) error {
	fresh := !u.started || !maps.Equal(st.ExecStart, u.execStart)
	if fresh {
		if err := u.start(h, st, dead, logStart, on); err != nil {
			return err
		}
	}
	if u.out.Stopped || u.g == nil {
		return nil // the refused execution reads nothing
	}
	for _, ch := range u.order {
		next, ok := st.NextRead[ch]
		if !ok {
			continue
		}
		fed := u.g.Fed(ch)
		for _, r := range h.Records[ch] {
			if r.Offset <= fed || r.Offset >= next {
				continue // before: read already (nothing is fed twice); after: not read yet
			}
			if err := u.g.Receive(ch, r.Offset, r.Clock, r.DecodeErr); err != nil {
				var fc *gate.FailClosedError
				if errors.As(err, &fc) {
					u.drain(st.Index, RuleCausal)
					u.refuse(Refusal{Reason: parsley.ReasonUndecodableMetadata, Rule: RuleUndecodable, Channel: ch, Step: st.Index,
						Detail: fmt.Sprintf("%s offset %d: %v", ChannelName(h.Names, ch), r.Offset, err)})
					return nil
				}
				return fmt.Errorf("channel %s offset %d: %w", ChannelName(h.Names, ch), r.Offset, err)
			}
			u.drain(st.Index, RuleCausal)
		}
		if next-1 > u.g.Fed(ch) {
			if err := u.g.Advance(ch, next); err != nil {
				return fmt.Errorf("channel %s: %w", ch, err)
			}
			u.drain(st.Index, RuleCausal)
		}
	}
	return nil
}

// start begins an execution at st.ExecStart: the start check (refusals),
// then the gate restored from the last execution's state.
func (u *unit) start(h *History, st *Step, dead map[clock.TopicID]bool, logStart map[clock.Channel]int64, on func(Rule) bool) error {
	u.execStart, u.started = st.ExecStart, true
	refused := false
	refuse := func(r Refusal) {
		u.refuse(r)
		refused = true
	}
	var prev []gate.ChannelState
	if u.g != nil && on(RuleResume) {
		prev = u.g.State()
	}
	scope := slices.SortedFunc(maps.Keys(st.ExecStart), clock.Channel.Compare)
	if !on(RuleScope) && u.order != nil {
		scope = u.order // the scope of the first execution, forever
	}
	// The start check, in Parsley's order of reasons.
	for _, cs := range prev {
		if len(cs.Held) == 0 {
			continue
		}
		if dead[cs.Channel.Topic] && on(RuleDeleted) {
			refuse(Refusal{Reason: parsley.ReasonDeletedWithUndelivered, Rule: RuleDeleted, Channel: cs.Channel, Step: st.Index,
				Detail: fmt.Sprintf("%d held record(s) on %s, whose topic no longer exists", len(cs.Held), ChannelName(h.Names, cs.Channel))})
			break
		}
		if !slices.Contains(scope, cs.Channel) && on(RuleRemovedHeld) {
			refuse(Refusal{Reason: parsley.ReasonRemovedWithHeld, Rule: RuleRemovedHeld, Channel: cs.Channel, Step: st.Index,
				Detail: fmt.Sprintf("the declaration drops %s, which holds %d record(s)", ChannelName(h.Names, cs.Channel), len(cs.Held))})
			break
		}
	}
	for _, ch := range scope {
		if refused {
			break
		}
		// The stored binding of a name to a topic ID that is no longer the
		// name's: the topic was deleted and recreated.
		for _, cs := range prev {
			if name, ok := h.Names[cs.Channel.Topic]; ok && dead[cs.Channel.Topic] && cs.Channel.Topic != ch.Topic &&
				h.Names[ch.Topic] == name && on(RuleIdentity) {
				refuse(Refusal{Reason: parsley.ReasonIdentityChanged, Rule: RuleIdentity, Channel: ch, Step: st.Index,
					Detail: fmt.Sprintf("%s is bound to topic ID %s, recreated as %s", name, cs.Channel.Topic, ch.Topic)})
				break
			}
		}
		if s, ok := logStart[ch]; ok && st.ExecStart[ch] < s && on(RuleTruncated) && !refused {
			refuse(Refusal{Reason: parsley.ReasonPositionsDiscarded, Rule: RuleTruncated, Channel: ch, Step: st.Index,
				Detail: fmt.Sprintf("%s resumes at %d but its log starts at %d", ChannelName(h.Names, ch), st.ExecStart[ch], s)})
		}
	}
	if refused && on(RuleRefusalResume) {
		// Stopped until an execution whose start passes the check; the
		// state stays as the last execution left it.
		return nil
	}
	u.out.Stopped = false
	// The state carried over: the channels still in scope, in the order
	// they joined; then the channels added, seeded at their committed
	// positions. A rewound channel keeps its fed position, so nothing it
	// read (delivered or held) is fed again.
	var seed []gate.ChannelState
	for _, cs := range prev {
		if !slices.Contains(scope, cs.Channel) {
			continue
		}
		if s := st.ExecStart[cs.Channel] - 1; s > cs.Fed {
			cs.Fed, cs.Reached = s, max(cs.Reached, s)
		}
		seed = append(seed, cs)
	}
	order := make([]clock.Channel, 0, len(scope))
	for _, cs := range seed {
		order = append(order, cs.Channel)
	}
	for _, ch := range scope {
		if slices.Contains(order, ch) {
			continue
		}
		fed := st.ExecStart[ch] - 1
		if r, ok := u.fedEver[ch]; ok && r > fed && on(RuleResume) {
			fed = r
		}
		seed = append(seed, gate.ChannelState{Channel: ch, Fed: fed, Reached: fed, Known: true})
		order = append(order, ch)
	}
	g, err := gate.Restore(seed)
	if err != nil {
		return fmt.Errorf("restoring the ordering state: %w", err)
	}
	u.g, u.order = g, order
	u.drain(st.Index, RuleResume)
	return nil
}

func (u *unit) drain(step int, rule Rule) {
	for _, ch := range u.order {
		if f, ok := u.fedEver[ch]; !ok || u.g.Fed(ch) > f {
			u.fedEver[ch] = u.g.Fed(ch)
		}
	}
	for _, ev := range u.g.Drain(nil) {
		if ev.Kind == gate.EventDeliver {
			u.out.Deliveries = append(u.out.Deliveries, Delivery{Channel: ev.Channel, Offset: ev.Offset, Rule: rule, Step: step})
		}
	}
}

// UnitScope is the scope of one unit's executions from Step on, until
// its declaration changes.
type UnitScope struct {
	Unit     Unit
	Step     int
	Channels []clock.Channel // sorted
}

// Scopes returns every unit's scopes as they changed over the history:
// one for its first execution and one for each execution whose scope
// differs from the one before, in the order of the steps.
func (h *History) Scopes() []UnitScope {
	var out []UnitScope
	last := map[Unit][]clock.Channel{}
	for _, st := range h.Steps {
		if st.Kind != StepRead {
			continue
		}
		scope := slices.SortedFunc(maps.Keys(st.ExecStart), clock.Channel.Compare)
		if prev, ok := last[st.Unit]; ok && slices.Equal(prev, scope) {
			continue
		}
		last[st.Unit] = scope
		out = append(out, UnitScope{Unit: st.Unit, Step: st.Index, Channels: scope})
	}
	return out
}

// sortOutcomes orders outcomes by unit.
func sortOutcomes(outs []*Outcome) {
	slices.SortFunc(outs, func(a, b *Outcome) int {
		return cmp.Or(cmp.Compare(a.Unit.Process, b.Unit.Process), cmp.Compare(a.Unit.Task, b.Unit.Task))
	})
}
