package gate_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// runSeeded takes a random gate mid-run, seeds a fresh gate from its
// State, feeds both the rest of the input and reports the first difference
// in their deliveries, errors or state. mangle, when set, changes the state
// before it is restored (a broken restorer the comparison must catch).
func runSeeded(seed uint64, steps int, mangle ...func([]gate.ChannelState)) (restored bool, err error) {
	rng := rand.New(rand.NewPCG(seed, 11))
	w := newRefWorld()
	scope := w.scope(rng)
	var opts, starts []gate.Option
	for _, ch := range scope {
		if rng.IntN(4) == 0 {
			starts = append(starts, gate.WithStart(ch, int64(rng.IntN(4))))
		}
	}
	if rng.IntN(3) == 0 {
		opts = append(opts, gate.WithUndecodable(gate.HoldUndecodable))
	}
	if rng.IntN(3) == 0 {
		opts = append(opts, gate.WithPositionAdvance(false))
	}
	a, err := gate.New(scope, append(slices.Clone(opts), starts...)...)
	if err != nil {
		return false, err
	}
	feed := func(g *gate.Gate, in refInput) error {
		var derr error
		if in.undec {
			derr = &clock.DecodeError{Code: clock.CodeTrailingBytes}
		}
		switch in.kind {
		case 0:
			return g.Receive(in.ch, in.off, in.clk, derr)
		case 1:
			return g.Advance(in.ch, in.off)
		case 2:
			return g.AddChannel(in.ch)
		}
		return g.AddChannelAt(in.ch, in.off)
	}
	// The split falls before the original fails closed, if it does: a
	// failed gate only repeats its failure.
	next := map[clock.Channel]int64{}
	inputs := make([]refInput, steps)
	probe, _ := gate.New(scope, append(slices.Clone(opts), starts...)...)
	last := steps
	for k := range inputs {
		inputs[k] = w.input(rng, next)
		if feed(probe, inputs[k]) != nil && probe.Failed() != nil && last == steps {
			last = k
		}
	}
	split := rng.IntN(last + 1)
	var b *gate.Gate
	var log []string
	for step := range steps {
		if step == split {
			st := a.State()
			for _, m := range mangle {
				m(st)
			}
			if b, err = gate.Restore(st, slices.Clone(opts)...); err != nil {
				return true, fmt.Errorf("step %d: restore: %v\ninputs:\n%s", step, err, joinLines(log))
			}
			a.Drain(nil)
			if evs := b.Drain(nil); len(evs) > 0 {
				return true, fmt.Errorf("step %d: a restored fixpoint delivered %v\ninputs:\n%s", step, evs, joinLines(log))
			}
		}
		in := inputs[step]
		log = append(log, fmt.Sprintf("%d %v@%d %v undec=%v", in.kind, in.ch, in.off, in.clk, in.undec))
		aerr := feed(a, in)
		if b == nil {
			continue
		}
		fail := func(format string, args ...any) (bool, error) {
			return true, fmt.Errorf("step %d (restored at %d): %s\ninputs:\n%s", step, split, fmt.Sprintf(format, args...), joinLines(log))
		}
		berr := feed(b, in)
		if (aerr == nil) != (berr == nil) || (aerr != nil && aerr.Error() != berr.Error()) {
			return fail("error %v, the original's %v", berr, aerr)
		}
		if got, want := events(b.Drain(nil)), events(a.Drain(nil)); got != want {
			return fail("events\n got %s\nwant %s", got, want)
		}
		if err := sameGates(b, a); err != nil {
			return fail("%v", err)
		}
	}
	return b != nil, nil
}

// events lists deliveries and drops in order, without sequence numbers
// (a restored gate counts its own).
func events(evs []gate.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%v %v@%d; ", ev.Kind, ev.Channel, ev.Offset)
	}
	return b.String()
}

// sameGates compares everything a gate answers.
func sameGates(got, want *gate.Gate) error {
	if !slices.Equal(got.Scope(), want.Scope()) {
		return fmt.Errorf("scope %v, want %v", got.Scope(), want.Scope())
	}
	for _, ch := range want.Scope() {
		if got.Settled(ch) != want.Settled(ch) || got.Fed(ch) != want.Fed(ch) || got.Reached(ch) != want.Reached(ch) {
			return fmt.Errorf("%v: settled/fed/reached %d/%d/%d, want %d/%d/%d", ch,
				got.Settled(ch), got.Fed(ch), got.Reached(ch), want.Settled(ch), want.Fed(ch), want.Reached(ch))
		}
		if !slices.EqualFunc(got.Queue(ch), want.Queue(ch), sameHeld) {
			return fmt.Errorf("%v: queue %v, want %v", ch, got.Queue(ch), want.Queue(ch))
		}
		if !got.Carried(ch).Equal(want.Carried(ch)) {
			return fmt.Errorf("%v: carried %v, want %v", ch, got.Carried(ch), want.Carried(ch))
		}
		if !slices.Equal(got.Blockers(ch), want.Blockers(ch)) {
			return fmt.Errorf("%v: blockers %v, want %v", ch, got.Blockers(ch), want.Blockers(ch))
		}
	}
	if !got.Stamp().Equal(want.Stamp()) {
		return fmt.Errorf("stamp %v, want %v", got.Stamp(), want.Stamp())
	}
	if got.Stats().Held != want.Stats().Held {
		return fmt.Errorf("held %d, want %d", got.Stats().Held, want.Stats().Held)
	}
	if !slices.EqualFunc(got.Cycles(), want.Cycles(), slices.Equal) {
		return fmt.Errorf("cycles %v, want %v", got.Cycles(), want.Cycles())
	}
	if (got.Failed() == nil) != (want.Failed() == nil) {
		return fmt.Errorf("failed %v, want %v", got.Failed(), want.Failed())
	}
	return nil
}

