package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
)

// Scope sources (JSON scope_source).
const (
	scopeSubscription = "subscription" // the group's member subscriptions
	scopeState        = "state"        // the store's `n` bindings: an upper bound
)

// task is one task's state and its diagnosis.
type task struct {
	read        *parsley.PartitionRead
	state       *parsley.Task
	scopeSource string
	assignedTo  string // member ID; "" when unassigned or unknown
	// scope is the task's channels (SPEC §6) and every other channel its
	// store holds records of, sorted by name as people read them.
	scope []clock.Channel
	// ready are the heads of the store that nothing blocks any more, by
	// channel: the restored gate delivered them at once.
	ready map[clock.Channel]bool
	// report diagnoses what the restored gate still holds.
	report *inspect.Report
	heads  map[clock.Channel]*inspect.Head
}

// analyse decodes task p's store, seeds a gate from it and diagnoses it.
func analyse(w *world, p int32, now time.Time) (*task, error) {
	t := &task{read: w.changelog.Partition(p), ready: map[clock.Channel]bool{}, heads: map[clock.Channel]*inspect.Head{}}
	t.state = t.read.Store.Decode()
	for name, id := range t.state.Names {
		_ = w.names.Add(name, id) // the cluster's binding, when it differs, was learned first
	}
	t.scope, t.scopeSource = taskScope(w, t.state)
	t.assignedTo = assignedTo(w, p, t.scope)

	states := make([]gate.ChannelState, 0, len(t.scope))
	for _, ch := range t.scope {
		cs := gate.ChannelState{Channel: ch, Fed: -1, Reached: -1}
		if c := t.state.Channel(ch); c != nil {
			cs.Fed = max(c.FedUpTo, -1)
			for _, h := range c.Held {
				clk, err := h.Record.Clock()
				if err != nil {
					return nil, fmt.Errorf("task %d: held record %s@%d: %w", p, w.names.Channel(ch), h.Offset, err)
				}
				cs.Held = append(cs.Held, gate.SeedRecord{Offset: h.Offset, Clock: clk})
				cs.Fed = max(cs.Fed, h.Offset) // older releases may lack f
			}
		}
		// The group's committed offset is where the process's position
		// stands: an offset below it that is not fed carried no record.
		if off, ok := w.committed[ch]; ok {
			cs.Reached = max(cs.Fed, off-1)
		}
		states = append(states, cs)
	}
	g, err := gate.Restore(states)
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", p, err)
	}
	for _, ev := range g.Drain(nil) {
		if c := t.state.Channel(ev.Channel); ev.Kind == gate.EventDeliver && c != nil && len(c.Held) > 0 && c.Held[0].Offset == ev.Offset {
			t.ready[ev.Channel] = true
		}
	}
	t.report = inspect.Diagnose(inspect.Input{
		Gate:  g,
		Names: w.names,
		Facts: inspect.Facts{Log: w.logFacts},
		Timestamp: func(ch clock.Channel, offset int64) (time.Time, bool) {
			return heldTime(t.state, ch, offset)
		},
		Now: now,
	})
	for i := range t.report.Heads {
		h := &t.report.Heads[i]
		if ch, err := w.names.ParseChannel(h.Channel); err == nil {
			t.heads[ch] = h
		}
	}
	return t, nil
}

func (w *world) logFacts(ch clock.Channel) (*capture.LogFacts, bool) {
	f, ok := w.facts[ch]
	return f, ok
}

// heldTime is a held record's own timestamp.
func heldTime(t *parsley.Task, ch clock.Channel, offset int64) (time.Time, bool) {
	if c := t.Channel(ch); c != nil {
		for _, h := range c.Held {
			if h.Offset == offset && h.Record.Timestamp >= 0 {
				return time.UnixMilli(h.Record.Timestamp), true
			}
		}
	}
	return time.Time{}, false
}

// taskScope is task p's scope (SPEC §6): partition p of every topic the
// process receives — from the members' subscriptions while it runs, else
// from the store's `n` bindings — that has a partition p, and besides every
// channel the store holds records of (without subscriptions, every channel
// it names).
func taskScope(w *world, st *parsley.Task) ([]clock.Channel, string) {
	p := st.Task
	source := scopeState
	topics := map[string]clock.TopicID{}
	if sub := w.subscribed(); sub != nil {
		source = scopeSubscription
		for _, name := range sub {
			if id, ok := w.ids[name]; ok {
				topics[name] = id
			} else if id, ok := st.Names[name]; ok {
				topics[name] = id
			}
		}
	} else {
		for name, id := range st.Names {
			topics[name] = id
		}
	}
	set := map[clock.Channel]bool{}
	for name, id := range topics {
		ch := clock.Channel{Topic: id, Partition: p}
		n, known := w.counts[name]
		if known && w.ids[name] == id {
			if p < n {
				set[ch] = true
			}
			continue
		}
		if st.Channel(ch) != nil { // no partition count: the store tells
			set[ch] = true
		}
	}
	// Without subscriptions the store is the bound: every channel it
	// names. With them, a channel outside still shows what it holds.
	for _, c := range st.Channels {
		if len(c.Held) > 0 || source == scopeState {
			set[c.Channel] = true
		}
	}
	out := make([]clock.Channel, 0, len(set))
	for ch := range set {
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b clock.Channel) int { return strings.Compare(w.names.Channel(a), w.names.Channel(b)) })
	return out, source
}

// assignedTo returns the member assigned a channel of the task's scope,
// or "".
func assignedTo(w *world, p int32, scope []clock.Channel) string {
	if w.group == nil {
		return ""
	}
	for _, m := range w.group.Members {
		for topic, parts := range m.Assignment {
			id, ok := w.ids[topic]
			if !ok || !slices.Contains(parts, p) {
				continue
			}
			if slices.Contains(scope, clock.Channel{Topic: id, Partition: p}) {
				return m.MemberID
			}
		}
	}
	return ""
}
