package gate_test

// A deliberately naive transcription of SPEC §3 — maps, full rescans to the
// fixpoint, nothing cached — run side by side with the gate on random
// inputs, forged clocks and bad feeds included, which the honest simulator
// never produces. After every input both must agree on what was delivered
// and dropped (as sets: any fixpoint order is correct), on the error, and on
// every query.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

type refRecord struct {
	off   int64
	clk   clock.Clock
	undec string
}

type refGate struct {
	hold bool
	// receiptOnly ignores every advance but a channel's first, when nothing
	// is known of it (no start, no record, no advance: seen is false).
	receiptOnly bool
	seen        map[clock.Channel]bool
	reached     map[clock.Channel]int64
	scope       map[clock.Channel]bool
	fed         map[clock.Channel]int64
	q           map[clock.Channel][]refRecord
	carried     map[clock.Channel]clock.Clock
	failed      *gate.FailClosedError
	out         []string // events of the current input, unordered
}

func newRef(scope []clock.Channel, starts map[clock.Channel]int64, hold bool) *refGate {
	r := &refGate{hold: hold, scope: map[clock.Channel]bool{}, fed: map[clock.Channel]int64{},
		q: map[clock.Channel][]refRecord{}, carried: map[clock.Channel]clock.Clock{},
		seen: map[clock.Channel]bool{}, reached: map[clock.Channel]int64{}}
	for _, ch := range scope {
		r.scope[ch] = true
		r.fed[ch] = -1
		r.reached[ch] = -1
	}
	for ch, s := range starts {
		r.fed[ch] = s - 1
		r.reached[ch] = s - 1
		r.seen[ch] = true
	}
	return r
}

func (r *refGate) settled(ch clock.Channel) int64 {
	if q := r.q[ch]; len(q) > 0 {
		return q[0].off - 1
	}
	return r.fed[ch]
}

// unmet returns the normalised, restricted entries of the head of ch that
// settled positions do not meet.
func (r *refGate) unmet(ch clock.Channel) []clock.Entry {
	var out []clock.Entry
	for _, e := range r.q[ch][0].clk.Entries() {
		if e.Channel != ch && r.scope[e.Channel] && r.settled(e.Channel) < e.Position {
			out = append(out, e)
		}
	}
	return out
}

func (r *refGate) sortedScope() []clock.Channel {
	var out []clock.Channel
	for ch := range r.scope {
		out = append(out, ch)
	}
	slices.SortFunc(out, clock.Channel.Compare)
	return out
}

func (r *refGate) cascade() {
	for progress := true; progress; {
		progress = false
		for _, ch := range r.sortedScope() {
			if q := r.q[ch]; len(q) > 0 && q[0].undec == "" && len(r.unmet(ch)) == 0 {
				r.out = append(r.out, fmt.Sprintf("deliver %v@%d", ch, q[0].off))
				r.q[ch] = q[1:]
				progress = true
			}
		}
	}
}

func (r *refGate) receive(ch clock.Channel, off int64, c clock.Clock, derr error) error {
	switch {
	case r.failed != nil:
		return r.failed
	case !r.scope[ch]:
		return gate.ErrNotInScope
	case off <= r.settled(ch):
		r.seen[ch], r.reached[ch] = true, max(r.reached[ch], off)
		r.out = append(r.out, fmt.Sprintf("drop %v@%d", ch, off))
		return nil
	case off <= r.fed[ch]:
		r.failed = &gate.FailClosedError{Channel: ch, Offset: off, Code: gate.CodeOutOfOrderFeed}
		return r.failed
	}
	rec := refRecord{off: off, clk: c}
	if derr != nil {
		code := gate.CodeUndecodable
		if cc, ok := clock.CodeOf(derr); ok {
			code = gate.Code(cc)
		}
		if !r.hold {
			r.failed = &gate.FailClosedError{Channel: ch, Offset: off, Code: code}
			return r.failed
		}
		rec = refRecord{off: off, undec: string(code)}
	}
	r.fed[ch] = off
	r.seen[ch], r.reached[ch] = true, max(r.reached[ch], off)
	r.carried[ch] = r.carried[ch].Join(rec.clk)
	r.q[ch] = append(r.q[ch], rec)
	r.cascade()
	return nil
}

