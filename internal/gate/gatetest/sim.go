// Package gatetest is ground truth for testing the delivery gate: a
// simulator of random pipelines of Parsley-like nodes that records the true
// causal past of every record it produces, an oracle that checks a delivery
// sequence against those pasts without reading a single clock, and a driver
// that replays a simulated world through a gate and checks it.
//
// It is for tests only (of gate, replay, watch and demo); no other code may
// import it.
//
// The simulated nodes are honest: each runs a real gate over its scope and
// stamps what it emits with the gate's Stamp — the carried clocks folded at
// receipt, joined with the delivered prefix. True causality is tracked
// separately, as sets of record IDs: a record's ancestors are everything its
// node had delivered when it emitted it, their ancestors, and the node's
// earlier records on the same channel. A node's earlier records on its other
// output channels are not ancestors: causality flows through deliveries
// (the seed's "chain of deliveries and emissions"), and a §3 stamp claims
// nothing of the node's own outputs, so no gate could order them.
package gatetest

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// Config shapes a simulated world. The zero value (with a Seed) is a
// reasonable random world.
type Config struct {
	Seed uint64
	// Steps is the number of random actions (default 300).
	Steps int
	// Corrupt makes some records carry an undecodable header.
	Corrupt bool
	// GateOptions are given to every node's gate (after the simulator's
	// own choice of undecodable mode).
	GateOptions []gate.Option
	// StampSettledOnly makes the nodes dishonest, for tests that show a
	// wrong stamp is caught: they stamp only their delivered prefix,
	// skipping the carried clocks folded at receipt.
	StampSettledOnly bool
	// SeededGrowthOnly makes scope growth always seed from the node's
	// carried knowledge (AddChannel), never at an explicit start. A node
	// that starts a channel at an explicit offset claims the prefix below
	// it without ever having folded those records' clocks: its stamps are
	// per SPEC §3, but the causes they state transitively are more than
	// they claim directly, which the stamp audit reports as holes.
	SeededGrowthOnly bool
}

// Record is one business record in a log.
type Record struct {
	ID      int // index in World.Records
	Channel clock.Channel
	Offset  int64
	Clock   clock.Clock // as stamped; empty when Corrupt
	// Corrupt: the header is undecodable (DecodeErr says why).
	Corrupt bool
	Node    int // the producing node
	// Ancestors is the true causal past, by record ID.
	Ancestors Set
}

// DecodeErr is the error a reader gets decoding the record's header: nil
// unless Corrupt.
func (r *Record) DecodeErr() error {
	if !r.Corrupt {
		return nil
	}
	return &clock.DecodeError{Code: clock.CodeTruncated, Detail: "corrupted by the simulator"}
}

// Log is one channel: its records in offset order and its end. Offsets
// between records, and from the last record to End, held transaction
// markers or aborted records: no business record.
type Log struct {
	Channel clock.Channel
	Records []*Record
	End     int64 // one past the last offset used
}

// Node is a simulated node as it ended up.
type Node struct {
	ID      int
	Scope   []clock.Channel // at the end, including channels added mid-run
	Outputs []clock.Channel
	Failed  error // the gate's fail-closed error, if any
}

// World is the outcome of a simulation.
type World struct {
	Names    *clock.Names
	Channels []clock.Channel // sorted
	Logs     map[clock.Channel]*Log
	Records  []*Record
	Nodes    []Node
	// NodeViolations are the oracle's findings on the nodes' own delivery
	// sequences during the simulation (the first few of each kind per
	// node), NodeCounts all of them.
	NodeViolations []Violation
	NodeCounts     Counts
}

// Record returns the record at offset on ch, or nil.
func (w *World) Record(ch clock.Channel, offset int64) *Record {
	l := w.Logs[ch]
	if l == nil {
		return nil
	}
	k, ok := slices.BinarySearchFunc(l.Records, offset, func(r *Record, o int64) int {
		return cmp.Compare(r.Offset, o)
	})
	if !ok {
		return nil
	}
	return l.Records[k]
}

type node struct {
	id      int
	source  bool
	scope   []clock.Channel
	outputs []clock.Channel
	g       *gate.Gate
	cursor  map[clock.Channel]int64 // next offset to read
	past    Set
	ownOn   map[clock.Channel]Set // own emissions per output channel
	check   *Checker
	evs     []gate.Event
	mode    gate.UndecodableMode
	// candidates for scope growth: upstream channels not in scope
	later []clock.Channel
}

type sim struct {
	cfg   Config
	rng   *rand.Rand
	w     *World
	nodes []*node
}

