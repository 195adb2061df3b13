package inspect

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// chainGate is a gate over n channels (topics t0… of 100 partitions) whose
// heads wait in one chain: channel k's head claims channel k+1's, and the
// last claims a record never received — or, with cycle, the first's head,
// closing the chain into one wait cycle of n.
func chainGate(tb testing.TB, n int, cycle bool) (*gate.Gate, *clock.Names) {
	tb.Helper()
	scope := make([]clock.Channel, n+1)
	names := &clock.Names{}
	for k := range scope {
		scope[k] = testChannel(k/100, int32(k%100))
		if k%100 == 0 {
			if err := names.Add(fmt.Sprintf("t%d", k/100), scope[k].Topic); err != nil {
				tb.Fatal(err)
			}
		}
	}
	g, err := gate.New(scope)
	if err != nil {
		tb.Fatal(err)
	}
	for k := range n {
		next := scope[k+1]
		if cycle && k == n-1 {
			next = scope[0]
		}
		if err := g.Receive(scope[k], 0, clock.MustNew(clock.Entry{Channel: next, Position: 0}), nil); err != nil {
			tb.Fatal(err)
		}
	}
	return g, names
}

// BenchmarkDiagnoseChain diagnoses one wait chain (and one wait cycle) of
// 1 000, 5 000 and 20 000 channels: the cost must grow with the channels,
// not with their square.
func BenchmarkDiagnoseChain(b *testing.B) {
	for _, shape := range []string{"chain", "cycle"} {
		for _, n := range []int{1000, 5000, 20000} {
			b.Run(fmt.Sprintf("%s/n=%d", shape, n), func(b *testing.B) {
				g, names := chainGate(b, n, shape == "cycle")
				b.ReportAllocs()
				for b.Loop() {
					if rep := Diagnose(Input{Gate: g, Names: names}); len(rep.Heads) != n {
						b.Fatalf("%d heads", len(rep.Heads))
					}
				}
			})
		}
	}
}

// randomGate is a gate over n channels fed records in a random order, each
// claiming up to three random channels at offsets that may or may not
// have been received (so that heads chain, cycle, fan in, and wait on
// records never written), some undecodable; and log facts for half the
// channels.
func randomGate(t *testing.T, rng *rand.Rand, n int) Input {
	t.Helper()
	scope := make([]clock.Channel, n)
	names := &clock.Names{}
	for k := range scope {
		scope[k] = testChannel(k/7, int32(k%7))
		if k%7 == 0 {
			if err := names.Add(fmt.Sprintf("t%d", k/7), scope[k].Topic); err != nil {
				t.Fatal(err)
			}
		}
	}
	g, err := gate.New(scope, gate.WithUndecodable(gate.HoldUndecodable))
	if err != nil {
		t.Fatal(err)
	}
	next := make([]int64, n)
	for range n * 2 {
		k := rng.IntN(n)
		var es []clock.Entry
		for range rng.IntN(4) {
			if j := rng.IntN(n); j != k {
				es = append(es, clock.Entry{Channel: scope[j], Position: int64(rng.IntN(3))})
			}
		}
		c, err := clock.New(es...)
		if err != nil {
			continue // a channel claimed twice
		}
		var bad error
		if rng.IntN(20) == 0 {
			bad = errors.New("bad header")
		}
		if err := g.Receive(scope[k], next[k], c, bad); err != nil {
			t.Fatal(err)
		}
		next[k]++
	}
	logs := map[clock.Channel]*record.LogFacts{}
	for k, ch := range scope {
		if k%2 == 0 {
			logs[ch] = &record.LogFacts{HighWatermark: next[k] + int64(rng.IntN(2)), LastStable: next[k]}
		}
	}
	return Input{Gate: g, Names: names, Facts: Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) { lf, ok := logs[ch]; return lf, ok }}}
}

// TestDiagnoseMatchesNaive holds the linear Diagnose to the naive one it
// replaced, on random gates and on long chains and cycles: the same
// report, but for the chains, which the naive one names in full and
// Diagnose cuts after MaxChain.
func TestDiagnoseMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	var ins []Input
	for i := range 300 {
		ins = append(ins, randomGate(t, rng, 2+i%60))
	}
	for _, n := range []int{MaxChain - 1, MaxChain, MaxChain + 1, 200} {
		for _, cycle := range []bool{false, true} {
			g, names := chainGate(t, n, cycle)
			ins = append(ins, Input{Gate: g, Names: names})
		}
	}
	for i, in := range ins {
		got, want := Diagnose(in), naiveDiagnose(in)
		for k := range want.Heads {
			h := &want.Heads[k]
			h.ChainLen = len(h.Chain)
			if len(h.Chain) > MaxChain {
				h.Chain = append(h.Chain[:MaxChain-1:MaxChain-1], h.Chain[len(h.Chain)-1])
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %d: reports differ\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// TestDiagnoseCutsLongChains: a head of a chain of 200 names MaxChain
// channels, its root last, and knows the chain's length; the advice for a
// cycle of 200 names MaxChain of its members.
func TestDiagnoseCutsLongChains(t *testing.T) {
	g, names := chainGate(t, 200, false)
	rep := Diagnose(Input{Gate: g, Names: names})
	h := rep.Heads[0]
	if h.ChainLen != 200 || len(h.Chain) != MaxChain || h.Chain[0] != "t0/0" || h.Chain[MaxChain-1] != h.Root || h.Root != "t1/99" {
		t.Errorf("head of a chain of 200: len %d, chain %v, root %s", h.ChainLen, h.Chain, h.Root)
	}
	g, names = chainGate(t, 200, true)
	rep = Diagnose(Input{Gate: g, Names: names})
	step := rep.Roots[0].NextStep
	if n := strings.Count(step, "→"); n != MaxChain+1 || !strings.Contains(step, "t0/30 → … (200 channels) → t1/99 → t0/0 proves") {
		t.Errorf("advice for a cycle of 200 (%d arrows): %s", n, step)
	}
	if len(rep.Heads[0].Cycle) != 200 || &rep.Heads[0].Cycle[0] != &rep.Heads[199].Cycle[0] {
		t.Error("the heads of one cycle do not share its one list")
	}
}
