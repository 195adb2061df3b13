package audit

import (
	"cmp"
	"slices"
	"sort"

	"github.com/causalctl/causalctl/internal/clock"
)

// holeFinding builds the evidence of a hole: the missed ancestor, what m
// claims and waits for on its channel, and a path from m to it.
func (a *Auditor) holeFinding(h holeRef) Finding {
	s := a.scopes[h.scope]
	hi := a.cover(h.ch, h.rnk, h.on)
	lo := a.waitCount(s, h.ch, h.rnk, h.on)
	on := a.chans[h.on]
	ev := &HoleEvidence{
		Ancestor:    a.ref(h.on, hi-1),
		FirstMissed: a.ref(h.on, lo),
		Missed:      int(hi - lo),
		Claims:      -1,
		WaitsFor:    -1,
	}
	if lo > 0 {
		ev.WaitsFor = on.offs[lo-1]
	}
	c := a.chans[h.ch]
	for i := int(c.ent[h.rnk]); i < int(c.ent[h.rnk+1]); i++ {
		if c.claims.at(i).channel() == h.on {
			ev.Claims = a.rawClaim(c, i)
		}
	}
	var producer clock.Channel
	ev.Path, producer = a.path(h.ch, h.rnk, h.on, hi-1)
	return Finding{Kind: FindingHole, Record: a.ref(h.ch, h.rnk), Producer: producer, Scope: s.name, Hole: ev}
}

type recPos struct{ ch, rnk uint32 }

// path walks from record k of ch back to record t of channel on, which is
// among its causes: at each step to the earliest record that the current
// one claims (or follows on its own channel) and that still has t among its
// causes, preferring one that claims t directly. It returns the hops and
// the channel of the record before the first that claims t directly: the
// stamp that dropped the claim.
func (a *Auditor) path(ch, k, on, t uint32) ([]Hop, clock.Channel) {
	hops := []Hop{{Record: a.ref(ch, k)}}
	cur := recPos{ch, k}
	producer := a.chans[ch].ch
	for range a.records + 1 { // every step goes back in causal order
		if a.ownCount(cur.ch, cur.rnk, on) > t {
			if len(hops) > 1 {
				producer = hops[len(hops)-2].Record.Channel
			}
			hop := Hop{Record: a.ref(on, t), Via: HopFollows}
			if cur.ch != on {
				hop.Via, hop.Claim = HopClaims, a.claimOn(cur, on)
			}
			return append(hops, hop), producer
		}
		next, hop, ok := a.step(cur, on, t)
		if !ok {
			break // cannot happen: t is among cur's causes
		}
		hops = append(hops, hop)
		cur = next
	}
	return hops, producer
}

// step chooses the next record of a path from cur towards record t of on.
// It goes as deep as it can: to a record that does not claim t directly
// when there is one, so that the path ends at the earliest stamp that
// dropped the claim rather than at a later one that only inherited the loss.
func (a *Auditor) step(cur recPos, on, t uint32) (recPos, Hop, bool) {
	var direct, deep *Hop
	var directAt, deepAt recPos
	consider := func(e, below uint32, via HopKind, claimPos int64) {
		if below == 0 || a.cover(e, below-1, on) <= t {
			return
		}
		// Causes only grow along a channel: take the earliest record
		// there that still has t among its causes.
		kk := uint32(sort.Search(int(below), func(i int) bool { return a.cover(e, uint32(i), on) > t }))
		hop := &Hop{Record: a.ref(e, kk), Via: via, Claim: claimPos}
		switch {
		case a.ownCount(e, kk, on) > t:
			if direct == nil {
				direct, directAt = hop, recPos{e, kk}
			}
		case deep == nil:
			deep, deepAt = hop, recPos{e, kk}
		}
	}
	c := a.chans[cur.ch]
	for i := int(c.ent[cur.rnk]); i < int(c.ent[cur.rnk+1]); i++ {
		if cl := c.claims.at(i); cl.channel() != on {
			consider(cl.channel(), cl.count(), HopClaims, a.rawClaim(c, i))
		}
	}
	if cur.ch != on {
		consider(cur.ch, cur.rnk, HopFollows, 0)
	}
	switch {
	case deep != nil:
		return deepAt, *deep, true
	case direct != nil:
		return directAt, *direct, true
	}
	return recPos{}, Hop{}, false
}

// claimOn returns the position cur claims on channel on.
func (a *Auditor) claimOn(cur recPos, on uint32) int64 {
	c := a.chans[cur.ch]
	for i := int(c.ent[cur.rnk]); i < int(c.ent[cur.rnk+1]); i++ {
		if c.claims.at(i).channel() == on {
			return a.rawClaim(c, i)
		}
	}
	return -1
}

// compareChannels orders channels as people read them: by topic name (the
// UUID when unnamed), then partition number.
func compareChannels(names *clock.Names, x, y clock.Channel) int {
	if x.Topic != y.Topic {
		nx, okx := names.Name(x.Topic)
		ny, oky := names.Name(y.Topic)
		if !okx {
			nx = x.Topic.String()
		}
		if !oky {
			ny = y.Topic.String()
		}
		if r := cmp.Compare(nx, ny); r != 0 {
			return r
		}
	}
	return cmp.Compare(x.Partition, y.Partition)
}

// findingKey is what findings sort by: channels by their display rank.
type findingKey struct {
	kind             FindingKind
	producer, record int
	offset           int64
	scope            uint32
	other            int // the ancestor's or the claim's channel
}

func compareKeys(x, y *findingKey) int {
	if r := cmp.Compare(x.kind, y.kind); r != 0 {
		return r
	}
	if r := cmp.Compare(x.producer, y.producer); r != 0 {
		return r
	}
	if r := cmp.Compare(x.record, y.record); r != 0 {
		return r
	}
	if r := cmp.Compare(x.offset, y.offset); r != 0 {
		return r
	}
	if r := cmp.Compare(x.scope, y.scope); r != 0 {
		return r
	}
	return cmp.Compare(x.other, y.other)
}

// sortFindings returns every finding in report order: by kind, producer
// channel, record, then scope and the rest, so that a report is the same
// for the same input.
func (a *Auditor) sortFindings() []findingRef {
	// Every channel a finding names is of the input or claimed outside it.
	all := a.Channels()
	for ch := range a.external {
		all = append(all, ch)
	}
	slices.SortFunc(all, func(x, y clock.Channel) int { return compareChannels(a.names, x, y) })
	rank := make(map[clock.Channel]int, len(all))
	for i, ch := range all {
		rank[ch] = i
	}
	type keyed struct {
		key findingKey
		ref findingRef
	}
	out := make([]keyed, 0, len(a.findings)+len(a.holes))
	for i, f := range a.findings {
		out = append(out, keyed{findingKey{f.Kind, rank[f.Producer], rank[f.Record.Channel], f.Record.Offset, 0, rank[f.Claim.Channel]}, findingRef{i, -1}})
	}
	inRank := make([]int, len(a.chans))
	for i, c := range a.chans {
		inRank[i] = rank[c.ch]
	}
	for i, h := range a.holes {
		out = append(out, keyed{findingKey{FindingHole, inRank[h.producer], inRank[h.ch], a.chans[h.ch].offs[h.rnk], h.scope, inRank[h.on]}, findingRef{-1, i}})
	}
	slices.SortStableFunc(out, func(x, y keyed) int { return compareKeys(&x.key, &y.key) })
	refs := make([]findingRef, len(out))
	for i, k := range out {
		refs[i] = k.ref
	}
	return refs
}
