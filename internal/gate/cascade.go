package gate

// cascade evaluates queued heads until none is left to look at: the fixpoint
// of SPEC §3. Channels are taken first in, first out; a channel keeps
// delivering its heads while they are deliverable, and each delivery wakes
// the heads parked on it (by required position, then in the order their
// channels joined the scope), which join the back of the line. That order is a pure function of the
// inputs, so the gate is deterministic.
func (g *Gate) cascade() {
	for g.workAt < len(g.work) {
		i := g.work[g.workAt]
		g.workAt++
		if g.workAt == len(g.work) {
			// Drained: reuse the array from the start, so a long chain
			// keeps the queue short.
			g.work = g.work[:0]
			g.workAt = 0
		}
		g.drainChannel(i)
	}
	g.work = g.work[:0]
	g.workAt = 0
}

// drainChannel delivers heads of channel i while they are deliverable. The
// head it stops at is parked (or is an undecodable head, which never
// delivers and waits on nothing).
func (g *Gate) drainChannel(i int32) {
	s := &g.chans[i]
	for s.head < len(s.q) {
		r := &s.q[s.head]
		if r.undec != 0 || !g.ready(i, r) {
			return
		}
		g.seq++
		g.events = append(g.events, Event{Kind: EventDeliver, Seq: g.seq, Channel: s.ch, Offset: r.off})
		g.stats.Delivered++
		g.stats.Held--
		g.popHead(i)
		g.wake(i)
	}
}

// ready reports whether head r of channel i is deliverable. If not, it parks
// r under the first unmet entry, remembering where it stopped.
func (g *Gate) ready(i int32, r *record) bool {
	es := r.clk.Entries()
	carried := g.chans[i].carried
	at := 0
	for k := int(r.cur); k < len(es); k++ {
		e := &es[k]
		at = findCarried(carried, at, e.Channel)
		j := carried[at].idx
		switch {
		case j == i:
			continue // normalise: FIFO already enforces it, or it is a self-cycle
		case j < 0:
			continue // restrict: not in scope (now; AddChannel re-evaluates)
		case g.settled[j] >= e.Position:
			continue
		}
		r.cur = int32(k)
		g.park(j, waiter{need: e.Position, ch: i})
		return false
	}
	r.cur = int32(len(es))
	return true
}

// wake moves every head parked on channel j that settled(j) now satisfies
// to the work queue. The entry it was parked on is met, so its cursor steps
// past it.
func (g *Gate) wake(j int32) {
	s := &g.chans[j]
	if len(s.waiters) == 0 {
		return
	}
	settled := g.settled[j]
	for len(s.waiters) > 0 && s.waiters[0].need <= settled {
		w := s.waiters[0]
		s.popWaiter()
		h := &g.chans[w.ch]
		h.q[h.head].cur++
		g.work = append(g.work, w.ch)
	}
}

func (g *Gate) park(j int32, w waiter) {
	s := &g.chans[j]
	s.waiters = append(s.waiters, w)
	// Sift up.
	h := s.waiters
	k := len(h) - 1
	for k > 0 {
		p := (k - 1) / 2
		if !h[k].less(h[p]) {
			break
		}
		h[k], h[p] = h[p], h[k]
		k = p
	}
}

func (s *chanState) popWaiter() {
	h := s.waiters
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	// Sift down.
	k := 0
	for {
		l := 2*k + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(h[k]) {
			break
		}
		h[k], h[m] = h[m], h[k]
		k = m
	}
	s.waiters = h
}

// less orders waiters by required position, then channel index: each head
// is parked at most once, so the order is total and the wake order fixed.
func (w waiter) less(v waiter) bool {
	if w.need != v.need {
		return w.need < v.need
	}
	return w.ch < v.ch
}
