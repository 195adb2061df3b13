package gate_test

// The scenario driver: testdata/gate/*.txt at the module root (the
// replay command runs them too) hold blocks of commands, a "----" line
// and the trace they must produce, ended by a blank line. Commands:
//
//	scope CH...          start a new gate over these channels (or none)
//	start CH=POS...      start positions (WithStart) for the next gate
//	mode hold|fail       undecodable mode for the next gate
//	recv CH OFF [CLOCK]  a record; CLOCK in text form, {} or absent for
//	                     empty, !CODE for an undecodable header with that
//	                     reason code, or ! alone for one with no code
//	advance CH POS       a position advance
//	add CH | add CH=POS  scope growth, seeded from the stamp or at POS
//	state                dump every channel, cycles, stamp and counters
//	chain CH             the wait chain from CH's head
//
// The gate is built at the first command after scope/start/mode. Channels
// are NAME/PARTITION; each topic name maps to a fake UUID made of its bytes,
// so channel order is name order. Run with -update to rewrite the traces,
// then review the diff against SPEC §3 by hand.

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/clock/clocktest"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the expected traces in testdata/gate/*.txt")

func TestScenarios(t *testing.T) {
	testutil.RunScenarios(t, "gate", *update, func() testutil.ScenarioDriver {
		sn := clocktest.NewNames()
		return &driver{sn: sn, names: sn.Names}
	})
}

// Exec runs one command of a scenario (testutil.ScenarioDriver).
func (d *driver) Exec(t *testing.T, where, cmd string) []string {
	d.t, d.where = t, where
	t.Helper()
	return d.exec(cmd)
}

type driver struct {
	t     *testing.T
	where string
	sn    *clocktest.Names
	names *clock.Names // sn's
	// configuration of the next gate
	scope []clock.Channel
	opts  []gate.Option
	g     *gate.Gate
	evs   []gate.Event
}

func (d *driver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s: %s", d.where, fmt.Sprintf(format, args...))
}

func (d *driver) channel(s string) clock.Channel {
	return d.sn.MustChannel(d.t, d.where, s)
}

func (d *driver) int(s string) int64 {
	return clocktest.MustInt(d.t, d.where, s)
}

func (d *driver) clock(s string) clock.Clock {
	return d.sn.MustClock(d.t, d.where, s)
}

func (d *driver) ch(c clock.Channel) string { return d.names.Channel(c) }

// text replaces fake UUIDs in s by topic names.
func (d *driver) text(s string) string { return d.sn.Text(s) }

func (d *driver) gate() *gate.Gate {
	d.t.Helper()
	if d.g == nil {
		g, err := gate.New(d.scope, d.opts...)
		if err != nil {
			d.fatalf("new: %v", err)
		}
		d.g = g
	}
	return d.g
}

