package audit

import (
	"errors"
	"fmt"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
)

// The walk visits every record after all the records its clock names and
// its predecessor on its own channel: a causal order, found depth first.
// Visiting a record joins its closures from theirs.
//
// In rank form, with D(r) a record's own claims plus (its channel, its
// rank) for its predecessors:
//
//	C(r) = D(r) ⊔ ⨆ cover(x) over x named by D(r), cover(x) = C(x) ⊔ {x}
//	W(r) = D(r)|S ⊔ ⨆ wcover(x) over x named by D(r)|S, the same in scope S
//
// C is every cause the clocks state, through any channel; W is what the
// gate restricted to S makes r wait for. r has a hole on s ∈ S when
// C(r)[s] > W(r)[s]: those records of s are causes the gate ignores.
//
// A scope is closed when no record of its channels claims a record outside
// it: then every cause of its records is reached through its channels,
// W(r) = C(r)|S, and it can have no hole (a scope of every channel is the
// obvious case). C is computed only on the channels of scopes that are not
// closed, since holes are sought there alone; with none, not at all. A
// closure holds an entry for every channel among a record's causes, so on a
// chain of channels carrying C everywhere cost channels² (issue 36).

// scopeState is one audited scope.
type scopeState struct {
	name string
	in   []bool // by channel index
	// closed: no record of the scope claims a record outside it, so the
	// gate waits for every cause of its records and no hole can be seen.
	closed bool
	excess []sparse // W(r) above D(r)|S, by channel index
}

// holeRef is a hole found by the walk; its evidence is built at the end.
type holeRef struct {
	scope    uint32
	ch, rnk  uint32 // the record m
	on       uint32 // the channel s of the missed ancestors
	producer uint32 // the channel of the stamp that dropped the claim
}

// frame is a channel of the walk's stack: advance ch until target records
// are visited, resuming its head's claims at cur.
type frame struct{ ch, target, cur uint32 }

func (a *Auditor) setScopes(scopes []Scope) {
	n := len(a.chans)
	a.cc, a.d, a.wc = newJoiner(n), newJoiner(n), newJoiner(n)
	a.rel = nil
	for _, sc := range scopes {
		s := &scopeState{name: sc.Name, in: make([]bool, n)}
		held := 0
		for _, ch := range sc.Channels {
			if i, ok := a.idx[ch]; ok && !s.in[i] {
				s.in[i] = true
				held++
			}
		}
		s.closed = held == n || !a.dense && a.closedScope(s.in)
		if !s.closed {
			s.excess = make([]sparse, n)
			if a.rel == nil {
				a.rel = make([]bool, n)
			}
			for i, in := range s.in {
				a.rel[i] = a.rel[i] || in || a.dense
			}
		}
		a.scopes = append(a.scopes, s)
	}
}

// closedScope reports whether no record on the channels in claims a
// record of a channel outside them. A claim that covers no record of the
// input (count 0) leads nowhere.
func (a *Auditor) closedScope(in []bool) bool {
	for i, c := range a.chans {
		if !in[i] {
			continue
		}
		n := c.claims.len()
		if a.brokenClosed && len(c.ent) > 1 {
			n = int(c.ent[len(c.ent)-2]) // a deliberate bug: the last record's claims unseen
		}
		for k := range n {
			if cl := c.claims.at(k); cl.count() > 0 && !in[cl.channel()] {
				return false
			}
		}
	}
	return true
}

// walk visits every record it can, channel by channel.
func (a *Auditor) walk() {
	for i := range a.chans {
		if a.full {
			return
		}
		a.advance(uint32(i), uint32(len(a.chans[i].offs)))
	}
}

// advance visits ch's records up to target, and first, depth first, what
// each of them claims. A claim on a channel already on the stack closes a
// wait cycle: its channels, and every channel waiting on them, are stuck.
func (a *Auditor) advance(ch, target uint32) {
	stack := append(a.stack[:0], frame{ch, target, 0})
	a.chans[ch].onStack = true
	for len(stack) > 0 && !a.full {
		f := &stack[len(stack)-1]
		c := a.chans[f.ch]
		if c.stuck || c.done >= f.target {
			c.onStack = false
			stack = stack[:len(stack)-1]
			continue
		}
		k := c.done
		lo, hi := c.ent[k], c.ent[k+1]
		blocked := false
		for i := lo + f.cur; i < hi; i++ {
			cl := c.claims.at(int(i))
			t := a.chans[cl.channel()]
			if t.done >= cl.count() {
				continue
			}
			f.cur = i - lo
			blocked = true
			switch {
			case t.stuck:
				c.stuck = true
			case t.onStack:
				a.cycle(stack, cl.channel())
			default:
				stack = append(stack, frame{cl.channel(), cl.count(), 0})
				t.onStack = true
			}
			break
		}
		if blocked {
			continue
		}
		a.visit(f.ch, k)
		c.done++
		f.cur = 0
	}
	for _, f := range stack {
		a.chans[f.ch].onStack = false
	}
	a.stack = stack[:0]
}

