package gatetest

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// Plan is one replay of a world through a gate: what is in scope, from
// where, and which channels join mid-run.
type Plan struct {
	Scope  []clock.Channel
	Starts map[clock.Channel]int64 // WithStart; absent means from the log start, nothing known
	Joins  []Join
	Mode   gate.UndecodableMode
}

// Join is scope growth during a replay.
type Join struct {
	Channel clock.Channel
	// Start < 0 seeds the channel from the gate's carried knowledge
	// (AddChannel) and rereads it from the log start, so the replay guard
	// drops the prefix; Start ≥ 0 is AddChannelAt and reads from Start.
	Start int64
}

// FullPlan replays every channel from the log start.
func (w *World) FullPlan() Plan { return Plan{Scope: w.Channels} }

// RandomPlan picks a random scope (often skipping intermediate channels),
// random start positions, random mid-run joins and a random undecodable
// mode.
func (w *World) RandomPlan(rng *rand.Rand) Plan {
	p := Plan{Starts: map[clock.Channel]int64{}}
	var out []clock.Channel
	for _, ch := range w.Channels {
		if rng.IntN(5) < 3 {
			p.Scope = append(p.Scope, ch)
			if rng.IntN(4) == 0 {
				p.Starts[ch] = rng.Int64N(w.Logs[ch].End + 1)
			}
		} else {
			out = append(out, ch)
		}
	}
	for _, ch := range out {
		if rng.IntN(3) == 0 {
			j := Join{Channel: ch, Start: -1}
			if rng.IntN(3) == 0 {
				j.Start = rng.Int64N(w.Logs[ch].End + 1)
			}
			p.Joins = append(p.Joins, j)
		}
	}
	if rng.IntN(4) == 0 {
		p.Mode = gate.HoldUndecodable
	}
	return p
}

// InputKind tells the inputs of a replay apart.
type InputKind uint8

const (
	InputRecord  InputKind = iota + 1 // Record at Offset
	InputAdvance                      // the position reached Offset
	InputJoin                         // Channel joins the scope (Join)
)

// Input is one step of a replay.
type Input struct {
	Kind    InputKind
	Channel clock.Channel
	Offset  int64   // the record's offset, or the position
	Record  *Record // InputRecord
	Join    Join    // InputJoin
}

// stream lists ch's inputs from offset from: each record, sometimes after a
// position advance over the gap below it, and a final advance to the log
// end, as a capture has.
func (w *World) stream(ch clock.Channel, from int64, rng *rand.Rand) []Input {
	l := w.Logs[ch]
	var out []Input
	at := from
	for _, r := range l.Records {
		if r.Offset < from {
			continue
		}
		if r.Offset > at && rng.IntN(2) == 0 {
			out = append(out, Input{Kind: InputAdvance, Channel: ch, Offset: r.Offset})
		}
		out = append(out, Input{Kind: InputRecord, Channel: ch, Offset: r.Offset, Record: r})
		at = r.Offset + 1
	}
	return append(out, Input{Kind: InputAdvance, Channel: ch, Offset: max(l.End, from)})
}

// Inputs returns a random receive interleaving for p: channels in scope
// and the joins are interleaved at random, each keeping its own order; a
// joined channel's inputs start after its join.
func (w *World) Inputs(p Plan, rng *rand.Rand) []Input {
	var streams [][]Input
	for _, ch := range p.Scope {
		streams = append(streams, w.stream(ch, p.Starts[ch], rng))
	}
	var joins []Input
	for _, j := range p.Joins {
		joins = append(joins, Input{Kind: InputJoin, Channel: j.Channel, Join: j})
	}
	streams = append(streams, joins)
	var out []Input
	for {
		var open []int
		for k, s := range streams {
			if len(s) > 0 {
				open = append(open, k)
			}
		}
		if len(open) == 0 {
			return out
		}
		k := open[rng.IntN(len(open))]
		in := streams[k][0]
		streams[k] = streams[k][1:]
		out = append(out, in)
		if in.Kind == InputJoin {
			streams = append(streams, w.stream(in.Channel, max(in.Join.Start, 0), rng))
		}
	}
}

// Result is what Run found.
type Result struct {
	Violations   []Violation // the first few of each kind
	Counts       Counts      // all of them, by kind
	Inputs       int
	Delivered    int
	Dropped      int
	MaxHeld      int64 // most records held at once
	FailedClosed bool
}

// Gate is what a replay drives: a *gate.Gate, or a test's deliberately
// broken variant of one (see RunWrapped).
type Gate interface {
	Receive(ch clock.Channel, offset int64, c clock.Clock, decodeErr error) error
	Advance(ch clock.Channel, position int64) error
	AddChannel(ch clock.Channel) error
	AddChannelAt(ch clock.Channel, start int64) error
	Fed(ch clock.Channel) int64
	Drain(dst []gate.Event) []gate.Event
	Stats() gate.Stats
}

