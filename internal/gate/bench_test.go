package gate_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// benchChannels returns n channels spread over topics of 100 partitions.
func benchChannels(n int) []clock.Channel {
	out := make([]clock.Channel, n)
	for k := range out {
		var id clock.TopicID
		id[0] = 0xbe
		id[15] = byte(k/100 + 1)
		id[14] = byte((k/100 + 1) >> 8)
		out[k] = clock.Channel{Topic: id, Partition: int32(k % 100)}
	}
	return out
}

type benchRecord struct {
	ch  clock.Channel
	off int64
	clk clock.Clock
}

// benchWorkload makes count records over n channels in a receive order
// with holds. Each channel has two fixed upstream channels, and every
// record claims the latest offset emitted on them (a 2-entry clock, as an
// honest producer with a stable scope writes). Records are received in
// emission order shifted by a per-channel lag of up to 256 records, which
// keeps each channel's order but makes many records arrive before their
// causes.
func benchWorkload(n, count int, seed uint64) []benchRecord {
	rng := rand.New(rand.NewPCG(seed, 1))
	chans := benchChannels(n)
	up := make([][2]int, n)
	lag := make([]int, n)
	for c := range up {
		up[c] = [2]int{(c + 1 + rng.IntN(n-1)) % n, (c + 1 + rng.IntN(n-1)) % n}
		lag[c] = rng.IntN(257)
	}
	next := make([]int64, n)
	type timed struct {
		at int
		r  benchRecord
	}
	recs := make([]timed, count)
	for k := range recs {
		c := rng.IntN(n)
		var es []clock.Entry
		for _, u := range up[c] {
			if next[u] > 0 {
				es = append(es, clock.Entry{Channel: chans[u], Position: next[u] - 1})
			}
		}
		recs[k] = timed{k + lag[c], benchRecord{chans[c], next[c], clock.MustNew(es...)}}
		next[c]++
	}
	slices.SortStableFunc(recs, func(a, b timed) int { return a.at - b.at })
	out := make([]benchRecord, count)
	for k, t := range recs {
		out[k] = t.r
	}
	return out
}

// BenchmarkReceive measures records through Receive+Drain; ns/op is per
// record.
func BenchmarkReceive(b *testing.B) {
	for _, n := range []int{16, 1000, 10000} {
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			recs := benchWorkload(n, 1<<18, 1)
			scope := benchChannels(n)
			var g *gate.Gate
			var evs []gate.Event
			var delivered int64
			k := len(recs)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if k == len(recs) {
					// A new round over the same records on a fresh gate.
					b.StopTimer()
					if g != nil {
						delivered += g.Stats().Delivered
					}
					g, _ = gate.New(scope)
					k = 0
					b.StartTimer()
				}
				r := &recs[k]
				k++
				if err := g.Receive(r.ch, r.off, r.clk, nil); err != nil {
					b.Fatal(err)
				}
				evs = g.Drain(evs[:0])
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkCascade measures one receipt releasing a 10 000-record chain.
// The gate has already delivered 10 000 records once, as in any long replay,
// so the output buffer is grown; the cold variants run on a fresh gate and
// also pay for growing it.
func BenchmarkCascade(b *testing.B) {
	const steps = 10000
	// The record on channel i claims channel i−1; channel 0's record
	// arrives last.
	across := benchChannels(steps + 1)
	clocks := make([]clock.Clock, len(across))
	for i := 1; i < len(across); i++ {
		clocks[i] = clock.MustNew(clock.Entry{Channel: across[i-1], Position: 0})
	}
	acrossSetup := func(g *gate.Gate) {
		for i := len(across) - 1; i >= 1; i-- {
			g.Receive(across[i], 0, clocks[i], nil)
		}
	}
	acrossTrigger := func(g *gate.Gate) { g.Receive(across[0], 0, clock.Clock{}, nil) }

	// a@k claims b@k−1 and b@k claims a@k, a@0 waits on a trigger: the
	// chain zigzags between two deep queues.
	two := benchChannels(3)
	a, bb, trig := two[0], two[1], two[2]
	ca := make([]clock.Clock, steps/2)
	cb := make([]clock.Clock, steps/2)
	for k := range ca {
		if k == 0 {
			ca[k] = clock.MustNew(clock.Entry{Channel: trig, Position: 0})
		} else {
			ca[k] = clock.MustNew(clock.Entry{Channel: bb, Position: int64(k - 1)})
		}
		cb[k] = clock.MustNew(clock.Entry{Channel: a, Position: int64(k)})
	}
	twoSetup := func(g *gate.Gate) {
		for k := range ca {
			g.Receive(a, int64(k), ca[k], nil)
		}
		for k := range cb {
			g.Receive(bb, int64(k), cb[k], nil)
		}
	}
	twoTrigger := func(g *gate.Gate) { g.Receive(trig, 0, clock.Clock{}, nil) }

	for _, warm := range []bool{true, false} {
		suffix := ""
		if !warm {
			suffix = "/cold"
		}
		b.Run("across-channels"+suffix, func(b *testing.B) {
			runCascade(b, across, warm, acrossSetup, acrossTrigger, steps+1)
		})
		b.Run("two-channels"+suffix, func(b *testing.B) {
			runCascade(b, two, warm, twoSetup, twoTrigger, steps+1)
		})
	}
}

func runCascade(b *testing.B, scope []clock.Channel, warm bool, setup, trigger func(*gate.Gate), want int) {
	var evs []gate.Event
	// A channel outside the chain for warming up the output buffer.
	warmCh := benchChannels(len(scope) + 1)[len(scope)]
	scope = append(slices.Clone(scope), warmCh)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		g, _ := gate.New(scope)
		if warm {
			for k := range want {
				g.Receive(warmCh, int64(k), clock.Clock{}, nil)
			}
			evs = g.Drain(evs[:0])
		}
		setup(g)
		if n := len(g.Drain(evs[:0])); n != 0 {
			b.Fatalf("%d deliveries before the trigger", n)
		}
		runtime.GC() // do not bill the setup's garbage to the cascade
		b.StartTimer()
		trigger(g)
		evs = g.Drain(evs[:0])
		if len(evs) != want {
			b.Fatalf("cascade delivered %d, want %d", len(evs), want)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(want), "ns/step")
}
