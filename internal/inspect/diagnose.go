package inspect

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// DefaultRetentionWarn is the retention headroom under which a held record
// is flagged (holds --retention-warn).
const DefaultRetentionWarn = time.Hour

// Input is what Diagnose reads. Only Gate is required.
type Input struct {
	Gate  *gate.Gate
	Names *clock.Names
	Facts Facts
	// Timestamp returns a held record's timestamp (view.Events.Timestamp).
	Timestamp func(ch clock.Channel, offset int64) (time.Time, bool)
	// Sizes returns a held record's key and value sizes, −1 for a null
	// key or value, and its headers' sizes (the ordering store keeps
	// them); nil leaves them unknown.
	Sizes func(ch clock.Channel, offset int64) (key, value int, headers []HeaderSize, ok bool)
	// HeldSince returns when a record's hold began (view.Events.HeldSince);
	// nil measures hold ages from the record's timestamp.
	HeldSince func(ch clock.Channel, offset int64) (time.Time, bool)
	// Now is the time ages and headroom are measured to; zero leaves them
	// unknown.
	Now time.Time
	// RetentionWarn flags a held record whose retention headroom is below
	// it; 0 flags none (holds --retention-warn 0).
	RetentionWarn time.Duration
}

// Report is the diagnosis of every held head of a gate.
type Report struct {
	Now time.Time
	// RecordsHeld counts every held record, heads and those behind them.
	RecordsHeld int64
	// Heads are the held heads in channel order (topic name, then
	// partition).
	Heads []Head
	// Roots group the heads by the root their wait chains end at, the
	// roots in the order of their first head.
	Roots []Root
	// Cycles are the wait cycles, each a list of channels.
	Cycles [][]string
}

// Head is one held head and why it is held.
type Head struct {
	// At is the head's channel; Channel is its name as reports print it.
	At      clock.Channel
	Channel string
	TopicID string
	Offset  int64
	// Timestamp is the record's timestamp; zero when unknown.
	Timestamp time.Time
	// Age is how long it has been held.
	Age Age
	// Queued counts the records held on the channel, the head included.
	Queued int
	// Clock is its clock as received, names resolved (in full from
	// Diagnose, cut as Limits say from Describe); ClockEntries is the
	// clock's number of entries.
	Clock        string
	ClockEntries int
	// KeySize and ValueSize are the record's key and value sizes; −1 for
	// a null key or value, or when unknown. Headers are its headers'
	// sizes, in record order; nil when unknown.
	KeySize, ValueSize int
	Headers            []HeaderSize
	Undecodable        string
	// Cause is the head's own: undecodable, or its most telling blocker's
	// (see Cause.Rank).
	Cause Cause
	// Root is the head its wait chain ends at (itself when no blocker is
	// held) and RootCause that head's cause; a chain into a wait cycle
	// ends where it would repeat itself, its RootCause is CauseCycle.
	Root       string
	RootOffset int64
	RootCause  Cause
	// Chain is the wait chain from this channel to the root's, cut after
	// MaxChain channels with the root kept last; ChainLen is its full
	// length.
	Chain    []string
	ChainLen int
	// Cycle is the wait cycle the chain runs into, when it does; the heads
	// on or into one cycle share one slice.
	Cycle    []string
	Blockers []Blocker
	// Retention is the record's headroom before retention deletes it;
	// nil when unknown (no retention settings, no timestamp, no time, or a
	// policy that does not delete).
	Retention *Headroom
	// NextStep is the advice for the root cause.
	NextStep string
}

// HeaderSize is one header of a held record: its key and its value's
// size, −1 for a null value. Never the value itself.
type HeaderSize struct {
	Key  string
	Size int
}

// Blocker is one unmet entry of a head's clock.
type Blocker struct {
	Channel  string
	Required int64
	Settled  int64 // −1 when unknown
	Cause    Cause
	// Producer is, for an open transaction, the transaction pinning the
	// channel's last stable offset (record.LogFacts.Pinning), when the
	// brokers named it.
	Producer *record.OpenTransaction
	// Log are the blocking channel's log facts; nil when unknown.
	Log *record.LogFacts
	// Root is, for a held blocker, the channel its wait chain ends at.
	Root string
}