func (d *driver) exec(line string) []string {
	d.t.Helper()
	cmd, args, arity := testutil.ScenarioCommand(d.t, d.where, line)
	var err error
	switch cmd {
	case "scope":
		d.g, d.scope, d.opts = nil, nil, nil
		for _, a := range args {
			d.scope = append(d.scope, d.channel(a))
		}
		return nil
	case "start":
		for _, a := range args {
			ch, pos, ok := strings.Cut(a, "=")
			if !ok {
				d.fatalf("start %q: want CH=POS", a)
			}
			d.opts = append(d.opts, gate.WithStart(d.channel(ch), d.int(pos)))
		}
		d.g = nil
		return nil
	case "mode":
		arity(1, 1)
		switch args[0] {
		case "hold":
			d.opts = append(d.opts, gate.WithUndecodable(gate.HoldUndecodable))
		case "fail":
			d.opts = append(d.opts, gate.WithUndecodable(gate.FailOnUndecodable))
		case "receipt-only":
			d.opts = append(d.opts, gate.WithPositionAdvance(false))
		default:
			d.fatalf("mode %q", args[0])
		}
		d.g = nil
		return nil
	case "new":
		// Build the gate now, to show a construction error.
		arity(0, 0)
		g, err := gate.New(d.scope, d.opts...)
		if err != nil {
			return []string{"error: " + d.text(err.Error())}
		}
		d.g = g
		return nil
	case "recv":
		arity(2, 3)
		ch, off := d.channel(args[0]), d.int(args[1])
		var c clock.Clock
		var derr error
		if len(args) == 3 {
			switch a := args[2]; {
			case a == "!":
				derr = errors.New("header mangled")
			case strings.HasPrefix(a, "!"):
				derr = &clock.DecodeError{Code: clock.Code(a[1:])}
			default:
				c = d.clock(a)
			}
		}
		err = d.gate().Receive(ch, off, c, derr)
	case "advance":
		arity(2, 2)
		err = d.gate().Advance(d.channel(args[0]), d.int(args[1]))
	case "add":
		arity(1, 1)
		chText, pos, explicit := strings.Cut(args[0], "=")
		ch := d.channel(chText)
		if explicit {
			err = d.gate().AddChannelAt(ch, d.int(pos))
		} else {
			err = d.gate().AddChannel(ch)
		}
	case "state":
		arity(0, 0)
		return d.state()
	case "chain":
		arity(1, 1)
		return []string{"chain " + d.chain(d.gate().WaitChain(d.channel(args[0])))}
	default:
		d.fatalf("unknown command %q", cmd)
	}
	var out []string
	d.evs = d.gate().Drain(d.evs[:0])
	for _, ev := range d.evs {
		switch ev.Kind {
		case gate.EventDeliver:
			out = append(out, fmt.Sprintf("deliver #%d %s@%d", ev.Seq, d.ch(ev.Channel), ev.Offset))
		default:
			out = append(out, fmt.Sprintf("%v %s@%d", ev.Kind, d.ch(ev.Channel), ev.Offset))
		}
	}
	if err != nil {
		out = append(out, "error: "+d.text(err.Error()))
	}
	return out
}

// chain formats a wait chain and says how it ends: at a root (a head with
// no held blocker) or where the next step would loop back into the chain.
func (d *driver) chain(cs []clock.Channel) string {
	if cs == nil {
		return "none"
	}
	parts := make([]string, len(cs))
	for k, c := range cs {
		parts[k] = d.ch(c)
	}
	last := cs[len(cs)-1]
	for _, b := range d.g.Blockers(last) {
		if b.Kind == gate.BlockerHeld {
			return strings.Join(parts, " > ") + " loops to " + d.ch(b.Channel)
		}
	}
	return strings.Join(parts, " > ") + " root " + d.ch(last)
}

// cycle formats one of Cycles.
func (d *driver) cycle(cs []clock.Channel) string {
	parts := make([]string, len(cs))
	for k, c := range cs {
		parts[k] = d.ch(c)
	}
	return strings.Join(parts, " > ")
}

func (d *driver) state() []string {
	g := d.gate()
	var out []string
	for _, c := range g.Scope() {
		line := fmt.Sprintf("%s: settled=%d fed=%d depth=%d carried=%s",
			d.ch(c), g.Settled(c), g.Fed(c), g.Depth(c), d.names.Format(g.Carried(c)))
		if r := g.Reached(c); r != g.Fed(c) {
			// Only with advances ignored (mode receipt-only).
			line += fmt.Sprintf(" reached=%d", r)
		}
		out = append(out, line)
		h, ok := g.Head(c)
		if !ok {
			continue
		}
		if h.Undecodable != "" {
			out = append(out, fmt.Sprintf("  head %d undecodable (%s)", h.Offset, h.Undecodable))
		} else {
			out = append(out, fmt.Sprintf("  head %d %s", h.Offset, d.names.Format(h.Clock)))
		}
		for _, b := range g.Blockers(c) {
			out = append(out, fmt.Sprintf("    blocker %s need %d settled %d %v", d.ch(b.Channel), b.Required, b.Settled, b.Kind))
		}
		out = append(out, "    chain "+d.chain(g.WaitChain(c)))
	}
	cycles := g.Cycles()
	if len(cycles) == 0 {
		out = append(out, "cycles: none")
	}
	for _, cy := range cycles {
		out = append(out, "cycle: "+d.cycle(cy))
	}
	st := g.Stats()
	out = append(out,
		"stamp: "+d.names.Format(g.Stamp()),
		fmt.Sprintf("stats: received=%d delivered=%d dropped=%d held=%d", st.Received, st.Delivered, st.Dropped, st.Held))
	if err := g.Failed(); err != nil {
		out = append(out, "failed: "+d.text(err.Error()))
	}
	return out
}
