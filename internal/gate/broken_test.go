package gate_test

import (
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/gate/gatetest"
)

// Deliberately broken gates for TestOracleCatchesSabotage: each wraps a
// real gate and breaks one rule of SPEC §3 from the outside, so that the
// gate itself carries no test hooks.

// ignoreCauses reads every decodable header as the empty clock: every head
// is deliverable at once, whatever it claims to depend on.
type ignoreCauses struct{ *gate.Gate }

func (g ignoreCauses) Receive(ch clock.Channel, off int64, c clock.Clock, derr error) error {
	if derr == nil {
		c = clock.Clock{}
	}
	return g.Gate.Receive(ch, off, c, derr)
}

// undecodableAsEmpty reads an undecodable header as the empty clock, rather
// than failing closed or holding the record.
type undecodableAsEmpty struct{ *gate.Gate }

func (g undecodableAsEmpty) Receive(ch clock.Channel, off int64, c clock.Clock, derr error) error {
	if derr != nil {
		c, derr = clock.Clock{}, nil
	}
	return g.Gate.Receive(ch, off, c, derr)
}

// noFIFO delivers, after every input, each record held behind a head whose
// clock is met, as a gate without head-of-line blocking would. The real
// gate still holds such a record until its turn; its later delivery is
// then left out, so each record is delivered once.
type noFIFO struct {
	*gate.Gate
	early map[at]bool // delivered here, still held by the gate
	extra []gate.Event
}

func newNoFIFO(g *gate.Gate) gatetest.Gate {
	return &noFIFO{Gate: g, early: map[at]bool{}}
}

// at names a record.
type at struct {
	ch  clock.Channel
	off int64
}

func key(ch clock.Channel, off int64) at { return at{ch, off} }

func (g *noFIFO) Receive(ch clock.Channel, off int64, c clock.Clock, derr error) error {
	return g.after(g.Gate.Receive(ch, off, c, derr))
}

func (g *noFIFO) Advance(ch clock.Channel, pos int64) error {
	return g.after(g.Gate.Advance(ch, pos))
}

func (g *noFIFO) AddChannel(ch clock.Channel) error { return g.after(g.Gate.AddChannel(ch)) }

func (g *noFIFO) AddChannelAt(ch clock.Channel, start int64) error {
	return g.after(g.Gate.AddChannelAt(ch, start))
}

// after delivers every met record behind a head, once.
func (g *noFIFO) after(err error) error {
	for _, ch := range g.Holding() {
		for _, h := range g.Queue(ch)[1:] {
			if h.Undecodable != "" || g.early[key(ch, h.Offset)] || !g.met(ch, h.Clock) {
				continue
			}
			g.early[key(ch, h.Offset)] = true
			g.extra = append(g.extra, gate.Event{Kind: gate.EventDeliver, Channel: ch, Offset: h.Offset})
		}
	}
	return err
}

// met reports whether c's normalised, restricted entries are settled.
func (g *noFIFO) met(ch clock.Channel, c clock.Clock) bool {
	for _, e := range c.Entries() {
		if e.Channel != ch && g.InScope(e.Channel) && g.Settled(e.Channel) < e.Position {
			return false
		}
	}
	return true
}

func (g *noFIFO) Drain(dst []gate.Event) []gate.Event {
	n := len(dst)
	dst = g.Gate.Drain(dst)
	kept := dst[:n]
	for _, ev := range dst[n:] {
		if k := key(ev.Channel, ev.Offset); ev.Kind == gate.EventDeliver && g.early[k] {
			delete(g.early, k) // delivered already
			continue
		}
		kept = append(kept, ev)
	}
	kept = append(kept, g.extra...)
	g.extra = g.extra[:0]
	return kept
}

func (g *noFIFO) Stats() gate.Stats {
	st := g.Gate.Stats()
	st.Delivered += int64(len(g.early))
	st.Held -= int64(len(g.early))
	return st
}
