package gate

import (
	"fmt"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
)

// ChannelState is one channel's part of a gate's state: what State exports
// and Restore seeds a new gate from. A gate restored from another's state
// behaves from then on exactly as that gate does, input for input.
type ChannelState struct {
	Channel clock.Channel
	// Fed is the highest position received (or advanced past, minus one);
	// −1 when nothing is known.
	Fed int64
	// Reached is the highest offset the consumer's position passed
	// (Gate.Reached); Restore raises it to Fed when lower.
	Reached int64
	// Known says a start, a record or an advance was seen on the channel,
	// which matters only with position advances off. Restore treats a
	// channel with a Fed of 0 or more, or anything held, as known.
	Known bool
	// Carried is A[c], the join of the full clocks received on the
	// channel. Restore joins in the clocks of the held records, so it may
	// be left empty when only the hold queue is known (a Parsley store).
	Carried clock.Clock
	// Held is the hold queue, head first, by strictly rising offset, none
	// above Fed.
	Held []SeedRecord
}

// SeedRecord is one record of a hold queue being seeded.
type SeedRecord struct {
	Offset int64
	// Clock is the record's full clock as received.
	Clock clock.Clock
	// Undecodable is the reason code of a record held because its header
	// is undecodable (HoldUndecodable); "" otherwise. Such a record never
	// delivers.
	Undecodable string
}

// State exports the gate's state, one entry per channel in scope in the
// order the channels joined it (which fixes the order of the cascade, so
// Restore keeps it). A gate that failed closed exports its state as it
// was when it failed, which restores to a gate that has not. Clocks are shared with the gate, which never changes a
// clock it holds.
func (g *Gate) State() []ChannelState {
	out := make([]ChannelState, len(g.chans))
	for i := range g.chans {
		s := &g.chans[i]
		cs := ChannelState{Channel: s.ch, Fed: s.fed, Reached: s.reached, Known: s.known,
			Carried: mustClock(appendCarried(nil, s.carried))}
		for k := s.head; k < len(s.q); k++ {
			h := g.held(s, &s.q[k])
			cs.Held = append(cs.Held, SeedRecord{Offset: h.Offset, Clock: h.Clock, Undecodable: h.Undecodable})
		}
		out[i] = cs
	}
	return out
}

// Restore returns a gate seeded with state: its scope is the channels of
// state, joined in that order; each channel's fed position, carried clock
// and hold queue are as given, so settled(c) is the head's offset − 1 when
// c holds anything, else Fed (SPEC §3). Then the cascade runs, as after any
// input: a seeded head whose clock is met is delivered at once, and Drain
// returns those deliveries — for a state read from a stopped process, the
// heads it would deliver the moment it ran. Options are as for New;
// WithStart is refused, the state being the start.
//
// Restore fails on a duplicate or invalid channel, a Fed below −1, a
// negative held offset, held offsets not strictly rising or above Fed, and
// an undecodable held record in a gate that fails on them.
func Restore(state []ChannelState, opts ...Option) (*Gate, error) {
	g, err := newGate(len(state), opts)
	if err != nil {
		return nil, err
	}
	if len(g.cfg.starts) > 0 {
		return nil, fmt.Errorf("gate: restore: a start position for %v: the state is the start", g.cfg.starts[0].ch)
	}
	for _, cs := range state {
		if err := checkChannel(cs.Channel); err != nil {
			return nil, err
		}
		if _, dup := g.idx[cs.Channel]; dup {
			return nil, fmt.Errorf("gate: restore %v: %w", cs.Channel, ErrInScope)
		}
		if err := checkSeed(cs, g.cfg.mode); err != nil {
			return nil, fmt.Errorf("gate: restore %v: %w", cs.Channel, err)
		}
		g.join(cs.Channel, cs.Fed)
	}
	// Carried clocks name channels by index, so they are built once every
	// channel has joined.
	for i, cs := range state {
		s := &g.chans[i]
		s.reached = max(cs.Reached, cs.Fed)
		s.known = cs.Known || cs.Fed >= 0 || len(cs.Held) > 0
		g.fold(s, cs.Carried)
		s.q = slices.Grow(s.q, len(cs.Held)) // one allocation, not a doubling per 2^k held
		for _, h := range cs.Held {
			r := record{off: h.Offset, clk: h.Clock}
			if h.Undecodable != "" {
				r.undec = g.intern(h.Undecodable)
				r.clk = clock.Clock{}
			} else {
				g.fold(s, h.Clock)
			}
			s.push(r)
			g.stats.Received++
			g.stats.Held++
		}
		if s.head < len(s.q) {
			g.settled[i] = s.q[s.head].off - 1
			g.work = append(g.work, int32(i))
		}
	}
	g.cascade()
	return g, nil
}

func checkSeed(cs ChannelState, mode UndecodableMode) error {
	if cs.Fed < -1 {
		return fmt.Errorf("fed %d below −1", cs.Fed)
	}
	last := int64(-1)
	for _, h := range cs.Held {
		switch {
		case h.Offset < 0:
			return fmt.Errorf("held record at negative offset %d", h.Offset)
		case h.Offset <= last:
			return fmt.Errorf("held offsets not rising: %d after %d", h.Offset, last)
		case h.Offset > cs.Fed:
			return fmt.Errorf("held record at %d above fed %d", h.Offset, cs.Fed)
		case h.Undecodable != "" && mode != HoldUndecodable:
			return fmt.Errorf("held record at %d is undecodable (%s) in a gate that fails on undecodable records", h.Offset, h.Undecodable)
		}
		last = h.Offset
	}
	return nil
}