// Headroom is how long a held record has before retention deletes it,
// unread by a node that restarts from its committed offset.
type Headroom struct {
	RetentionMs int64
	// DeletesAt is the record's timestamp plus retention.ms: the earliest
	// time a delete policy may remove it (segments roll, so it may stay
	// longer, never less).
	DeletesAt time.Time
	// Left is DeletesAt − now; negative once it is due.
	Left time.Duration
	// Warn is set when Left is below the warning threshold.
	Warn bool
}

// Root is the end of one or more wait chains, with its advice.
type Root struct {
	Channel  string
	Offset   int64
	Cause    Cause
	NextStep string
	// Heads are the heads whose chains end here, as CHANNEL@OFFSET, the
	// root first.
	Heads []string
	// Cycle is the wait cycle, for CauseCycle.
	Cycle []string
}

// MaxChain is how many channels of a head's wait chain a Report names:
// the first MaxChain−1 and the root. Every head of a chain of n names at
// most MaxChain, so a report grows with the heads, not with the heads times
// their chains' lengths (Head.ChainLen keeps the full length).
const MaxChain = 32

// Diagnose classifies every held head of in.Gate. It reads the gate and
// does not change it. Its cost grows linearly with the held heads and
// their blockers: each chain is walked once (linkChains), each wait cycle
// once, and a head names at most MaxChain channels of its chain.
func Diagnose(in Input) *Report {
	g := in.Gate
	names := in.Names
	if names == nil {
		names = &clock.Names{}
	}
	t := &Labels{Names: names}
	rep := &Report{Now: in.Now, RecordsHeld: g.Stats().Held, Cycles: [][]string{}}
	for _, cyc := range g.Cycles() {
		// Written from the member first in name order, as the heads'
		// cycles are, whatever the topics' UUIDs.
		names := t.names2(cyc)
		at := slices.Index(names, slices.Min(names))
		rep.Cycles = append(rep.Cycles, append(names[at:], names[:at]...))
	}

	order, _, _ := t.Order(g)
	var c Chains
	for _, ch := range order {
		if head, ok := g.Head(ch); ok {
			c.Add(ch, head, g.Blockers(ch))
		}
	}
	c.Link()
	held := c.held
	cycles := c.waitCycles(t)

	// rootAt maps a root to its index in rep.Roots: a heldInfo index, or
	// for a chain into a wait cycle −1 − the cycle's start, a cycle having
	// no one root.
	rootAt := map[int32]int{}
	for k := range held {
		rep.Heads = append(rep.Heads, c.Describe(&in, t, k, Limits{}))
	}
	// Advice is given once per root, from the root's own first blocker
	// of its cause.
	for k := range rep.Heads {
		hd := &rep.Heads[k]
		r := held[k].root
		key := r
		if held[k].cyclic {
			key = -1 - cycles.start[r]
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
				rc, ro = cyc[0], held[cycles.start[r]].head.Offset
			}
			rep.Roots = append(rep.Roots, Root{Channel: rc, Offset: ro, Cause: cause, Cycle: cyc,
				NextStep: NextStep(cause, rc+"@"+strconv.FormatInt(ro, 10), first, cyc)})
		}
		hd.NextStep = rep.Roots[at].NextStep
		rep.Roots[at].Heads = append(rep.Roots[at].Heads, hd.Channel+"@"+strconv.FormatInt(hd.Offset, 10))
	}
	rootsFirst(rep.Roots)
	return rep
}

// rootsFirst puts each root's own head first in its list of heads.
func rootsFirst(roots []Root) {
	for i := range roots {
		r := &roots[i]
		self := r.Channel + "@" + strconv.FormatInt(r.Offset, 10)
		if j := slices.Index(r.Heads, self); j > 0 {
			r.Heads = append([]string{self}, slices.Delete(r.Heads, j, j+1)...)
		}
	}
}

// Limits cap what Chains.Describe names of a head, for a view that shows a
// screenful: zero takes the default.
type Limits struct {
	// ClockEntries cuts Head.Clock after this many entries (default: none
	// cut).
	ClockEntries int
	// Blockers keeps the first Blockers (default: every one).
	Blockers int
	// Chain names at most this many channels of the wait chain, the root
	// kept last (default and most: MaxChain).
	Chain int
}