// Simulate builds a random acyclic pipeline and runs it: sources emit,
// nodes poll their inputs in random order, deliver through their gates and
// emit stamped records, logs get gaps for transaction markers and aborted
// records, and some nodes grow their scope mid-run. At the end every node
// reads its inputs to the end.
func Simulate(cfg Config) *World {
	if cfg.Steps == 0 {
		cfg.Steps = 300
	}
	s := &sim{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		w:   &World{Names: new(clock.Names), Logs: map[clock.Channel]*Log{}},
	}
	s.topology()
	for range cfg.Steps {
		s.step()
	}
	s.finish()
	for _, n := range s.nodes {
		s.w.Nodes = append(s.w.Nodes, Node{ID: n.id, Scope: n.g.Scope(), Outputs: n.outputs, Failed: n.g.Failed()})
		s.w.NodeViolations = append(s.w.NodeViolations, n.check.Violations()...)
		s.w.NodeCounts.Add(n.check.Counts())
	}
	return s.w
}

// topicID makes a deterministic, non-zero UUID for a topic.
func topicID(k int) clock.TopicID {
	var id clock.TopicID
	id[0] = 0x10
	id[14] = byte(k >> 8)
	id[15] = byte(k)
	return id
}

func (s *sim) newChannels(producer int) []clock.Channel {
	name := fmt.Sprintf("t%d", producer)
	id := topicID(producer + 1)
	if err := s.w.Names.Add(name, id); err != nil {
		panic(err)
	}
	parts := 1 + s.rng.IntN(2)
	var out []clock.Channel
	for p := range parts {
		ch := clock.Channel{Topic: id, Partition: int32(p)}
		s.w.Logs[ch] = &Log{Channel: ch}
		s.w.Channels = append(s.w.Channels, ch)
		out = append(out, ch)
	}
	return out
}

// topology makes 3 to 7 nodes in topological order. The first one or two
// are sources; every later node consumes a random subset of the channels of
// earlier nodes — often skipping the intermediate ones, which exercises the
// ignore branch — and may also write into an earlier node's channel when
// that keeps the graph acyclic.
func (s *sim) topology() {
	nNodes := 3 + s.rng.IntN(5)
	nSources := 1 + s.rng.IntN(2)
	consumers := map[clock.Channel][]int{}
	for k := range nNodes {
		n := &node{id: k, source: k < nSources, cursor: map[clock.Channel]int64{}, ownOn: map[clock.Channel]Set{}}
		n.outputs = s.newChannels(k)
		var upstream []clock.Channel
		for _, m := range s.nodes {
			for _, c := range m.outputs {
				if !slices.Contains(upstream, c) { // shared channels appear twice
					upstream = append(upstream, c)
				}
			}
		}
		if !n.source {
			perm := s.rng.Perm(len(upstream))
			want := 1 + s.rng.IntN(min(4, len(upstream)))
			for _, p := range perm[:want] {
				n.scope = append(n.scope, upstream[p])
				consumers[upstream[p]] = append(consumers[upstream[p]], k)
			}
			for _, p := range perm[want:] {
				if s.rng.IntN(4) == 0 {
					n.later = append(n.later, upstream[p])
					consumers[upstream[p]] = append(consumers[upstream[p]], k)
				}
			}
			// Share an earlier channel as a second writer when no node
			// consumes it yet: its consumers will all come later.
			if s.rng.IntN(5) == 0 {
				if c := upstream[s.rng.IntN(len(upstream))]; len(consumers[c]) == 0 {
					n.outputs = append(n.outputs, c)
				}
			}
		}
		var opts []gate.Option
		if s.cfg.Corrupt && s.rng.IntN(2) == 0 {
			n.mode = gate.HoldUndecodable
			opts = append(opts, gate.WithUndecodable(n.mode))
		}
		g, err := gate.New(n.scope, append(opts, s.cfg.GateOptions...)...)
		if err != nil {
			panic(err)
		}
		n.g = g
		n.check = s.w.NewChecker()
		for _, ch := range n.scope {
			n.check.Join(ch, 0)
		}
		s.nodes = append(s.nodes, n)
	}
	slices.SortFunc(s.w.Channels, clock.Channel.Compare)
}

func (s *sim) step() {
	n := s.nodes[s.rng.IntN(len(s.nodes))]
	if n.g.Failed() != nil {
		return
	}
	switch r := s.rng.IntN(100); {
	case n.source || r < 8:
		// A spontaneous emission (a source, or a punctuation).
		s.emit(n)
	case r < 10 && len(n.later) > 0:
		s.grow(n)
	default:
		s.poll(n, n.scope[s.rng.IntN(len(n.scope))], true)
	}
}

// grow adds a channel to n's scope, seeded from n's carried knowledge or at
// an explicit start, and rereads it from there or from the log start.
func (s *sim) grow(n *node) {
	ch := n.later[0]
	n.later = n.later[1:]
	var err error
	if s.rng.IntN(3) == 0 && !s.cfg.SeededGrowthOnly {
		start := s.rng.Int64N(s.w.Logs[ch].End + 1)
		err = n.g.AddChannelAt(ch, start)
		n.cursor[ch] = start
	} else {
		err = n.g.AddChannel(ch)
		if s.rng.IntN(2) == 0 {
			n.cursor[ch] = n.g.Fed(ch) + 1 // resume above the seed
		} else {
			n.cursor[ch] = 0 // reread the prefix: the replay guard drops it
		}
	}
	if err != nil {
		panic(err)
	}
	n.scope = append(n.scope, ch)
	n.check.Join(ch, n.g.Fed(ch)+1)
	s.collect(n, true)
}

