package inspect

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// Labels names channels as people write them ("orders/0", the topic's
// UUID when it has no name) and orders a gate's scope for display: by topic
// name, then partition. It caches what it resolved, so one Labels serves one
// set of names (a replay's); set Names before use.
type Labels struct {
	Names *clock.Names

	labels map[clock.Channel]string // resolved names only
	ids    map[clock.TopicID]string

	// The display order of the scope with the channels' names and topic
	// UUIDs, kept while scope and names stand.
	order      []clock.Channel
	orderLabel []string
	orderID    []string
	orderNames int
}

// Name returns ch as people write it.
func (t *Labels) Name(ch clock.Channel) string {
	if s, ok := t.labels[ch]; ok {
		return s
	}
	name, ok := t.Names.Name(ch.Topic)
	if !ok {
		return ch.String()
	}
	s := name + "/" + strconv.Itoa(int(ch.Partition))
	if t.labels == nil {
		t.labels = map[clock.Channel]string{}
	}
	t.labels[ch] = s
	return s
}

// TopicID returns the UUID of ch's topic as text.
func (t *Labels) TopicID(ch clock.Channel) string {
	if s, ok := t.ids[ch.Topic]; ok {
		return s
	}
	s := ch.Topic.String()
	if t.ids == nil {
		t.ids = map[clock.TopicID]string{}
	}
	t.ids[ch.Topic] = s
	return s
}

func (t *Labels) topicLabel(ch clock.Channel) string {
	if name, ok := t.Names.Name(ch.Topic); ok {
		return name
	}
	return t.TopicID(ch)
}

