package gate

import (
	"fmt"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
)

// Held is a record in a hold queue.
type Held struct {
	Channel clock.Channel
	Offset  int64
	// Clock is the full clock as received, before normalising and
	// restricting; empty for an undecodable record.
	Clock clock.Clock
	// Undecodable is the reason code of a record held by HoldUndecodable;
	// "" otherwise.
	Undecodable string
}

// BlockerKind classifies why a blocker's requirement is not met.
type BlockerKind uint8

const (
	// BlockerHeld: the requirement sits behind another held head — the
	// blocking channel's queue is not empty and the required position was
	// received (at or below its fed position), so draining that queue
	// meets it; follow it (a chain).
	BlockerHeld BlockerKind = iota + 1
	// BlockerNotReceived: the needed record has not arrived (lagging, not
	// yet produced, or beyond the end of the replayed range): the
	// blocking channel's queue is empty, or the requirement lies past
	// everything received on it, so no draining of that queue meets it
	// and its held head is not this head's root.
	BlockerNotReceived
)

// String returns "held" or "not-received".
func (k BlockerKind) String() string {
	switch k {
	case BlockerHeld:
		return "held"
	case BlockerNotReceived:
		return "not-received"
	}
	return fmt.Sprintf("BlockerKind(%d)", uint8(k))
}

// Blocker is one unmet entry of a held head's normalised, restricted clock.
type Blocker struct {
	Channel  clock.Channel
	Required int64 // the entry's position
	Settled  int64 // settled(Channel) now, below Required
	Kind     BlockerKind
}

// Scope returns the channels in scope, sorted.
func (g *Gate) Scope() []clock.Channel {
	out := make([]clock.Channel, len(g.order))
	for k, i := range g.order {
		out[k] = g.chans[i].ch
	}
	return out
}

// InScope reports whether ch is in scope.
func (g *Gate) InScope(ch clock.Channel) bool {
	_, ok := g.idx[ch]
	return ok
}

func (g *Gate) state(ch clock.Channel) *chanState {
	if i, ok := g.idx[ch]; ok {
		return &g.chans[i]
	}
	return nil
}

// Settled returns settled(ch) of SPEC §3, or −1 when nothing is known of ch
// or it is not in scope.
func (g *Gate) Settled(ch clock.Channel) int64 {
	if i, ok := g.idx[ch]; ok {
		return g.settled[i]
	}
	return -1
}

// Fed returns the highest position received on ch (or advanced past: the
// position minus one), or −1 when unknown or not in scope.
func (g *Gate) Fed(ch clock.Channel) int64 {
	if s := g.state(ch); s != nil {
		return s.fed
	}
	return -1
}

// Reached returns the highest offset the consumer's position passed on
// ch: received, or advanced past (the position minus one) whether or not
// the advance settled anything (WithPositionAdvance). It is Fed unless
// advances are ignored; −1 when unknown or not in scope. A blocker whose
// requirement is at or below Reached but above Settled names an offset
// that carried no record: a transaction marker or an aborted record.
func (g *Gate) Reached(ch clock.Channel) int64 {
	if s := g.state(ch); s != nil {
		return s.reached
	}
	return -1
}

// Depth returns the number of records held on ch.
func (g *Gate) Depth(ch clock.Channel) int {
	if s := g.state(ch); s != nil {
		return len(s.q) - s.head
	}
	return 0
}

// Head returns the head of ch's hold queue, if any.
func (g *Gate) Head(ch clock.Channel) (Held, bool) {
	s := g.state(ch)
	if s == nil || s.head == len(s.q) {
		return Held{}, false
	}
	return g.held(s, &s.q[s.head]), true
}

// Queue returns the records held on ch, head first.
func (g *Gate) Queue(ch clock.Channel) []Held {
	s := g.state(ch)
	if s == nil || s.head == len(s.q) {
		return nil
	}
	out := make([]Held, 0, len(s.q)-s.head)
	for k := s.head; k < len(s.q); k++ {
		out = append(out, g.held(s, &s.q[k]))
	}
	return out
}