func (r *refGate) advance(ch clock.Channel, p int64) error {
	switch {
	case r.failed != nil:
		return r.failed
	case !r.scope[ch]:
		return gate.ErrNotInScope
	}
	r.reached[ch] = max(r.reached[ch], p-1)
	if r.receiptOnly && r.seen[ch] {
		return nil
	}
	r.seen[ch] = true
	r.fed[ch] = max(r.fed[ch], p-1)
	r.cascade()
	return nil
}

func (r *refGate) stamp() clock.Clock {
	var s clock.Clock
	for ch := range r.scope {
		s = s.Join(r.carried[ch])
		if p := r.settled(ch); p >= 0 {
			s = s.With(ch, p)
		}
	}
	return s
}

func (r *refGate) add(ch clock.Channel, start int64, explicit bool) error {
	switch {
	case r.failed != nil:
		return r.failed
	case r.scope[ch]:
		return gate.ErrInScope
	}
	seed, ok := r.stamp().Get(ch)
	if !ok {
		seed = -1
	}
	if explicit {
		seed = start - 1
	}
	r.scope[ch] = true
	r.fed[ch] = seed
	r.reached[ch], r.seen[ch] = seed, true
	r.cascade()
	return nil
}

// refInput is one random input.
type refInput struct {
	kind     int // 0 receive, 1 advance, 2 add, 3 add at
	ch       clock.Channel
	off      int64
	clk      clock.Clock
	undec    bool
	plainErr bool
}

// refWorld draws channels from a small universe so that inputs collide.
type refWorld struct {
	chans []clock.Channel
}

func newRefWorld() refWorld {
	var w refWorld
	for t := range 3 {
		for p := range 2 {
			var id clock.TopicID
			id[0], id[15] = 0xaa, byte(t+1)
			w.chans = append(w.chans, clock.Channel{Topic: id, Partition: int32(p)})
		}
	}
	return w
}

// scope draws about two thirds of the universe.
func (w refWorld) scope(rng *rand.Rand) []clock.Channel {
	var scope []clock.Channel
	for _, ch := range w.chans {
		if rng.IntN(3) > 0 {
			scope = append(scope, ch)
		}
	}
	return scope
}

func (w refWorld) input(rng *rand.Rand, next map[clock.Channel]int64) refInput {
	in := refInput{ch: w.chans[rng.IntN(len(w.chans))]}
	switch x := rng.IntN(20); {
	case x < 14:
		// Mostly in order, sometimes a gap, now and then a replay or an
		// out-of-order offset.
		off := next[in.ch] + int64(rng.IntN(3)/2)
		if rng.IntN(12) == 0 {
			off = max(0, next[in.ch]-1-int64(rng.IntN(3)))
		}
		next[in.ch] = max(next[in.ch], off+1)
		in.off = off
		var es []clock.Entry
		for range rng.IntN(4) {
			c := w.chans[rng.IntN(len(w.chans))]
			es = append(es, clock.Entry{Channel: c, Position: max(0, next[c]-2+int64(rng.IntN(4)))})
		}
		in.clk = clock.MustNew(es...)
		if rng.IntN(40) == 0 {
			in.undec, in.plainErr = true, rng.IntN(2) == 0
		}
	case x < 18:
		in.kind = 1
		in.off = max(0, next[in.ch]+int64(rng.IntN(3))-1)
		next[in.ch] = max(next[in.ch], in.off)
	case x < 19:
		in.kind = 2
	default:
		in.kind = 3
		in.off = int64(rng.IntN(6))
	}
	return in
}

func TestAgainstReference(t *testing.T) {
	for seed := range uint64(400) {
		if err := runAgainstReference(seed, 120); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func FuzzAgainstReference(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint8(100))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8) {
		if err := runAgainstReference(seed, int(steps)); err != nil {
			t.Fatal(err)
		}
	})
}

