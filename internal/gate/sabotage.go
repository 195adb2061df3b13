package gate

import "slices"

// sabotage breaks the gate on purpose so that the oracle tests can show they
// catch a wrong gate. Only this package's tests can set it (export_test.go);
// in every other build it is zero and costs one predictable branch.
type sabotage uint8

const (
	sabIgnoreCauses     sabotage = 1 << iota // every head is deliverable
	sabNoFIFO                                // deliver any deliverable record, not only heads
	sabUndecodableEmpty                      // an undecodable header is the empty clock
	sabSeedSettled                           // Restore seeds every settled position one too high
)

// sabotageNoFIFO delivers, after each cascade, every queued record behind a
// head whose clock is met, as a gate without head-of-line blocking would.
func (g *Gate) sabotageNoFIFO() {
	for progress := true; progress; {
		progress = false
		for _, i := range g.order {
			s := &g.chans[i]
			for k := s.head + 1; k < len(s.q); k++ {
				r := s.q[k]
				if r.undec != 0 || !g.met(i, r) {
					continue
				}
				g.seq++
				g.events = append(g.events, Event{Kind: EventDeliver, Seq: g.seq, Channel: s.ch, Offset: r.off})
				g.stats.Delivered++
				g.stats.Held--
				s.q = slices.Delete(s.q, k, k+1)
				k--
				progress = true
			}
		}
	}
}

// met reports whether r's normalised, restricted clock is met, without
// parking anything.
func (g *Gate) met(i int32, r record) bool {
	for _, e := range r.clk.Entries() {
		if e.Channel == g.chans[i].ch {
			continue
		}
		if j, ok := g.idx[e.Channel]; ok && g.settled[j] < e.Position {
			return false
		}
	}
	return true
}