func (g *Gate) held(s *chanState, r *record) Held {
	h := Held{Channel: s.ch, Offset: r.off, Clock: r.clk}
	if r.undec != 0 {
		h.Undecodable = g.codes[r.undec-1]
	}
	return h
}

// Holding returns the channels whose hold queue is not empty, sorted.
func (g *Gate) Holding() []clock.Channel {
	var out []clock.Channel
	for _, i := range g.order {
		if s := &g.chans[i]; s.head < len(s.q) {
			out = append(out, s.ch)
		}
	}
	return out
}

// Carried returns A[ch], the join of the full clocks received on ch; empty
// when ch is not in scope.
func (g *Gate) Carried(ch clock.Channel) clock.Clock {
	if s := g.state(ch); s != nil {
		return mustClock(appendCarried(nil, s.carried))
	}
	return clock.Clock{}
}

// Stamp returns what this node would claim on a record it emits now (SPEC
// §3): the join over the scope of the carried clocks, with (c, settled(c))
// for every c in scope whose delivered prefix reaches a position ≥ 0.
func (g *Gate) Stamp() clock.Clock {
	var es []clock.Entry
	for k := range g.chans {
		s := &g.chans[k]
		es = appendCarried(es, s.carried)
		if p := g.settled[k]; p >= 0 {
			es = append(es, clock.Entry{Channel: s.ch, Position: p})
		}
	}
	return mustClock(es)
}

func appendCarried(es []clock.Entry, a []carriedEntry) []clock.Entry {
	for _, e := range a {
		es = append(es, clock.Entry{Channel: e.ch, Position: e.pos})
	}
	return es
}

// mustClock builds a clock from entries that all came out of valid clocks or
// valid channels, so New cannot fail.
func mustClock(es []clock.Entry) clock.Clock {
	c, err := clock.New(es...)
	if err != nil {
		panic("gate: invalid entry in state: " + err.Error())
	}
	return c
}

// Stats returns the counters.
func (g *Gate) Stats() Stats { return g.stats }

// Failed returns the *FailClosedError if the gate failed closed, else nil.
func (g *Gate) Failed() error {
	if g.failed == nil {
		return nil // a typed nil pointer would not compare equal to nil
	}
	return g.failed
}

// Blockers returns the unmet entries of the head of ch, in channel order,
// each classified. It is nil when ch has no head, and empty (not nil) for a
// head held because its header is undecodable, which waits on nothing.
func (g *Gate) Blockers(ch clock.Channel) []Blocker {
	s := g.state(ch)
	if s == nil || s.head == len(s.q) {
		return nil
	}
	return g.blockers(s, &s.q[s.head], []Blocker{})
}

func (g *Gate) blockers(s *chanState, r *record, dst []Blocker) []Blocker {
	if r.undec != 0 {
		return dst
	}
	for _, e := range r.clk.Entries() {
		if e.Channel == s.ch {
			continue
		}
		j, ok := g.idx[e.Channel]
		if !ok {
			continue
		}
		b := &g.chans[j]
		if settled := g.settled[j]; settled < e.Position {
			kind := BlockerNotReceived
			if b.head < len(b.q) && e.Position <= b.fed {
				kind = BlockerHeld
			}
			dst = append(dst, Blocker{Channel: e.Channel, Required: e.Position, Settled: settled, Kind: kind})
		}
	}
	return dst
}

// firstHeld returns the channel index of the first held blocker of i's head
// in channel order, or −1.
func (g *Gate) firstHeld(i int32) int32 {
	for _, b := range g.headBlockers(i) {
		if b.Kind == BlockerHeld {
			return g.idx[b.Channel]
		}
	}
	return -1
}

func (g *Gate) headBlockers(i int32) []Blocker {
	s := &g.chans[i]
	if s.head == len(s.q) {
		return nil
	}
	return g.blockers(s, &s.q[s.head], nil)
}

