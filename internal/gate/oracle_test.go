package gate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/gate/gatetest"
)

// oracleSeeds random worlds check the real gate; sabotageSeeds check that
// each broken one is caught.
const (
	oracleSeeds   = 300
	sabotageSeeds = 300
)

// oracleRun simulates one world and replays it through a full plan and a
// few random ones. It returns every violation found, node sequences
// included, and what the replays saw.
func oracleRun(seed uint64, cfg gatetest.Config, opts ...gate.Option) ([]gatetest.Violation, gatetest.Result, *gatetest.World) {
	return oracleRunWrapped(seed, cfg, nil, opts...)
}

// oracleRunWrapped is oracleRun through wrap (gatetest.World.RunWrapped).
func oracleRunWrapped(seed uint64, cfg gatetest.Config, wrap func(*gate.Gate) gatetest.Gate, opts ...gate.Option) ([]gatetest.Violation, gatetest.Result, *gatetest.World) {
	// The returned Result sums the replays; its Counts include the nodes'.
	cfg.Seed = seed
	cfg.Corrupt = cfg.Corrupt || seed%3 == 0
	w := gatetest.Simulate(cfg)
	vs := w.NodeViolations
	rng := rand.New(rand.NewPCG(seed, 7))
	sum := gatetest.Result{Counts: w.NodeCounts}
	for k := range 4 {
		p := w.FullPlan()
		if k > 0 {
			p = w.RandomPlan(rng)
		}
		res := w.RunWrapped(p, rng, wrap, opts...)
		vs = append(vs, res.Violations...)
		sum.Counts.Add(res.Counts)
		sum.Inputs += res.Inputs
		sum.Delivered += res.Delivered
		sum.Dropped += res.Dropped
		sum.MaxHeld = max(sum.MaxHeld, res.MaxHeld)
		sum.FailedClosed = sum.FailedClosed || res.FailedClosed
	}
	return vs, sum, w
}

// TestOracle checks the gate against ground truth on random worlds.
func TestOracle(t *testing.T) {
	var records, inputs, delivered, dropped, held, failed, joins int
	for seed := range uint64(oracleSeeds) {
		vs, res, w := oracleRun(seed, gatetest.Config{})
		if len(vs) > 0 {
			t.Errorf("seed %d: violations %v; first: %v", seed, res.Counts, vs[0])
		}
		records += len(w.Records)
		inputs += res.Inputs
		delivered += res.Delivered
		dropped += res.Dropped
		if res.MaxHeld > 0 {
			held++
		}
		if res.FailedClosed {
			failed++
		}
		for _, n := range w.Nodes {
			joins += len(n.Scope)
		}
	}
	t.Logf("%d seeds: %d records, %d replay inputs, %d deliveries, %d drops; records held in %d seeds, fail-closed in %d",
		oracleSeeds, records, inputs, delivered, dropped, held, failed)
	// The worlds must exercise the gate, or passing proves little.
	if held < oracleSeeds*8/10 || dropped == 0 || failed == 0 {
		t.Errorf("worlds too tame: held in %d seeds, %d drops, fail-closed in %d seeds", held, dropped, failed)
	}
}

// TestOracleCatchesSabotage shows the oracle is not vacuous: each broken
// gate (or dishonest stamp) is caught on at least a minimum share of seeds,
// by the violation that proves the harm.
func TestOracleCatchesSabotage(t *testing.T) {
	cases := []struct {
		name string
		cfg  gatetest.Config
		wrap func(*gate.Gate) gatetest.Gate // the broken gate
		kind gatetest.ViolationKind
		// only seeds for which applies is true count
		applies func(w *gatetest.World) bool
		min     float64 // share of counted seeds that must be caught
	}{
		{name: "ignore-causes", wrap: func(g *gate.Gate) gatetest.Gate { return ignoreCauses{g} }, kind: gatetest.VAncestor, min: 0.9},
		{name: "no-fifo", wrap: newNoFIFO, kind: gatetest.VFIFO, min: 0.15},
		{name: "undecodable-as-empty", wrap: func(g *gate.Gate) gatetest.Gate { return undecodableAsEmpty{g} }, kind: gatetest.VAncestor,
			cfg: gatetest.Config{Corrupt: true}, applies: hasCorrupt, min: 0.25},
		{name: "stamp-skips-receipt-folding", cfg: gatetest.Config{StampSettledOnly: true}, kind: gatetest.VAncestor, min: 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			counted, caught := 0, 0
			var total gatetest.Counts
			var example string
			for seed := range uint64(sabotageSeeds) {
				vs, res, w := oracleRunWrapped(seed, tc.cfg, tc.wrap)
				if tc.applies != nil && !tc.applies(w) {
					continue
				}
				counted++
				for k, n := range res.Counts {
					if n > 0 {
						total[k]++ // seeds with this kind
					}
				}
				if res.Counts[tc.kind] == 0 {
					continue
				}
				caught++
				if example == "" {
					for _, v := range vs {
						if v.Kind == tc.kind {
							example = fmt.Sprintf("seed %d: %v", seed, v)
							break
						}
					}
				}
			}
			t.Logf("caught by %v on %d of %d seeds (%.0f%%); seeds with each kind: %v; e.g. %s",
				tc.kind, caught, counted, 100*float64(caught)/float64(max(counted, 1)), total, example)
			if float64(caught) < tc.min*float64(counted) || counted == 0 {
				t.Errorf("caught on %d of %d seeds, want at least %.0f%%", caught, counted, 100*tc.min)
			}
		})
	}
}

func hasCorrupt(w *gatetest.World) bool {
	for _, r := range w.Records {
		if r.Corrupt {
			return true
		}
	}
	return false
}

// TestOracleReceiptOnly checks receipt-only settling against ground truth:
// ignoring position advances must never break safety (FIFO, ancestors,
// duplicates, drops); it may only leave records held that a position
// advance would have released (VIncomplete), and on some worlds it must —
// a head naming an offset with no record after it — or the option does
// nothing.
func TestOracleReceiptOnly(t *testing.T) {
	incomplete := 0
	for seed := range uint64(oracleSeeds) {
		vs, _, _ := oracleRun(seed, gatetest.Config{}, gate.WithPositionAdvance(false))
		for _, v := range vs {
			if v.Kind == gatetest.VIncomplete {
				incomplete++
				continue
			}
			t.Errorf("seed %d: %v", seed, v)
			break
		}
	}
	t.Logf("%d seeds: %d replays left records held that advances would release", oracleSeeds, incomplete)
	if incomplete == 0 {
		t.Error("receipt-only settling never held anything the default releases: the option is not exercised")
	}
}