func sameHeld(a, b gate.Held) bool {
	return a.Channel == b.Channel && a.Offset == b.Offset && a.Clock.Equal(b.Clock) && a.Undecodable == b.Undecodable
}

// TestRestoreContinuesAsTheOriginal seeds a fresh gate from a random gate
// mid-run and checks that both answer every later input alike.
func TestRestoreContinuesAsTheOriginal(t *testing.T) {
	restored := 0
	for seed := range uint64(500) {
		ok, err := runSeeded(seed, 120)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if ok {
			restored++
		}
	}
	t.Logf("restored mid-run and continued on %d of 500 seeds", restored)
	if restored < 250 {
		t.Errorf("restored on only %d seeds: the rest failed closed first", restored)
	}
}

func FuzzRestore(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint8(100))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8) {
		if _, err := runSeeded(seed, int(steps)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRestoreCatchesSabotage shows the comparison is not vacuous: a
// restorer that seeds an empty channel's settled position one too high
// (fed-up-to + 1, the off-by-one of "next offset" against "last offset")
// is caught on most seeds.
func TestRestoreCatchesSabotage(t *testing.T) {
	const seeds = 300
	caught, counted := 0, 0
	for seed := range uint64(seeds) {
		restored, err := runSeeded(seed, 120, func(st []gate.ChannelState) {
			for i := range st {
				if len(st[i].Held) == 0 && st[i].Fed >= 0 {
					st[i].Fed++
				}
			}
		})
		if restored {
			counted++
		}
		if err != nil {
			caught++
		}
	}
	t.Logf("an empty channel seeded one too high caught on %d of %d restored seeds", caught, counted)
	// Fixed seeds: 235 of 300 today. A channel whose settled position no
	// later input reads hides the fault, so the bar is below all.
	if caught < counted*7/10 || counted == 0 {
		t.Errorf("caught on %d of %d seeds, want at least 70%%", caught, counted)
	}
}

var (
	chA = clock.Channel{Topic: clock.TopicID{0xaa, 15: 1}, Partition: 0}
	chB = clock.Channel{Topic: clock.TopicID{0xaa, 15: 2}, Partition: 0}
)

// TestRestoreReadyHead: a seeded head whose causes are all settled delivers
// at once, and what waited behind it follows.
func TestRestoreReadyHead(t *testing.T) {
	g, err := gate.Restore([]gate.ChannelState{
		{Channel: chA, Fed: 9},
		{Channel: chB, Fed: 5, Held: []gate.SeedRecord{
			{Offset: 4, Clock: clock.MustNew(clock.Entry{Channel: chA, Position: 9})},
			{Offset: 5, Clock: clock.MustNew(clock.Entry{Channel: chA, Position: 10})},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events(g.Drain(nil)), "deliver "+chB.String()+"@4; "; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if g.Settled(chB) != 4 || g.Settled(chA) != 9 || g.Depth(chB) != 1 {
		t.Errorf("settled %d/%d depth %d, want 9/4/1", g.Settled(chA), g.Settled(chB), g.Depth(chB))
	}
	want := []gate.Blocker{{Channel: chA, Required: 10, Settled: 9, Kind: gate.BlockerNotReceived}}
	if got := g.Blockers(chB); !slices.Equal(got, want) {
		t.Errorf("blockers %v, want %v", got, want)
	}
	// The next record on A releases the rest.
	if err := g.Receive(chA, 10, clock.Clock{}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := events(g.Drain(nil)), "deliver "+chA.String()+"@10; deliver "+chB.String()+"@5; "; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestRestoreRefuses(t *testing.T) {
	rec := func(off int64) gate.SeedRecord { return gate.SeedRecord{Offset: off} }
	cases := []struct {
		name  string
		state []gate.ChannelState
		opts  []gate.Option
		want  string
	}{
		{"duplicate", []gate.ChannelState{{Channel: chA, Fed: -1}, {Channel: chA, Fed: -1}}, nil, "already in scope"},
		{"zero topic", []gate.ChannelState{{Fed: -1}}, nil, "zero topic UUID"},
		{"fed below -1", []gate.ChannelState{{Channel: chA, Fed: -2}}, nil, "below −1"},
		{"above fed", []gate.ChannelState{{Channel: chA, Fed: 3, Held: []gate.SeedRecord{rec(4)}}}, nil, "above fed"},
		{"not rising", []gate.ChannelState{{Channel: chA, Fed: 9, Held: []gate.SeedRecord{rec(4), rec(4)}}}, nil, "not rising"},
		{"negative", []gate.ChannelState{{Channel: chA, Fed: 9, Held: []gate.SeedRecord{rec(-1)}}}, nil, "negative offset"},
		{"undecodable", []gate.ChannelState{{Channel: chA, Fed: 9, Held: []gate.SeedRecord{{Offset: 1, Undecodable: "truncated"}}}}, nil, "undecodable"},
		{"start", []gate.ChannelState{{Channel: chA, Fed: -1}}, []gate.Option{gate.WithStart(chA, 3)}, "the state is the start"},
	}
	for _, tc := range cases {
		_, err := gate.Restore(tc.state, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := gate.Restore([]gate.ChannelState{{Channel: chA, Fed: -1}, {Channel: chA, Fed: -1}}); !errors.Is(err, gate.ErrInScope) {
		t.Errorf("duplicate: %v does not wrap ErrInScope", err)
	}
}