// Compare orders channels by topic name (UUID when unnamed), then
// partition, as Summary does.
func (t *Labels) Compare(a, b clock.Channel) int {
	if a.Topic != b.Topic {
		if r := strings.Compare(t.topicLabel(a), t.topicLabel(b)); r != 0 {
			return r
		}
		return a.Compare(b)
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// Order returns g's scope in display order with each channel's name and
// topic UUID. The scope only grows and names are only added, so all three
// are kept until either changes; callers must not modify them.
func (t *Labels) Order(g *gate.Gate) (order []clock.Channel, labels, ids []string) {
	n := t.Names.Len()
	order = g.Scope()
	if t.order != nil && len(t.order) == len(order) && t.orderNames == n {
		return t.order, t.orderLabel, t.orderID
	}
	slices.SortStableFunc(order, t.Compare)
	t.order, t.orderNames = order, n
	t.orderLabel = make([]string, len(order))
	t.orderID = make([]string, len(order))
	for i, ch := range order {
		t.orderLabel[i], t.orderID[i] = t.Name(ch), t.TopicID(ch)
	}
	return t.order, t.orderLabel, t.orderID
}

// Clock is the text form of c with names, cut after limit entries
// (negative: none cut).
func (t *Labels) Clock(c clock.Clock, limit int) string {
	if c.IsEmpty() {
		return "{}"
	}
	var b strings.Builder
	for i, e := range c.Entries() {
		if i == limit {
			b.WriteString(", … (+")
			b.WriteString(strconv.Itoa(c.Len() - limit))
			b.WriteString(")")
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t.Name(e.Channel))
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(e.Position, 10))
	}
	return b.String()
}

// Chains are held heads of a gate with their wait chains linked: each
// head's first held blocker, the root its chain ends at, the chain's
// length, and whether it runs into a wait cycle. Diagnose and the live
// view's snapshots both walk chains through it. Heads are numbered in the
// order they were added; Reset and reuse one to keep from allocating.
type Chains struct {
	held   []heldInfo
	idx    map[clock.Channel]int32
	cycles *waitCycles // found on first use after Link
}

// heldInfo is one held head of Chains.
type heldInfo struct {
	ch       clock.Channel
	head     gate.Held
	blockers []gate.Blocker
	next     int32 // heldInfo index of the first held blocker, −1 none
	root     int32 // heldInfo index of the wait chain's root
	depth    int   // channels on the wait chain, this one included
	cyclic   bool  // the chain runs into a wait cycle
	onCycle  bool  // the head is on the cycle itself
	own      Cause // its own cause once classified (Facts.ownCauseOnce)
}

// Reset empties c, keeping its space.
func (c *Chains) Reset() {
	clear(c.held) // drop the clocks and blockers
	c.held, c.cycles = c.held[:0], nil
	if c.idx == nil {
		c.idx = map[clock.Channel]int32{}
	}
	clear(c.idx)
}

// Add adds the held head of ch with its blockers (gate.Blockers); Link
// once every head is added.
func (c *Chains) Add(ch clock.Channel, head gate.Held, blockers []gate.Blocker) {
	if c.idx == nil {
		c.idx = map[clock.Channel]int32{}
	}
	c.idx[ch] = int32(len(c.held))
	c.held = append(c.held, heldInfo{ch: ch, head: head, blockers: blockers})
}

// Link links every head's wait chain.
func (c *Chains) Link() {
	linkChains(c.held, c.idx)
	c.cycles = nil
}

// Len is the number of heads.
func (c *Chains) Len() int { return len(c.held) }

// Index returns the number of ch's head.
func (c *Chains) Index(ch clock.Channel) (int, bool) {
	k, ok := c.idx[ch]
	return int(k), ok
}

// Channel, Head and Blockers return head k as added.
func (c *Chains) Channel(k int) clock.Channel   { return c.held[k].ch }
func (c *Chains) Head(k int) gate.Held          { return c.held[k].head }
func (c *Chains) Blockers(k int) []gate.Blocker { return c.held[k].blockers }

// Next is the head of k's first held blocker, −1 when none is held.
func (c *Chains) Next(k int) int { return int(c.held[k].next) }

// Root is the head k's wait chain ends at: itself when no blocker is held;
// for a chain into a wait cycle, where the walk would repeat itself.
func (c *Chains) Root(k int) int { return int(c.held[k].root) }

// Depth is the number of channels on k's wait chain, k's included.
func (c *Chains) Depth(k int) int { return c.held[k].depth }

// Cyclic says k's chain runs into a wait cycle.
func (c *Chains) Cyclic(k int) bool { return c.held[k].cyclic }

// Cause is head k's own cause (undecodable, or its most telling blocker's),
// classified with f on first use: many heads share a root, whose clock may
// have thousands of blockers.
func (c *Chains) Cause(f *Facts, g *gate.Gate, k int) Cause {
	return f.ownCauseOnce(g, c.held, c.idx, int32(k))
}

// BlockerCause classifies one blocker of a held head, as Head.Blockers
// are: a held blocker into a wait cycle is CauseCycle, one beyond its
// channel's high watermark CauseBeyondLogEnd.
func (c *Chains) BlockerCause(f *Facts, g *gate.Gate, b gate.Blocker) (Cause, *record.OpenTransaction) {
	return f.blockerCause(g, c.held, c.idx, b)
}

// linkChains sets next, root, depth and cyclic of every held head,
// following first held blockers as gate.WaitChain does, in time linear in
// the number of held heads: each chain is walked once and what lies past a
// head already done is taken from it.
func linkChains(held []heldInfo, heldIdx map[clock.Channel]int32) {
	for k := range held {
		h := &held[k]
		h.next = -1
		for _, b := range h.blockers {
			if b.Kind == gate.BlockerHeld {
				if j, ok := heldIdx[b.Channel]; ok {
					h.next = j
				}
				break
			}
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(held))
	var path []int32
	for start := range held {
		if state[start] != unseen {
			continue
		}
		path = path[:0]
		j := int32(start)
		for state[j] == unseen {
			state[j] = onPath
			path = append(path, j)
			if held[j].next < 0 {
				break
			}
			j = held[j].next
		}
		// last is the head the rest of the path hangs on, already done.
		var last int32
		switch {
		case state[j] == done:
			last = j
		case held[j].next < 0:
			// The walk ended at a head with no held blocker: the root.
			held[j].root, held[j].depth = j, 1
			state[j] = done
			path = path[:len(path)-1]
			last = j
		default:
			// j was met again: path[at:] is a cycle. The chain from a
			// member stops before repeating itself, so its root is its
			// predecessor in the cycle and it names every member once.
			at := slices.Index(path, j)
			cyc := path[at:]
			for m, c := range cyc {
				held[c].root = cyc[(m+len(cyc)-1)%len(cyc)]
				held[c].depth = len(cyc)
				held[c].cyclic = true
				held[c].onCycle = true
				state[c] = done
			}
			path = path[:at]
			last = j
		}
		// A chain from a head before last runs into last's chain and ends
		// where it does.
		for m := len(path) - 1; m >= 0; m-- {
			c := path[m]
			held[c].root = held[last].root
			held[c].cyclic = held[last].cyclic
			held[c].depth = held[held[c].next].depth + 1
			state[c] = done
		}
	}
}
