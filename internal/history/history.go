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
	// RuleTruncated: reading a channel on from a position below its log
	// start refuses: the positions between were discarded unread.
	RuleTruncated Rule = "truncation"
	// RuleUndecodable: an undecodable causes header fails the task closed.
	RuleUndecodable Rule = "undecodable"
	// RuleRefusalResume: after a refusal the task stays stopped until an
	// execution whose start passes the start check.
	RuleRefusalResume Rule = "refusal-resume"
	// RuleJoinClamp: a channel in the scope at a start is read only above
	// the task's delivered causal past on it (the causes of the records it
	// delivered): what it has delivered effects of is not delivered again.
	RuleJoinClamp Rule = "join-clamp"
	// RuleStepPaced: a record the gate can deliver is delivered by a later
	// step of the host; until the export's trace counts show that step, it
	// is held, and an execution that ends first leaves it held in the
	// ordering state.
	RuleStepPaced Rule = "step-paced"
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
	// StepStatus is Parsley's lifecycle report for a process (Unit.Process;
	// every task of it): an execution ended there, and the next read
	// starts a new one.
	StepStatus
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
	// TraceEnd is, for a read or a status, how many deliveries the unit's
	// process had made by then (the export's trace ends), when TraceKnown;
	// without it every delivery the gate decides counts at once.
	TraceEnd   int64
	TraceKnown bool
	// Running and Reason are a status's: Parsley's lifecycle and the
	// refusal it reported ("" for none).
	Running bool
	Reason  string
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
	// Pending are records its gate delivered that the trace counts do not
	// show delivered by the end (RuleStepPaced): Parsley had not got to
	// them when the export ends.
	Pending []Delivery
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
	// past is the delivered causal past: per channel, the highest position
	// the clocks of the records it delivered name (RuleJoinClamp).
	past map[clock.Channel]int64
	// pending are deliveries the gate made that the trace counts do not
	// show yet, in delivery order (RuleStepPaced); paced says the export
	// gives trace counts for this unit.
	pending []Delivery
	paced   bool
	// ended says a status ended the execution: the next read starts anew.
	ended bool
	// seen is the log starts as of the unit's last observation (a read or
	// its process's status): a read that moves on from below one of them
	// read across discarded positions (RuleTruncated). A read cannot tell
	// a record received before a later truncation from one after it.
	seen map[clock.Channel]int64
}