// cycle reports the wait cycle from the frame of channel to the top of the
// stack, each head waiting on the next, the last on the first, and marks
// its channels stuck.
func (a *Auditor) cycle(stack []frame, channel uint32) {
	j := slices.IndexFunc(stack, func(f frame) bool { return f.ch == channel })
	var steps []CycleStep
	for _, f := range stack[j:] {
		c := a.chans[f.ch]
		c.stuck = true
		at := int(c.ent[c.done] + f.cur)
		cl := c.claims.at(at)
		steps = append(steps, CycleStep{
			Record: a.ref(f.ch, c.done),
			Waits:  clock.Entry{Channel: a.chans[cl.channel()].ch, Position: a.rawClaim(c, at)},
		})
	}
	a.report(Finding{Kind: FindingWaitCycle, Record: steps[0].Record, Producer: steps[0].Record.Channel, Cycle: steps})
}

// visit computes the closures of record k of channel ch, whose named
// records are all visited, and checks it in every scope consuming ch.
func (a *Auditor) visit(ch, k uint32) {
	if a.rel == nil {
		return // every scope is closed: no closure is needed
	}
	c := a.chans[ch]
	lo, hi := int(c.ent[k]), int(c.ent[k+1])
	a.d.reset()
	a.d.add(ch, k)
	for i := lo; i < hi; i++ {
		cl := c.claims.at(i)
		a.d.add(cl.channel(), cl.count())
	}
	cc := a.cc
	cc.reset()
	for _, t := range a.d.touched {
		if a.rel[t] {
			cc.add(t, a.d.val[t])
		}
	}
	for i := lo; i < hi; i++ {
		if cl := c.claims.at(i); cl.count() > 0 {
			a.joinCover(cc, cl.channel(), cl.count()-1)
		}
	}
	if k > 0 {
		a.joinCover(cc, ch, k-1)
	}
	ex := a.exbuf[:0]
	for _, t := range cc.touched {
		if v := cc.val[t]; v > a.d.get(t) {
			ex = append(ex, packClaim(t, v))
		}
	}
	c.excess.add(k, ex)
	a.exbuf = ex
	for si, s := range a.scopes {
		if s.in[ch] && !s.closed {
			a.visitScope(uint32(si), s, ch, k)
		}
	}
}

// joinCover joins cover(x) = C(x) ⊔ {x} of record k of channel ch into j,
// on the channels whose closures matter (Auditor.rel).
func (a *Auditor) joinCover(j *joiner, ch, k uint32) {
	c := a.chans[ch]
	if a.rel[ch] {
		j.add(ch, k+1)
	}
	for i := int(c.ent[k]); i < int(c.ent[k+1]); i++ {
		if cl := c.claims.at(i); a.rel[cl.channel()] {
			j.add(cl.channel(), cl.count())
		}
	}
	lo, hi := c.excess.get(k)
	for i := lo; i < hi; i++ {
		cl := c.excess.vals.at(i)
		j.add(cl.channel(), cl.count())
	}
}

// visitScope computes W of record k of ch in scope s and reports a hole on
// every consumed channel where C reaches further.
func (a *Auditor) visitScope(si uint32, s *scopeState, ch, k uint32) {
	c := a.chans[ch]
	lo, hi := int(c.ent[k]), int(c.ent[k+1])
	w := a.wc
	w.reset()
	w.add(ch, k)
	for i := lo; i < hi; i++ {
		if cl := c.claims.at(i); s.in[cl.channel()] {
			w.add(cl.channel(), cl.count())
		}
	}
	for i := lo; i < hi; i++ {
		if cl := c.claims.at(i); s.in[cl.channel()] && cl.count() > 0 {
			a.joinWaitCover(w, s, cl.channel(), cl.count()-1)
		}
	}
	if k > 0 {
		a.joinWaitCover(w, s, ch, k-1)
	}
	for _, t := range a.cc.touched {
		if s.in[t] && a.cc.val[t] > w.get(t) && !a.full {
			a.holes = append(a.holes, holeRef{scope: si, ch: ch, rnk: k, on: t})
			a.found()
		}
	}
	ex := a.exbuf[:0]
	for _, t := range w.touched {
		if v := w.val[t]; v > a.d.get(t) {
			ex = append(ex, packClaim(t, v))
		}
	}
	s.excess[ch].add(k, ex)
	a.exbuf = ex
}