// Run replays a random interleaving of p through a new gate (with opts
// after the plan's own) and checks it: every delivery and drop against
// ground truth, fail-closed exactly at an undecodable record in range
// (FailOnUndecodable), seeds of joins, and, when the input was complete,
// that everything in range was delivered.
func (w *World) Run(p Plan, rng *rand.Rand, opts ...gate.Option) Result {
	return w.RunWrapped(p, rng, nil, opts...)
}

// RunWrapped is Run through wrap(g) rather than the new gate g itself, so
// that a test can show the checks catch a gate that is wrong in a given
// way. A nil wrap is Run.
func (w *World) RunWrapped(p Plan, rng *rand.Rand, wrap func(*gate.Gate) Gate, opts ...gate.Option) Result {
	var res Result
	gopts := []gate.Option{gate.WithUndecodable(p.Mode)}
	for ch, s := range p.Starts {
		gopts = append(gopts, gate.WithStart(ch, s))
	}
	gg, err := gate.New(p.Scope, append(gopts, opts...)...)
	if err != nil {
		panic(err)
	}
	var g Gate = gg
	if wrap != nil {
		g = wrap(gg)
	}
	chk := w.NewChecker()
	for _, ch := range p.Scope {
		chk.Join(ch, p.Starts[ch])
	}
	// claims[ch] is the highest position any record fed to the gate (and
	// not dropped) claims on ch: the carried knowledge a seeded join must
	// start from. This reads clocks, but only to check AddChannel's seed
	// against SPEC §3; the oracle itself never does.
	claims := map[clock.Channel]int64{}
	complete := true
	var evs []gate.Event
	inputs := w.Inputs(p, rng)
	for _, in := range inputs {
		res.Inputs++
		switch in.Kind {
		case InputRecord:
			err = g.Receive(in.Channel, in.Offset, in.Record.Clock, in.Record.DecodeErr())
		case InputAdvance:
			err = g.Advance(in.Channel, in.Offset)
		case InputJoin:
			if in.Join.Start < 0 {
				err = g.AddChannel(in.Channel)
				want, ok := claims[in.Channel]
				if !ok {
					want = -1
				}
				if got := g.Fed(in.Channel); err == nil && got != want {
					chk.Note(VSeed, "%s joined at %d, carried knowledge is %d", w.Names.Channel(in.Channel), got, want)
				}
			} else {
				err = g.AddChannelAt(in.Channel, in.Join.Start)
			}
			chk.Join(in.Channel, g.Fed(in.Channel)+1)
		}
		dropped := false
		evs = g.Drain(evs[:0])
		for _, ev := range evs {
			if ev.Kind == gate.EventDrop {
				res.Dropped++
				chk.Drop(ev.Channel, ev.Offset)
				dropped = dropped || ev.Channel == in.Channel && ev.Offset == in.Offset
				continue
			}
			res.Delivered++
			chk.Deliver(ev.Channel, ev.Offset)
		}
		res.MaxHeld = max(res.MaxHeld, g.Stats().Held)
		corrupt := in.Kind == InputRecord && in.Record.Corrupt && chk.InRange(in.Channel, in.Offset)
		var fc *gate.FailClosedError
		switch {
		case errors.As(err, &fc):
			res.FailedClosed = true
			if !corrupt || p.Mode != gate.FailOnUndecodable || fc.Channel != in.Channel || fc.Offset != in.Offset {
				chk.Note(VFailClosed, "%v", err)
			}
		case err != nil:
			panic(fmt.Sprintf("gatetest: replay input %+v: %v", in, err))
		case corrupt && p.Mode == gate.FailOnUndecodable:
			chk.Note(VUndecodable, "fed %s@%d, whose header is undecodable, and the gate did not fail closed",
				w.Names.Channel(in.Channel), in.Offset)
		case corrupt:
			complete = false // held forever, and what waits on it
		case in.Kind == InputRecord && !dropped && !in.Record.Corrupt:
			for _, e := range in.Record.Clock.Entries() {
				if old, ok := claims[e.Channel]; !ok || e.Position > old {
					claims[e.Channel] = e.Position
				}
			}
		}
		if err != nil {
			complete = false
			break
		}
	}
	if st := g.Stats(); st.Received != st.Delivered+st.Dropped+st.Held {
		chk.Note(VUnknown, "stats do not add up: %+v", st)
	}
	if complete {
		chk.Complete()
	}
	res.Violations, res.Counts = chk.Violations(), chk.Counts()
	return res
}