func runAgainstReference(seed uint64, steps int) error {
	rng := rand.New(rand.NewPCG(seed, 3))
	w := newRefWorld()
	scope := w.scope(rng)
	starts := map[clock.Channel]int64{}
	var opts []gate.Option
	for _, ch := range scope {
		if rng.IntN(4) == 0 {
			starts[ch] = int64(rng.IntN(4))
			opts = append(opts, gate.WithStart(ch, starts[ch]))
		}
	}
	hold := rng.IntN(3) == 0
	if hold {
		opts = append(opts, gate.WithUndecodable(gate.HoldUndecodable))
	}
	receiptOnly := rng.IntN(3) == 0
	if receiptOnly {
		opts = append(opts, gate.WithPositionAdvance(false))
	}
	g, err := gate.New(scope, opts...)
	if err != nil {
		return err
	}
	ref := newRef(scope, starts, hold)
	ref.receiptOnly = receiptOnly
	next := map[clock.Channel]int64{}
	var evs []gate.Event
	var log []string
	for step := range steps {
		in := w.input(rng, next)
		var derr error
		if in.undec {
			derr = &clock.DecodeError{Code: clock.CodeTrailingBytes}
			if in.plainErr {
				derr = errors.New("mangled")
			}
		}
		var gerr, rerr error
		switch in.kind {
		case 0:
			gerr = g.Receive(in.ch, in.off, in.clk, derr)
			rerr = ref.receive(in.ch, in.off, in.clk, derr)
			log = append(log, fmt.Sprintf("recv %v@%d %v undec=%v", in.ch, in.off, in.clk, in.undec))
		case 1:
			gerr = g.Advance(in.ch, in.off)
			rerr = ref.advance(in.ch, in.off)
			log = append(log, fmt.Sprintf("advance %v %d", in.ch, in.off))
		case 2, 3:
			if in.kind == 2 {
				gerr = g.AddChannel(in.ch)
			} else {
				gerr = g.AddChannelAt(in.ch, in.off)
			}
			rerr = ref.add(in.ch, in.off, in.kind == 3)
			log = append(log, fmt.Sprintf("add %v at=%v %d", in.ch, in.kind == 3, in.off))
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("step %d: %s\ninputs:\n%s", step, fmt.Sprintf(format, args...), joinLines(log))
		}
		if err := sameError(gerr, rerr); err != nil {
			return fail("%v", err)
		}
		evs = g.Drain(evs[:0])
		var got []string
		last := map[clock.Channel]int64{}
		for _, ev := range evs {
			got = append(got, fmt.Sprintf("%v %v@%d", ev.Kind, ev.Channel, ev.Offset))
			if ev.Kind == gate.EventDeliver {
				if l, ok := last[ev.Channel]; ok && l >= ev.Offset {
					return fail("FIFO broken within a cascade on %v", ev.Channel)
				}
				last[ev.Channel] = ev.Offset
			}
		}
		want := ref.out
		ref.out = nil
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fail("events\n got %v\nwant %v", got, want)
		}
		if err := sameState(g, ref, w.chans); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

func joinLines(ls []string) string {
	out := ""
	for _, l := range ls {
		out += "  " + l + "\n"
	}
	return out
}

func sameError(got, want error) error {
	var gfc, wfc *gate.FailClosedError
	switch {
	case want == nil && got == nil:
		return nil
	case errors.As(want, &wfc):
		if !errors.As(got, &gfc) || gfc.Channel != wfc.Channel || gfc.Offset != wfc.Offset || gfc.Code != wfc.Code {
			return fmt.Errorf("error %v, want fail-closed at %v@%d %s", got, wfc.Channel, wfc.Offset, wfc.Code)
		}
		return nil
	case !errors.Is(got, want):
		return fmt.Errorf("error %v, want %v", got, want)
	}
	return nil
}

func sameState(g *gate.Gate, r *refGate, universe []clock.Channel) error {
	if !slices.Equal(g.Scope(), r.sortedScope()) {
		return fmt.Errorf("scope %v, want %v", g.Scope(), r.sortedScope())
	}
	held := 0
	for _, ch := range universe {
		if g.InScope(ch) != r.scope[ch] {
			return fmt.Errorf("InScope(%v) = %v", ch, g.InScope(ch))
		}
		if !r.scope[ch] {
			continue
		}
		if g.Settled(ch) != r.settled(ch) || g.Fed(ch) != r.fed[ch] || g.Depth(ch) != len(r.q[ch]) {
			return fmt.Errorf("%v: settled/fed/depth %d/%d/%d, want %d/%d/%d", ch,
				g.Settled(ch), g.Fed(ch), g.Depth(ch), r.settled(ch), r.fed[ch], len(r.q[ch]))
		}
		if g.Reached(ch) != r.reached[ch] {
			return fmt.Errorf("%v: reached %d, want %d", ch, g.Reached(ch), r.reached[ch])
		}
		held += len(r.q[ch])
		if !g.Carried(ch).Equal(r.carried[ch]) {
			return fmt.Errorf("%v: carried %v, want %v", ch, g.Carried(ch), r.carried[ch])
		}
		h, ok := g.Head(ch)
		if ok != (len(r.q[ch]) > 0) {
			return fmt.Errorf("%v: head present %v", ch, ok)
		}
		if !ok {
			if g.Blockers(ch) != nil {
				return fmt.Errorf("%v: blockers without a head", ch)
			}
			continue
		}
		rh := r.q[ch][0]
		if h.Offset != rh.off || !h.Clock.Equal(rh.clk) || h.Undecodable != rh.undec {
			return fmt.Errorf("%v: head %+v, want %+v", ch, h, rh)
		}
		var want []gate.Blocker
		if rh.undec == "" {
			for _, e := range r.unmet(ch) {
				kind := gate.BlockerNotReceived
				if len(r.q[e.Channel]) > 0 && e.Position <= r.fed[e.Channel] {
					kind = gate.BlockerHeld
				}
				want = append(want, gate.Blocker{Channel: e.Channel, Required: e.Position, Settled: r.settled(e.Channel), Kind: kind})
			}
			if len(want) == 0 && r.failed == nil {
				return fmt.Errorf("%v: reference left a deliverable head", ch)
			}
		}
		if got := g.Blockers(ch); !slices.Equal(got, want) {
			return fmt.Errorf("%v: blockers %v, want %v", ch, got, want)
		}
	}
	if st := g.Stats(); st.Held != int64(held) || st.Received != st.Delivered+st.Dropped+st.Held {
		return fmt.Errorf("stats %+v, %d held", st, held)
	}
	if !g.Stamp().Equal(r.stamp()) {
		return fmt.Errorf("stamp %v, want %v", g.Stamp(), r.stamp())
	}
	// Cycles: every reported cycle is a real cycle of held blockers.
	for _, cy := range g.Cycles() {
		for k, ch := range cy {
			next := cy[(k+1)%len(cy)]
			if !slices.ContainsFunc(g.Blockers(ch), func(b gate.Blocker) bool {
				return b.Channel == next && b.Kind == gate.BlockerHeld
			}) {
				return fmt.Errorf("cycle %v: %v does not wait on %v", cy, ch, next)
			}
		}
		if slices.MinFunc(cy, clock.Channel.Compare) != cy[0] {
			return fmt.Errorf("cycle %v does not start at its smallest channel", cy)
		}
	}
	if !slices.IsSortedFunc(g.Cycles(), func(a, b []clock.Channel) int {
		return slices.CompareFunc(a, b, clock.Channel.Compare)
	}) {
		return fmt.Errorf("cycles not sorted")
	}
	// And a wait chain that loops proves a cycle Cycles must report.
	for _, ch := range g.Holding() {
		chain := g.WaitChain(ch)
		for _, b := range g.Blockers(chain[len(chain)-1]) {
			if b.Kind == gate.BlockerHeld && len(g.Cycles()) == 0 {
				return fmt.Errorf("wait chain %v loops but no cycle reported", chain)
			}
		}
	}
	return nil
}