// WaitChain follows the head of ch to what holds it: from ch, repeatedly to
// the channel of the head's first held blocker (in channel order), until a
// head with no held blocker — the root, the last element — or until the next
// step would repeat a channel (a cycle; see Cycles). It is nil when ch has
// no head.
func (g *Gate) WaitChain(ch clock.Channel) []clock.Channel {
	i, ok := g.idx[ch]
	if !ok || g.chans[i].head == len(g.chans[i].q) {
		return nil
	}
	chain := []clock.Channel{ch}
	seen := map[int32]bool{i: true}
	for {
		next := g.firstHeld(i)
		if next < 0 || seen[next] {
			return chain
		}
		seen[next] = true
		chain = append(chain, g.chans[next].ch)
		i = next
	}
}

// Cycles returns the cycles of the wait graph: its nodes are the channels
// with a held head, with an edge from c to d when d is a held blocker of
// c's head. With honest stamps there are none, so a cycle proves a stamp out
// of contract. For each strongly connected component with a cycle it reports
// one: the shortest cycle through the component's smallest channel (found
// breadth first, successors in channel order), starting at that channel.
// The list is sorted.
func (g *Gate) Cycles() [][]clock.Channel {
	// Adjacency over channel indexes, successors in channel order.
	adj := make(map[int32][]int32)
	var nodes []int32
	for _, i := range g.order {
		if g.chans[i].head == len(g.chans[i].q) {
			continue
		}
		nodes = append(nodes, i)
		for _, b := range g.headBlockers(i) {
			if b.Kind == BlockerHeld {
				adj[i] = append(adj[i], g.idx[b.Channel])
			}
		}
	}
	var out [][]clock.Channel
	for _, comp := range scc(nodes, adj) {
		if len(comp) < 2 {
			continue // no self edges: own-channel entries are normalised away
		}
		out = append(out, g.shortestCycle(comp, adj))
	}
	slices.SortFunc(out, func(a, b []clock.Channel) int {
		return slices.CompareFunc(a, b, clock.Channel.Compare)
	})
	return out
}

// shortestCycle finds, by breadth-first search inside comp, the shortest
// path from its smallest channel back to itself.
func (g *Gate) shortestCycle(comp []int32, adj map[int32][]int32) []clock.Channel {
	in := make(map[int32]bool, len(comp))
	root := comp[0]
	for _, i := range comp {
		in[i] = true
		if g.chans[i].ch.Compare(g.chans[root].ch) < 0 {
			root = i
		}
	}
	prev := map[int32]int32{root: -1}
	queue := []int32{root}
	var last int32 = -1
	for len(queue) > 0 && last < 0 {
		i := queue[0]
		queue = queue[1:]
		for _, j := range adj[i] {
			if !in[j] {
				continue
			}
			if j == root {
				last = i
				break
			}
			if _, ok := prev[j]; !ok {
				prev[j] = i
				queue = append(queue, j)
			}
		}
	}
	var rev []clock.Channel
	for i := last; i >= 0; i = prev[i] {
		rev = append(rev, g.chans[i].ch)
	}
	slices.Reverse(rev)
	return rev
}

// scc returns the strongly connected components of the graph (Tarjan's
// algorithm, iterative so that long chains cannot exhaust the stack).
func scc(nodes []int32, adj map[int32][]int32) [][]int32 {
	index := make(map[int32]int, len(nodes))
	low := make(map[int32]int, len(nodes))
	onStack := make(map[int32]bool)
	var stack []int32
	var comps [][]int32
	next := 0
	type frame struct {
		v int32
		e int // next edge to look at
	}
	for _, root := range nodes {
		if _, ok := index[root]; ok {
			continue
		}
		call := []frame{{v: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.e < len(adj[f.v]) {
				w := adj[f.v][f.e]
				f.e++
				if _, ok := index[w]; !ok {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				var comp []int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				comps = append(comps, comp)
			}
		}
	}
	return comps
}