// joinWaitCover joins wcover(x) = W(x) ⊔ {x} of record k of ch in scope s.
func (a *Auditor) joinWaitCover(j *joiner, s *scopeState, ch, k uint32) {
	c := a.chans[ch]
	j.add(ch, k+1)
	for i := int(c.ent[k]); i < int(c.ent[k+1]); i++ {
		if cl := c.claims.at(i); s.in[cl.channel()] {
			j.add(cl.channel(), cl.count())
		}
	}
	ex := &s.excess[ch]
	lo, hi := ex.get(k)
	for i := lo; i < hi; i++ {
		cl := ex.vals.at(i)
		j.add(cl.channel(), cl.count())
	}
}

// ownCount returns D(r)[on] of record k of ch: its own claim in rank form.
func (a *Auditor) ownCount(ch, k, on uint32) uint32 {
	if ch == on {
		return k
	}
	c := a.chans[ch]
	for i := int(c.ent[k]); i < int(c.ent[k+1]); i++ {
		if cl := c.claims.at(i); cl.channel() == on {
			return cl.count()
		}
	}
	return 0
}

// cover returns cover(x)[on] of record k of ch: how many records of on are
// among its causes or it.
func (a *Auditor) cover(ch, k, on uint32) uint32 {
	v := max(a.ownCount(ch, k, on), a.chans[ch].excess.valueOf(k, on))
	if ch == on {
		v = max(v, k+1)
	}
	return v
}

// waitCount returns W(r)[on] of record k of ch in scope s.
func (a *Auditor) waitCount(s *scopeState, ch, k, on uint32) uint32 {
	return max(a.ownCount(ch, k, on), s.excess[ch].valueOf(k, on))
}

// Run audits the loaded input for scopes (none: one scope of every channel
// of the input) and returns the report.
func (a *Auditor) Run(scopes []Scope) (*Report, error) {
	if a.single && !a.Settled() {
		return nil, errors.New("audit: Run after Add of an input it did not settle: Reread and Load it first")
	}
	if !a.loading && !a.single {
		a.startLoading()
	}
	if !a.full {
		for _, c := range a.chans {
			if len(c.ent)-1 != len(c.offs) {
				return nil, fmt.Errorf("%s: %w", a.names.Channel(c.ch), ErrChanged)
			}
		}
	}
	if len(scopes) == 0 {
		scopes = []Scope{{Channels: a.Channels()}}
	}
	a.countPending()
	a.checkRawClaims()
	a.setScopes(scopes)
	a.walk()
	rep := &Report{
		Records:   a.records,
		Channels:  a.Channels(),
		Truncated: a.full,
		Counts:    map[FindingKind]int{},
	}
	for ch := range a.external {
		rep.NotInInput = append(rep.NotInInput, ch)
	}
	byName := func(x, y clock.Channel) int { return compareChannels(a.names, x, y) }
	slices.SortFunc(rep.Channels, byName)
	slices.SortFunc(rep.NotInInput, byName)
	for _, s := range scopes {
		s.Channels = slices.Clone(s.Channels)
		slices.SortFunc(s.Channels, byName)
		rep.Scopes = append(rep.Scopes, s)
	}
	for _, c := range a.chans {
		rep.Unaudited += int64(len(c.offs)) - int64(c.done)
	}
	rep.ByProducer = map[FindingKind]map[clock.Channel]int{}
	count := func(k FindingKind, producer clock.Channel) {
		rep.Counts[k]++
		if rep.ByProducer[k] == nil {
			rep.ByProducer[k] = map[clock.Channel]int{}
		}
		rep.ByProducer[k][producer]++
	}
	for _, f := range a.findings {
		count(f.Kind, f.Producer)
	}
	for i := range a.holes {
		h := &a.holes[i]
		_, producer := a.path(h.ch, h.rnk, h.on, a.cover(h.ch, h.rnk, h.on)-1)
		h.producer = a.idx[producer]
		count(FindingHole, producer)
	}
	rep.a, rep.order = a, a.sortFindings()
	return rep, nil
}
