package inspect

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// Scope sources: where a task's scope came from.
const (
	// ScopeSubscription: the group's member subscriptions (the process runs).
	ScopeSubscription = "subscription"
	// ScopeState: the store's `n` bindings, an upper bound (a stopped
	// process keeps the binding of a topic that left its scope).
	ScopeState = "state"
)

// Process is everything known of one Parsley process (SPEC §6): its
// ordering changelog as read and, around it, what the cluster (or a
// capture) says of its group and the topics it receives. The caller reads
// it; diagnosing it reads nothing.
type Process struct {
	// App is the application id; "" when unknown.
	App string
	// Changelog is the ordering changelog as read.
	Changelog *parsley.Changelog
	// Group is the group as described; nil when unknown (a capture).
	Group *record.Group
	// Committed holds the group's committed offsets; nil when unknown.
	Committed map[clock.Channel]int64
	// Facts are the business channels' log facts.
	Facts map[clock.Channel]*record.LogFacts
	// Counts are the business topics' partition counts and IDs the topic
	// IDs the cluster (or capture) binds their names to.
	Counts map[string]int32
	IDs    map[string]clock.TopicID
	// Names resolves topic IDs for people; the store's bindings are added
	// to it as tasks are diagnosed.
	Names *clock.Names
	// ChangelogMissing says the changelog topic does not exist (its group
	// remains): Changelog is then empty.
	ChangelogMissing bool
	// Captured says the process was read from a capture: Facts, Counts and
	// IDs hold only the topics it has log facts of, so a topic missing
	// from them is not known to be deleted.
	Captured bool
	// ReadOn are the tasks read on from the committed offsets to the log
	// end, by task (process.Attach.ReadOn); nil when not read on (a
	// capture, or a process no group offsets resume).
	ReadOn map[int32]*ReadOn
	// RetentionWarn flags a held record whose retention headroom is below
	// it (Input.RetentionWarn); 0 flags none.
	RetentionWarn time.Duration
	// ChangelogCleanup and ChangelogMaxBytes are the ordering changelog's
	// cleanup.policy (set on the topic) and max.message.bytes; "" and 0
	// when unknown.
	ChangelogCleanup  string
	ChangelogMaxBytes int64

	// bound are the topic ids of IDs, for TopicDeleted (which live
	// snapshots call from their own goroutine).
	boundMu sync.Mutex
	bound   map[clock.TopicID]bool
	boundOf int
}

// NewProcess returns a process with empty maps, ready to learn topics.
func NewProcess(app string, cl *parsley.Changelog, names *clock.Names) *Process {
	return &Process{App: app, Changelog: cl, Names: names, Facts: map[clock.Channel]*record.LogFacts{},
		Counts: map[string]int32{}, IDs: map[string]clock.TopicID{}}
}

// Learn notes that topic, bound to id, has partition p.
func (p *Process) Learn(topic string, id clock.TopicID, partition int32) {
	p.Counts[topic] = max(p.Counts[topic], clock.PartitionCount(partition))
	if !id.IsZero() {
		p.IDs[topic] = id
		_ = p.Names.Add(topic, id) // a conflicting name was given by --topic-id: it wins
	}
}

