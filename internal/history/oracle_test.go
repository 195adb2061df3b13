package history

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// randomHistory is a history of one unit over three channels: random
// records (each caused by a record of another channel, or by nothing),
// executions with random scopes (declarations), restarts at the committed
// positions or rewound below them, truncations and deletions with
// recreation under a new ID. A paced history also carries trace counts
// on its reads and status reports that end executions (RuleStepPaced).
func randomHistory(rng *rand.Rand, paced bool) *History {
	h := &History{Records: map[clock.Channel][]Record{}, LogStart: map[clock.Channel]int64{}, Names: map[clock.TopicID]string{}}
	var chans []clock.Channel
	for i := range 3 {
		ch := clock.Channel{Topic: clock.TopicID{15: byte(i + 1)}}
		chans = append(chans, ch)
		h.Names[ch.Topic] = fmt.Sprintf("t%d", i)
	}
	for _, ch := range chans {
		for off := range int64(6) {
			r := Record{Offset: off}
			if rng.IntN(2) == 0 {
				other := chans[rng.IntN(len(chans))]
				if other != ch {
					r.Clock = clock.MustNew(clock.Entry{Channel: other, Position: rng.Int64N(6)})
				}
			}
			h.Records[ch] = append(h.Records[ch], r)
		}
	}
	u := Unit{Process: "p"}
	next := map[clock.Channel]int64{}
	idx := 0
	ends := int64(0) // the trace count a paced history reports
	step := func(s Step) {
		s.Index = idx
		idx++
		h.Steps = append(h.Steps, s)
	}
	for range 8 {
		switch rng.IntN(10) {
		case 0:
			ch := chans[rng.IntN(len(chans))]
			step(Step{Kind: StepTruncate, Channel: ch, LogStart: rng.Int64N(3)})
			continue
		case 1:
			i := rng.IntN(len(chans))
			step(Step{Kind: StepDelete, Topic: chans[i].Topic})
			// Recreated under its name: a new, empty topic ID.
			fresh := clock.Channel{Topic: clock.TopicID{0: byte(idx), 15: byte(i + 1)}}
			h.Names[fresh.Topic] = h.Names[chans[i].Topic]
			chans[i] = fresh
			continue
		}
		start := map[clock.Channel]int64{}
		for _, ch := range chans {
			if rng.IntN(3) == 0 {
				continue // not declared in this execution
			}
			s := next[ch]
			if rng.IntN(4) == 0 {
				s = rng.Int64N(s + 1) // a rewind
			}
			start[ch] = s
		}
		gone := map[clock.Channel]bool{}
		for range 1 + rng.IntN(3) {
			if rng.IntN(5) == 0 {
				// Deleted while the execution runs: it reads on the others.
				i := rng.IntN(len(chans))
				step(Step{Kind: StepDelete, Topic: chans[i].Topic})
				gone[chans[i]] = true
				fresh := clock.Channel{Topic: clock.TopicID{0: byte(idx), 15: byte(i + 1)}}
				h.Names[fresh.Topic] = h.Names[chans[i].Topic]
				chans[i] = fresh
			}
			nr := map[clock.Channel]int64{}
			for ch, s := range start {
				if gone[ch] {
					continue // the deleted topic: nothing more to read
				}
				n := max(s, next[ch]) + rng.Int64N(3)
				nr[ch], next[ch] = n, n
			}
			st := Step{Kind: StepRead, Unit: u, ExecStart: start, NextRead: nr}
			if paced {
				ends += rng.Int64N(3)
				st.TraceEnd, st.TraceKnown = ends, true
			}
			step(st)
		}
		if paced && rng.IntN(2) == 0 {
			ends += rng.Int64N(2)
			step(Step{Kind: StepStatus, Unit: Unit{Process: u.Process}, TraceEnd: ends, TraceKnown: true})
		}
	}
	return h
}

// checkInvariants is the oracle: what any replay by the history rules
// must satisfy, from the history alone.
func checkInvariants(h *History, outs []*Outcome) error {
	deleted := map[clock.TopicID]int{} // step of the deletion
	for _, s := range h.Steps {
		if s.Kind == StepDelete {
			deleted[s.Topic] = s.Index
		}
	}
	for _, o := range outs {
		seen := map[clock.Channel]int64{}
		delivered := map[clock.Channel]map[int64]bool{}
		for _, d := range o.Deliveries {
			if delivered[d.Channel] == nil {
				delivered[d.Channel] = map[int64]bool{}
			}
			// No record is delivered twice, whatever the rewinds.
			if delivered[d.Channel][d.Offset] {
				return fmt.Errorf("%s@%d delivered twice", d.Channel, d.Offset)
			}
			delivered[d.Channel][d.Offset] = true
			// Within a channel, deliveries rise.
			if last, ok := seen[d.Channel]; ok && d.Offset < last {
				return fmt.Errorf("%s@%d delivered after @%d", d.Channel, d.Offset, last)
			}
			seen[d.Channel] = d.Offset
			// Nothing of a deleted topic is delivered after its deletion.
			if at, ok := deleted[d.Channel.Topic]; ok && d.Step > at {
				return fmt.Errorf("%s@%d delivered at step %d, after its topic's deletion at %d", d.Channel, d.Offset, d.Step, at)
			}
		}
	}
	return nil
}

func TestOracleRandomHistories(t *testing.T) {
	for _, paced := range []bool{false, true} {
		for seed := range uint64(400) {
			h := randomHistory(rand.New(rand.NewPCG(seed, 34)), paced)
			outs, err := Replay(h, Options{})
			if err != nil {
				t.Fatalf("seed %d (paced %v): %v", seed, paced, err)
			}
			if err := checkInvariants(h, outs); err != nil {
				t.Fatalf("seed %d (paced %v): %v", seed, paced, err)
			}
		}
	}
}

// A broken rule is caught: without the resume from the ordering state a
// rewind delivers again what was delivered; without the dead-channel rule
// held records of a deleted topic deliver.
func TestOracleCatchesBrokenRules(t *testing.T) {
	for _, rule := range []Rule{RuleResume, RuleDeleted} {
		caught := false
		for seed := uint64(0); seed < 2000 && !caught; seed++ {
			h := randomHistory(rand.New(rand.NewPCG(seed, 34)), false)
			outs, err := Replay(h, Options{without: map[Rule]bool{rule: true}})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			caught = checkInvariants(h, outs) != nil
		}
		if !caught {
			t.Errorf("the oracle never caught the replay without rule %s", rule)
		}
	}
}