func newUnit(u Unit) *unit {
	return &unit{out: &Outcome{Unit: u}, fedEver: map[clock.Channel]int64{}, past: map[clock.Channel]int64{}}
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
	// statusSeen is the log starts as of each process's last status.
	statusSeen := map[string]map[clock.Channel]int64{}
	// commit counts the deliveries process p's trace shows by an
	// observation: the gate's pending deliveries up to end are made.
	commit := func(p string, end int64) {
		made := int64(0)
		for _, out := range order {
			if out.Unit.Process == p {
				made += int64(len(out.Deliveries))
			}
		}
		for _, out := range order {
			u := units[out.Unit]
			if out.Unit.Process != p || u.out.Stopped {
				continue // a stopped task delivers nothing
			}
			for len(u.pending) > 0 && made < end {
				i := u.nextPending(h)
				u.make(h, u.pending[i])
				u.pending = slices.Delete(u.pending, i, i+1)
				made++
			}
		}
	}
	for i := range h.Steps {
		st := &h.Steps[i]
		switch st.Kind {
		case StepStatus:
			// An execution of the process ended (or began): what its trace
			// shows delivered by now was delivered; the rest stays held.
			if st.TraceKnown && on(RuleStepPaced) {
				commit(st.Unit.Process, st.TraceEnd)
			}
			statusSeen[st.Unit.Process] = maps.Clone(logStart)
			for _, out := range order {
				if out.Unit.Process == st.Unit.Process {
					units[out.Unit].ended = true
					units[out.Unit].seen = maps.Clone(logStart)
				}
			}
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
					if n := u.g.Depth(ch) + u.pendingOn(ch); ch.Topic == st.Topic && n > 0 {
						u.refuse(Refusal{Reason: parsley.ReasonDeletedWithUndelivered, Rule: RuleDeleted, Channel: ch, Step: st.Index,
							Detail: fmt.Sprintf("%d held record(s) on %s, whose topic was deleted", n, ChannelName(h.Names, ch))})
						break
					}
				}
			}
		case StepTruncate:
			logStart[st.Channel] = max(logStart[st.Channel], st.LogStart)
		case StepRead:
			u := units[st.Unit]
			if u == nil {
				u = newUnit(st.Unit)
				u.seen = statusSeen[st.Unit.Process]
				if u.seen == nil {
					u.seen = maps.Clone(logStart) // no earlier observation: as of now
				}
				units[st.Unit] = u
				order = append(order, u.out)
			}
			if err := u.read(h, st, dead, on); err != nil {
				return nil, fmt.Errorf("unit %s, step %d: %w", st.Unit, st.Index, err)
			}
			u.seen = maps.Clone(logStart)
			if st.TraceKnown && on(RuleStepPaced) {
				u.paced = true
				commit(st.Unit.Process, st.TraceEnd)
			} else if !u.paced {
				for _, d := range u.pending {
					u.make(h, d)
				}
				u.pending = nil
			}
		default:
			return nil, fmt.Errorf("step %d: unknown kind %d", st.Index, st.Kind)
		}
	}
	for _, out := range order {
		u := units[out.Unit]
		out.Pending = u.pending
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

// make records a delivery as made: in the outcome and in the delivered
// causal past.
func (u *unit) make(h *History, d Delivery) {
	u.out.Deliveries = append(u.out.Deliveries, d)
	if r := recordAt(h, d.Channel, d.Offset); r != nil {
		for _, e := range r.Clock.Entries() {
			if p, ok := u.past[e.Channel]; !ok || e.Position > p {
				u.past[e.Channel] = e.Position
			}
		}
	}
}

// nextPending picks the pending delivery Parsley's host makes next: of
// the channels' first pending records, the one on the lowest channel whose
// causes wait for no pending record (Parsley offers the first deliverable
// head in channel order at each step).
func (u *unit) nextPending(h *History) int {
	best := -1
	for i, d := range u.pending {
		if best >= 0 && u.pending[best].Channel.Compare(d.Channel) <= 0 {
			continue
		}
		if u.waits(h, i) {
			continue
		}
		best = i
	}
	if best < 0 {
		return 0 // cannot happen: the gate delivered them in some order
	}
	return best
}

// waits says pending record i waits for another pending record: an earlier
// one on its channel, or one its clock names on a channel in scope.
func (u *unit) waits(h *History, i int) bool {
	d := u.pending[i]
	r := recordAt(h, d.Channel, d.Offset)
	for j, o := range u.pending {
		if j == i {
			continue
		}
		if o.Channel == d.Channel {
			if o.Offset < d.Offset {
				return true
			}
			continue
		}
		if r != nil && slices.Contains(u.order, o.Channel) {
			if n, ok := r.Clock.Get(o.Channel); ok && o.Offset <= n {
				return true
			}
		}
	}
	return false
}

// pendingOn counts the pending deliveries on ch.
func (u *unit) pendingOn(ch clock.Channel) int {
	n := 0
	for _, d := range u.pending {
		if d.Channel == ch {
			n++
		}
	}
	return n
}

func recordAt(h *History, ch clock.Channel, offset int64) *Record {
	rs := h.Records[ch]
	i, ok := slices.BinarySearchFunc(rs, offset, func(r Record, o int64) int { return cmp.Compare(r.Offset, o) })
	if !ok {
		return nil
	}
	return &rs[i]
}

func (u *unit) refuse(r Refusal) {
	u.out.Refusals = append(u.out.Refusals, r)
	u.out.Stopped = true
}

// read runs one read: a new execution first when the start differs.
func (u *unit) read(h *History, st *Step, dead map[clock.TopicID]bool, on func(Rule) bool) error {
	fresh := !u.started || u.ended || !maps.Equal(st.ExecStart, u.execStart)
	u.ended = false
	if fresh {
		if err := u.start(h, st, dead, on); err != nil {
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
		// Reading on from below the log start crosses positions retention
		// discarded: the task refuses rather than read past them.
		if s := u.seen[ch]; fed+1 < s && next > fed+1 && on(RuleTruncated) {
			u.refuse(truncated(h, ch, st.Index, fed+1, s))
			return nil
		}
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
// then the gate restored from the last execution's state, with what it
// had not delivered held again. A position below a log start is not part
// of the check: Parsley finds it when the task reads there (read).
func (u *unit) start(h *History, st *Step, dead map[clock.TopicID]bool, on func(Rule) bool) error {
	u.execStart, u.started = st.ExecStart, true
	refused := false
	refuse := func(r Refusal) {
		u.refuse(r)
		refused = true
	}
	var prev []gate.ChannelState
	if u.g != nil && on(RuleResume) {
		prev = u.rehold(h, u.g.State())
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
	}
	if refused && on(RuleRefusalResume) {
		// Stopped until an execution whose start passes the check; the
		// state stays as the last execution left it.
		return nil
	}
	u.out.Stopped = false
	u.pending = nil // held again in prev
	// The state carried over: the channels still in scope, in the order
	// they joined; then the channels added, seeded at their committed
	// positions. A rewound channel keeps its fed position, so nothing it
	// read (delivered or held) is fed again.
	var seed []gate.ChannelState
	for _, cs := range prev {
		if !slices.Contains(scope, cs.Channel) {
			continue
		}
		if s := u.clamp(cs.Channel, st.ExecStart[cs.Channel]-1, on); s > cs.Fed {
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
		fed := u.clamp(ch, st.ExecStart[ch]-1, on)
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

// drain takes the gate's deliveries as pending: the caller makes them
// when the trace counts show them (RuleStepPaced), or at once.
func (u *unit) drain(step int, rule Rule) {
	for _, ch := range u.order {
		if f, ok := u.fedEver[ch]; !ok || u.g.Fed(ch) > f {
			u.fedEver[ch] = u.g.Fed(ch)
		}
	}
	for _, ev := range u.g.Drain(nil) {
		if ev.Kind == gate.EventDeliver {
			u.pending = append(u.pending, Delivery{Channel: ev.Channel, Offset: ev.Offset, Rule: rule, Step: step})
		}
	}
}

// clamp raises a start's fed position on ch to the delivered causal past
// on it (RuleJoinClamp).
func (u *unit) clamp(ch clock.Channel, fed int64, on func(Rule) bool) int64 {
	if p, ok := u.past[ch]; ok && p > fed && on(RuleJoinClamp) {
		return p
	}
	return fed
}

// rehold puts the pending deliveries back at the heads of their channels'
// hold queues: the execution ended before its host delivered them, so
// they are held in its ordering state (RuleStepPaced).
func (u *unit) rehold(h *History, state []gate.ChannelState) []gate.ChannelState {
	for i := range state {
		cs := &state[i]
		var back []gate.SeedRecord
		for _, d := range u.pending {
			if d.Channel != cs.Channel {
				continue
			}
			if r := recordAt(h, d.Channel, d.Offset); r != nil {
				back = append(back, gate.SeedRecord{Offset: r.Offset, Clock: r.Clock})
			}
		}
		if len(back) > 0 {
			slices.SortFunc(back, func(a, b gate.SeedRecord) int { return cmp.Compare(a.Offset, b.Offset) })
			cs.Held = append(back, cs.Held...)
		}
	}
	return state
}

// truncated is the refusal of reading ch on from pos below its log start.
func truncated(h *History, ch clock.Channel, step int, pos, logStart int64) Refusal {
	return Refusal{Reason: parsley.ReasonPositionsDiscarded, Rule: RuleTruncated, Channel: ch, Step: step,
		Detail: fmt.Sprintf("%s is read on from %d but its log starts at %d", ChannelName(h.Names, ch), pos, logStart)}
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