// Subscribed returns the topics the group's members subscribe to, sorted;
// nil when no member says.
func (p *Process) Subscribed() []string {
	if p.Group == nil {
		return nil
	}
	var out []string
	for _, m := range p.Group.Members {
		if parsley.ForeignMember(p.App, m) != "" {
			continue // not the process's: its topics are no declaration
		}
		out = append(out, m.Subscription...)
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// LogFacts returns a business channel's log facts (Facts.Log).
func (p *Process) LogFacts(ch clock.Channel) (*record.LogFacts, bool) {
	f, ok := p.Facts[ch]
	return f, ok
}

// TopicDeleted says ch's topic is gone from the cluster: a process read
// from it (not a capture, which holds only some topics) has neither log
// facts of ch nor a name the cluster binds to ch's topic id.
func (p *Process) TopicDeleted(ch clock.Channel) bool {
	if p.Captured || p.IDs == nil {
		return false
	}
	if _, ok := p.Facts[ch]; ok {
		return false
	}
	p.boundMu.Lock()
	defer p.boundMu.Unlock()
	if p.bound == nil || p.boundOf != len(p.IDs) { // rebuilt if more were learned
		p.bound, p.boundOf = make(map[clock.TopicID]bool, len(p.IDs)), len(p.IDs)
		for _, id := range p.IDs {
			p.bound[id] = true
		}
	}
	return !p.bound[ch.Topic]
}

// Task is one task's state as its store has it, and its diagnosis.
type Task struct {
	Read        *parsley.PartitionRead
	State       *parsley.Task
	ScopeSource string // ScopeSubscription or ScopeState
	AssignedTo  string // member ID; "" when unassigned or unknown
	// Scope is the task's channels (SPEC §6) and every other channel its
	// store holds records of, sorted by name as people read them.
	Scope []clock.Channel
	// Ready are the heads of the store that nothing blocks any more, by
	// channel: the restored gate delivered them at once (the process has
	// not run them since: stopped, or the task unassigned).
	Ready map[clock.Channel]bool
	// Gate is the task's gate seeded from its store, after the ready heads
	// delivered; Report diagnoses what it still holds.
	Gate   *gate.Gate
	Report *Report
	Heads  map[clock.Channel]*Head
	// ReadOn is the task read on from the committed offsets to the log
	// end, when it was (Process.ReadOn): Report and Heads are then the
	// heads the read still holds, as it diagnosed them, and CatchingUp
	// the store's heads it delivered, by channel (their offsets): held
	// now, delivered once the process reads what is already in the log.
	ReadOn     *ReadOn
	CatchingUp map[clock.Channel]int64
}

// FailedClosed is the record the task's gate failed closed on when read
// on; nil when none (or not read on).
func (t *Task) FailedClosed() *FailedClosed {
	if t.ReadOn == nil {
		return nil
	}
	return t.ReadOn.Failed
}

// TaskSeed is one task's state as its store has it, as a gate state:
// what DiagnoseTask restores a gate from, and what a shadow of the process
// (holds --app) seeds its task's gate with before reading on.
type TaskSeed struct {
	Read        *parsley.PartitionRead
	State       *parsley.Task
	ScopeSource string
	AssignedTo  string
	Scope       []clock.Channel
	// Channels are the scope's states: fed-up-to (raised to the highest
	// held offset, which older releases may lack) and the hold queues;
	// Reached is Fed (the group's offsets are not in it).
	Channels []gate.ChannelState
}

// SeedTask decodes task number task's store into the state of its gate
// (SPEC §6), learning the store's name bindings into p.Names.
func SeedTask(p *Process, task int32) (*TaskSeed, error) {
	t := &TaskSeed{Read: p.Changelog.Partition(task)}
	t.State = t.Read.Store.Decode()
	for name, id := range t.State.Names {
		_ = p.Names.Add(name, id) // the cluster's binding, when it differs, was learned first
	}
	t.Scope, t.ScopeSource = taskScope(p, t.State)
	t.AssignedTo = assignedTo(p, task, t.Scope)
	t.Channels = make([]gate.ChannelState, 0, len(t.Scope))
	for _, ch := range t.Scope {
		cs := gate.ChannelState{Channel: ch, Fed: -1, Reached: -1}
		if c := t.State.Channel(ch); c != nil {
			cs.Fed = max(c.FedUpTo, -1)
			cs.Held = make([]gate.SeedRecord, 0, len(c.Held))
			for _, h := range c.Held {
				clk, err := h.Record.Clock()
				if err != nil {
					return nil, fmt.Errorf("task %d: held record %s@%d: %w", task, p.Names.Channel(ch), h.Offset, err)
				}
				cs.Held = append(cs.Held, gate.SeedRecord{Offset: h.Offset, Clock: clk})
				cs.Fed = max(cs.Fed, h.Offset) // older releases may lack f
			}
		}
		cs.Reached = cs.Fed
		t.Channels = append(t.Channels, cs)
	}
	return t, nil
}

// DiagnoseTask decodes task number task's store, seeds a gate from it
// (fed-up-to, hold queues, and the group's committed offsets as positions
// reached) and diagnoses it as holds diagnoses a replayed gate, with the
// business channels' log facts; ages run from each record's timestamp to
// now. When the task was read on from the committed offsets (p.ReadOn),
// each store head is diagnosed as the read found it: its root past what
// the store knows, or the record the task failed closed on.
func DiagnoseTask(p *Process, task int32, now time.Time) (*Task, error) {
	seed, err := SeedTask(p, task)
	if err != nil {
		return nil, err
	}
	t := &Task{Read: seed.Read, State: seed.State, ScopeSource: seed.ScopeSource, AssignedTo: seed.AssignedTo,
		Scope: seed.Scope, Ready: map[clock.Channel]bool{}, Heads: map[clock.Channel]*Head{}}
	states := seed.Channels
	for i := range states {
		// The group's committed offset is where the process's position
		// stands: an offset below it that is not fed carried no record.
		if off, ok := p.Committed[states[i].Channel]; ok {
			states[i].Reached = max(states[i].Fed, off-1)
		}
	}
	g, err := gate.Restore(states)
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", task, err)
	}
	for _, ev := range g.Drain(nil) {
		if c := t.State.Channel(ev.Channel); ev.Kind == gate.EventDeliver && c != nil && len(c.Held) > 0 && c.Held[0].Offset == ev.Offset {
			t.Ready[ev.Channel] = true
		}
	}
	t.Gate = g
	t.Report = Diagnose(Input{
		Gate:  g,
		Names: p.Names,
		Facts: Facts{Log: p.LogFacts, Deleted: p.TopicDeleted},
		Timestamp: func(ch clock.Channel, offset int64) (time.Time, bool) {
			return HeldTimestamp(t.State, ch, offset)
		},
		Sizes: func(ch clock.Channel, offset int64) (int, int, []HeaderSize, bool) {
			return HeldSizes(t.State, ch, offset)
		},
		Now:           now,
		RetentionWarn: p.RetentionWarn,
	})
	for i := range t.Report.Heads {
		t.Heads[t.Report.Heads[i].At] = &t.Report.Heads[i]
	}
	if on := p.ReadOn[task]; on != nil {
		t.readOn(p, on, now)
	}
	return t, nil
}

// HeldSizes are a held record's key and value sizes, from the store (−1
// for a null key or value), and its headers' sizes.
func HeldSizes(t *parsley.Task, ch clock.Channel, offset int64) (key, value int, headers []HeaderSize, ok bool) {
	if c := t.Channel(ch); c != nil {
		for _, h := range c.Held {
			if h.Offset == offset {
				headers = make([]HeaderSize, len(h.Record.Headers))
				for i, hd := range h.Record.Headers {
					headers[i] = HeaderSize{Key: hd.Key, Size: len(hd.Value)}
					if hd.Value == nil {
						headers[i].Size = -1
					}
				}
				return h.Record.KeySize(), h.Record.ValueSize(), headers, true
			}
		}
	}
	return -1, -1, nil, false
}

// HeldTimestamp is a held record's own timestamp, from the store.
func HeldTimestamp(t *parsley.Task, ch clock.Channel, offset int64) (time.Time, bool) {
	if c := t.Channel(ch); c != nil {
		for _, h := range c.Held {
			if h.Offset == offset {
				return record.TimeOf(h.Record.Timestamp)
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
func taskScope(p *Process, st *parsley.Task) ([]clock.Channel, string) {
	part := st.Task
	source := ScopeState
	topics := map[string]clock.TopicID{}
	if sub := p.Subscribed(); sub != nil {
		source = ScopeSubscription
		for _, name := range sub {
			if id, ok := p.IDs[name]; ok {
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
		ch := clock.Channel{Topic: id, Partition: part}
		n, known := p.Counts[name]
		if known && p.IDs[name] == id {
			if part < n {
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
		if len(c.Held) > 0 || source == ScopeState {
			set[c.Channel] = true
		}
	}
	out := make([]clock.Channel, 0, len(set))
	for ch := range set {
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b clock.Channel) int { return strings.Compare(p.Names.Channel(a), p.Names.Channel(b)) })
	return out, source
}

// assignedTo returns the member assigned a channel of the task's scope,
// or "".
func assignedTo(p *Process, task int32, scope []clock.Channel) string {
	if p.Group == nil {
		return ""
	}
	for _, m := range p.Group.Members {
		for topic, parts := range m.Assignment {
			id, ok := p.IDs[topic]
			if !ok || !slices.Contains(parts, task) {
				continue
			}
			if slices.Contains(scope, clock.Channel{Topic: id, Partition: task}) {
				return m.MemberID
			}
		}
	}
	return ""
}
