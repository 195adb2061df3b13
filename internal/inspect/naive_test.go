package inspect

import (
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// naiveDiagnose is Diagnose as it was before its walks were made linear:
// every head's chain and cycle followed afresh, each chain in full. It is
// the reference the linear Diagnose is held to (TestDiagnoseMatchesNaive);
// its cost grows with the square of a wait chain's length.
func naiveDiagnose(in Input) *Report {
	g := in.Gate
	names := in.Names
	if names == nil {
		names = &clock.Names{}
	}
	t := &Labels{Names: names}
	warn := in.RetentionWarn
	rep := &Report{Now: in.Now, RecordsHeld: g.Stats().Held, Cycles: [][]string{}}
	for _, cyc := range g.Cycles() {
		// Written from the member first in name order, as the heads'
		// cycles are, whatever the topics' UUIDs.
		names := t.names2(cyc)
		at := slices.Index(names, slices.Min(names))
		rep.Cycles = append(rep.Cycles, append(names[at:], names[:at]...))
	}

	order, _, _ := t.Order(g)
	var held []heldInfo
	heldIdx := map[clock.Channel]int32{}
	for _, ch := range order {
		head, ok := g.Head(ch)
		if !ok {
			continue
		}
		heldIdx[ch] = int32(len(held))
		held = append(held, heldInfo{ch: ch, head: head, blockers: g.Blockers(ch)})
	}
	naiveLinkChains(held, heldIdx)
	own := make([]Cause, len(held))
	for k := range held {
		own[k] = in.Facts.ownCause(g, held, heldIdx, k)
	}

	// rootAt maps a root to its index in rep.Roots: a heldInfo index, or
	// for a chain into a wait cycle the cycle, which has no one root.
	rootAt := map[string]int{}
	for k := range held {
		h := &held[k]
		hd := Head{
			At:           h.ch,
			Channel:      t.Name(h.ch),
			TopicID:      t.TopicID(h.ch),
			Offset:       h.head.Offset,
			Queued:       g.Depth(h.ch),
			Clock:        t.Clock(h.head.Clock, -1),
			ClockEntries: h.head.Clock.Len(),
			Undecodable:  h.head.Undecodable,
			Cause:        own[k],
			KeySize:      -1,
			ValueSize:    -1,
		}
		if in.Sizes != nil {
			if k, v, hs, ok := in.Sizes(h.ch, h.head.Offset); ok {
				hd.KeySize, hd.ValueSize, hd.Headers = k, v, hs
			}
		}
		if in.Timestamp != nil {
			if ts, ok := in.Timestamp(h.ch, h.head.Offset); ok {
				hd.Timestamp = ts
			}
		}
		since, known := hd.Timestamp, !hd.Timestamp.IsZero()
		if in.HeldSince != nil {
			since, known = in.HeldSince(h.ch, h.head.Offset)
		}
		if known && !in.Now.IsZero() {
			hd.Age = Age{D: in.Now.Sub(since), Known: true}
		}
		hd.Retention = in.Facts.headroom(h.ch, hd.Timestamp, in.Now, warn)

		for _, b := range h.blockers {
			bd := Blocker{Channel: t.Name(b.Channel), Required: b.Required, Settled: b.Settled}
			bd.Cause, bd.Producer = in.Facts.blockerCause(g, held, heldIdx, b)
			if in.Facts.Log != nil {
				if lf, ok := in.Facts.Log(b.Channel); ok {
					bd.Log = lf
				}
			}
			if j, ok := heldIdx[b.Channel]; ok && b.Kind == gate.BlockerHeld {
				bd.Root = t.Name(held[held[j].root].ch)
			}
			hd.Blockers = append(hd.Blockers, bd)
		}
		for j, n := int32(k), 0; n < h.depth; j, n = held[j].next, n+1 {
			hd.Chain = append(hd.Chain, t.Name(held[j].ch))
		}
		root := &held[h.root]
		hd.Root, hd.RootOffset, hd.RootCause = t.Name(root.ch), root.head.Offset, own[h.root]
		if h.cyclic {
			hd.RootCause = CauseCycle
			hd.Cycle = naiveCycleOf(t, held, h)
		}
		rep.Heads = append(rep.Heads, hd)
	}
	// Advice is given once per root, from the root's own first blocker
	// of its cause.
	for k := range rep.Heads {
		hd := &rep.Heads[k]
		r := held[k].root
		key := strconv.Itoa(int(r))
		if held[k].cyclic {
			key = "cycle " + strings.Join(hd.Cycle, " ")
		}
		at, ok := rootAt[key]
		if !ok {
			root := &rep.Heads[r]
			var first *Blocker
			for i := range root.Blockers {
				if root.Blockers[i].Cause == root.Cause {
					first = &root.Blockers[i]
					break
				}
			}
			cause := root.Cause
			var cyc []string
			if held[k].cyclic {
				cause, cyc, first = CauseCycle, hd.Cycle, nil
			}
			at = len(rep.Roots)
			rootAt[key] = at
			rc, ro := root.Channel, root.Offset
			if cyc != nil {
				rc, ro = cyc[0], held[naiveCycleStart(held, &held[k])].head.Offset
			}
			rep.Roots = append(rep.Roots, Root{Channel: rc, Offset: ro, Cause: cause, Cycle: cyc,
				NextStep: NextStep(cause, rc+"@"+strconv.FormatInt(ro, 10), first, cyc)})
		}
		hd.NextStep = rep.Roots[at].NextStep
		rep.Roots[at].Heads = append(rep.Roots[at].Heads, hd.Channel+"@"+strconv.FormatInt(hd.Offset, 10))
	}
	// The root first in its own list.
	for i := range rep.Roots {
		r := &rep.Roots[i]
		self := r.Channel + "@" + strconv.FormatInt(r.Offset, 10)
		if j := slices.Index(r.Heads, self); j > 0 {
			r.Heads = append([]string{self}, slices.Delete(r.Heads, j, j+1)...)
		}
	}
	return rep
}

// naiveLinkChains sets next, root, depth, cyclic and onCycle of every held
// head by walking each head's chain on its own until it ends or repeats.
func naiveLinkChains(held []heldInfo, heldIdx map[clock.Channel]int32) {
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
	for k := range held {
		path := []int32{int32(k)}
		seen := map[int32]int{int32(k): 0}
		for j := held[k].next; j >= 0; j = held[j].next {
			if at, ok := seen[j]; ok {
				held[k].cyclic = true
				held[k].onCycle = at == 0
				break
			}
			seen[j] = len(path)
			path = append(path, j)
		}
		held[k].root = path[len(path)-1]
		held[k].depth = len(path)
	}
}

// naiveCycleStart is the member first in held's order of the wait cycle
// the chain from h runs into, found by walking the cycle.
func naiveCycleStart(held []heldInfo, h *heldInfo) int32 {
	start := held[h.root].next
	best := start
	for j, n := held[start].next, 0; j != start && j >= 0 && n <= len(held); j, n = held[j].next, n+1 {
		best = min(best, j)
	}
	return best
}

// naiveCycleOf is the wait cycle the chain from h runs into, from its
// member first in held's order.
func naiveCycleOf(t *Labels, held []heldInfo, h *heldInfo) []string {
	var out []string
	start := naiveCycleStart(held, h)
	for j, n := start, 0; j >= 0 && n <= len(held); j, n = held[j].next, n+1 {
		if n > 0 && j == start {
			break
		}
		out = append(out, t.Name(held[j].ch))
	}
	return out
}