// poll reads one item of ch for n: its next record, or when none is left
// the log end as a position advance.
func (s *sim) poll(n *node, ch clock.Channel, emit bool) {
	l := s.w.Logs[ch]
	at := n.cursor[ch]
	k, _ := slices.BinarySearchFunc(l.Records, at, func(r *Record, o int64) int {
		return cmp.Compare(r.Offset, o)
	})
	var err error
	switch {
	case k < len(l.Records):
		r := l.Records[k]
		if r.Offset > at && s.rng.IntN(3) == 0 {
			// The consumer saw the position move past markers first.
			if err = n.g.Advance(ch, r.Offset); err != nil {
				break
			}
			s.collect(n, emit)
		}
		err = n.g.Receive(ch, r.Offset, r.Clock, r.DecodeErr())
		n.cursor[ch] = r.Offset + 1
	case l.End > at:
		err = n.g.Advance(ch, l.End)
		n.cursor[ch] = l.End
	default:
		return
	}
	var fc *gate.FailClosedError
	if errors.As(err, &fc) {
		if r := s.w.Record(fc.Channel, fc.Offset); r == nil || !r.Corrupt {
			n.check.Note(VFailClosed, "node %d: %v", n.id, err)
		}
	} else if err != nil {
		panic(err)
	}
	s.collect(n, emit)
}

// collect drains n's gate, checks the deliveries and lets n react to each
// by emitting, at random, zero to two records.
func (s *sim) collect(n *node, emit bool) {
	n.evs = n.g.Drain(n.evs[:0])
	for _, ev := range n.evs {
		if ev.Kind == gate.EventDrop {
			n.check.Drop(ev.Channel, ev.Offset)
			continue
		}
		n.check.Deliver(ev.Channel, ev.Offset)
		if r := s.w.Record(ev.Channel, ev.Offset); r != nil {
			n.past.Add(r.ID)
			n.past.Union(r.Ancestors)
		}
		if !emit {
			continue
		}
		switch x := s.rng.IntN(10); {
		case x < 4:
		case x < 9:
			s.emit(n)
		default:
			s.emit(n)
			s.emit(n)
		}
	}
}

// emit appends a record stamped by n to one of its outputs, with random
// gaps before and after it for aborted records and transaction markers.
func (s *sim) emit(n *node) {
	ch := n.outputs[s.rng.IntN(len(n.outputs))]
	l := s.w.Logs[ch]
	if s.rng.IntN(6) == 0 {
		l.End += 1 + s.rng.Int64N(3) // aborted records
	}
	r := &Record{ID: len(s.w.Records), Channel: ch, Offset: l.End, Node: n.id}
	l.End++
	if s.rng.IntN(3) == 0 {
		l.End++ // a commit marker
	}
	if s.cfg.StampSettledOnly {
		var es []clock.Entry
		for _, c := range n.g.Scope() {
			if p := n.g.Settled(c); p >= 0 {
				es = append(es, clock.Entry{Channel: c, Position: p})
			}
		}
		r.Clock = clock.MustNew(es...)
	} else {
		r.Clock = n.g.Stamp()
	}
	if s.cfg.Corrupt && s.rng.IntN(80) == 0 {
		r.Corrupt, r.Clock = true, clock.Clock{}
	}
	own := n.ownOn[ch]
	r.Ancestors = n.past.Clone()
	r.Ancestors.Union(own)
	own.Add(r.ID)
	n.ownOn[ch] = own
	l.Records = append(l.Records, r)
	s.w.Records = append(s.w.Records, r)
}

// finish stops all emission and lets every node read its inputs to the end,
// then checks that each node that did not fail delivered everything in
// range (unless it holds an undecodable record).
func (s *sim) finish() {
	for _, n := range s.nodes {
		// Logs no longer change: read each input to its end, in a random
		// interleaving.
		for {
			var open []clock.Channel
			for _, ch := range n.scope {
				if n.cursor[ch] < s.w.Logs[ch].End {
					open = append(open, ch)
				}
			}
			if len(open) == 0 || n.g.Failed() != nil {
				break
			}
			s.poll(n, open[s.rng.IntN(len(open))], false)
		}
		if n.g.Failed() == nil && !holdsUndecodable(n.g) {
			n.check.Complete()
		}
	}
}

func holdsUndecodable(g *gate.Gate) bool {
	for _, ch := range g.Holding() {
		for _, h := range g.Queue(ch) {
			if h.Undecodable != "" {
				return true
			}
		}
	}
	return false
}