// Describe is head k of c, linked, as a Head: classified with in.Facts,
// dated with in.Timestamp and in.HeldSince to in.Now, named with t, cut as
// lim says. It is the one construction of a Head: Diagnose describes every
// head so, and the live view its screenful of them. NextStep, advice given
// per root, is Diagnose's; Describe leaves it empty.
func (c *Chains) Describe(in *Input, t *Labels, k int, lim Limits) Head {
	g := in.Gate
	h := &c.held[k]
	hd := Head{
		At:           h.ch,
		Channel:      t.Name(h.ch),
		TopicID:      t.TopicID(h.ch),
		Offset:       h.head.Offset,
		Queued:       g.Depth(h.ch),
		Clock:        t.Clock(h.head.Clock, cmp.Or(lim.ClockEntries, -1)),
		ClockEntries: h.head.Clock.Len(),
		Undecodable:  h.head.Undecodable,
		Cause:        c.Cause(&in.Facts, g, k),
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
	hd.Retention = in.Facts.headroom(h.ch, hd.Timestamp, in.Now, in.RetentionWarn)

	bs := h.blockers
	if lim.Blockers > 0 && len(bs) > lim.Blockers {
		bs = bs[:lim.Blockers]
	}
	if len(bs) > 0 {
		hd.Blockers = make([]Blocker, 0, len(bs))
	}
	for _, b := range bs {
		bd := Blocker{Channel: t.Name(b.Channel), Required: b.Required, Settled: b.Settled}
		bd.Cause, bd.Producer = c.BlockerCause(&in.Facts, g, b)
		if in.Facts.Log != nil {
			if lf, ok := in.Facts.Log(b.Channel); ok {
				bd.Log = lf
			}
		}
		if j, ok := c.idx[b.Channel]; ok && b.Kind == gate.BlockerHeld {
			bd.Root = t.Name(c.held[c.held[j].root].ch)
		}
		hd.Blockers = append(hd.Blockers, bd)
	}
	maxChain := MaxChain
	if lim.Chain > 0 {
		maxChain = min(lim.Chain, MaxChain)
	}
	hd.ChainLen = h.depth
	hd.Chain = make([]string, 0, min(h.depth, maxChain))
	for j, n := int32(k), 0; n < h.depth && n < maxChain; j, n = c.held[j].next, n+1 {
		hd.Chain = append(hd.Chain, t.Name(c.held[j].ch))
	}
	if h.depth > maxChain {
		hd.Chain[maxChain-1] = t.Name(c.held[h.root].ch)
	}
	root := &c.held[h.root]
	hd.Root, hd.RootOffset, hd.RootCause = t.Name(root.ch), root.head.Offset, c.Cause(&in.Facts, g, int(h.root))
	if h.cyclic {
		cycles := c.waitCycles(t)
		hd.RootCause = CauseCycle
		hd.Cycle = cycles.names[cycles.start[h.root]]
	}
	return hd
}

// OlderThan returns the report restricted to heads held at least d (heads
// of unknown age are kept only for d ≤ 0), with the roots regrouped.
func (r *Report) OlderThan(d time.Duration) *Report {
	if d <= 0 {
		return r
	}
	out := &Report{Now: r.Now, RecordsHeld: r.RecordsHeld, Cycles: r.Cycles}
	keep := map[string]bool{}
	for _, h := range r.Heads {
		// A head that cannot be dated (its record has no timestamp) is
		// kept: it cannot be shown younger than d. Output marks it undated.
		if !h.Age.Known || h.Age.D >= d {
			out.Heads = append(out.Heads, h)
			keep[h.Channel+"@"+strconv.FormatInt(h.Offset, 10)] = true
		}
	}
	for _, root := range r.Roots {
		var heads []string
		for _, h := range root.Heads {
			if keep[h] {
				heads = append(heads, h)
			}
		}
		if len(heads) > 0 {
			root.Heads = heads
			out.Roots = append(out.Roots, root)
		}
	}
	return out
}

// blockerCause classifies one blocker of a held head; a held blocker whose
// chain runs into a wait cycle is CauseCycle. (A requirement past what its
// channel received — one never written among them — is no held blocker:
// the gate says not-received, and Classify tells why.)
func (f *Facts) blockerCause(g *gate.Gate, held []heldInfo, heldIdx map[clock.Channel]int32, b gate.Blocker) (Cause, *record.OpenTransaction) {
	if b.Kind == gate.BlockerHeld {
		if j, ok := heldIdx[b.Channel]; ok && held[j].cyclic {
			return CauseCycle, nil
		}
		return CauseHeld, nil
	}
	return f.Classify(g, b)
}

// ownCause is a held head's own cause: undecodable, or the most telling
// of its blockers' causes.
func (f *Facts) ownCause(g *gate.Gate, held []heldInfo, heldIdx map[clock.Channel]int32, k int) Cause {
	h := &held[k]
	if h.head.Undecodable != "" {
		return CauseUndecodable
	}
	if h.onCycle {
		return CauseCycle
	}
	best := CauseHeld
	for _, b := range h.blockers {
		if c, _ := f.blockerCause(g, held, heldIdx, b); c.Rank() < best.Rank() {
			best = c
		}
	}
	return best
}

// ownCauseOnce is held[k]'s own cause, classified on first use: many
// heads share a root, whose clock may have thousands of blockers.
func (f *Facts) ownCauseOnce(g *gate.Gate, held []heldInfo, heldIdx map[clock.Channel]int32, k int32) Cause {
	if held[k].own == "" {
		held[k].own = f.ownCause(g, held, heldIdx, int(k))
	}
	return held[k].own
}

// headroom is the retention headroom of a record of ch written at ts.
func (f *Facts) headroom(ch clock.Channel, ts, now time.Time, warn time.Duration) *Headroom {
	if f.Log == nil || ts.IsZero() || now.IsZero() {
		return nil
	}
	lf, ok := f.Log(ch)
	if !ok || lf.Retention == nil || lf.Retention.Ms < 0 || !lf.Retention.Deletes() {
		return nil
	}
	at := ts.Add(msDuration(lf.Retention.Ms))
	left := at.Sub(now) // saturates
	return &Headroom{RetentionMs: lf.Retention.Ms, DeletesAt: at, Left: left, Warn: warn > 0 && left < warn}
}

// msDuration converts milliseconds to a Duration, saturating at the
// Duration's ends rather than wrapping: retention.ms may be 2^63−1 (how
// some clusters write "forever"), which would wrap to a negative headroom
// and flag every record as due.
func msDuration(ms int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > most:
		return math.MaxInt64
	case ms < -most:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// waitCycles are the wait cycles among held, each walked once.
type waitCycles struct {
	// start maps a head on a cycle to the cycle's member first in held's
	// order (channel order as people read it), so that every head on or
	// into the cycle names it alike, run after run; −1 off every cycle.
	start []int32
	// names is each cycle's channels from its start, following first held
	// blockers, keyed by the start.
	names map[int32][]string
}

// waitCycles finds the cycle of every head on one (linkChains set onCycle),
// walking each cycle twice in all: once for its start, once for its names;
// once per Link.
func (c *Chains) waitCycles(t *Labels) *waitCycles {
	if c.cycles != nil {
		return c.cycles
	}
	held := c.held
	w := &waitCycles{start: make([]int32, len(held)), names: map[int32][]string{}}
	c.cycles = w
	for k := range w.start {
		w.start[k] = -1
	}
	for k := range held {
		if !held[k].onCycle || w.start[k] >= 0 {
			continue
		}
		first := int32(k)
		for j := held[k].next; j != int32(k); j = held[j].next {
			first = min(first, j)
		}
		var names []string
		for j := first; ; {
			w.start[j] = first
			names = append(names, t.Name(held[j].ch))
			if j = held[j].next; j == first {
				break
			}
		}
		w.names[first] = names
	}
	return w
}

func (t *Labels) names2(chs []clock.Channel) []string {
	out := make([]string, len(chs))
	for i, ch := range chs {
		out[i] = t.Name(ch)
	}
	return out
}
