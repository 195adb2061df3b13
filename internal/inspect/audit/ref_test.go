package audit

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/gate/gatetest"
	"github.com/causalctl/causalctl/internal/record"
)

// worldItems writes a simulated world as a capture: each channel's records
// in offset order, channels interleaved at random. With proof, position
// lines say where offsets carried no record, as `causalctl capture` writes
// them; without, the gaps are bare and prove nothing.
func worldItems(w *gatetest.World, rng *rand.Rand, proof bool) []record.Item {
	var streams [][]record.Item
	for _, ch := range w.Channels {
		l := w.Logs[ch]
		name, _ := w.Names.Name(ch.Topic)
		it := func(kind record.Kind, off int64) record.Item {
			return record.Item{Kind: kind, Topic: name, TopicID: ch.Topic, Partition: ch.Partition, Offset: off}
		}
		var s []record.Item
		if proof {
			s = append(s, it(record.KindPosition, 0))
		}
		at := int64(0)
		for _, r := range l.Records {
			if proof && r.Offset > at {
				s = append(s, it(record.KindPosition, r.Offset))
			}
			rec := it(record.KindRecord, r.Offset)
			rec.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(r.Clock)}}
			s = append(s, rec)
			at = r.Offset + 1
		}
		if proof && l.End > at {
			s = append(s, it(record.KindPosition, l.End))
		}
		streams = append(streams, s)
	}
	var out []record.Item
	for {
		var open []int
		for k, s := range streams {
			if len(s) > 0 {
				open = append(open, k)
			}
		}
		if len(open) == 0 {
			break
		}
		k := open[rng.IntN(len(open))]
		out = append(out, streams[k][0])
		streams[k] = streams[k][1:]
	}
	for i := range out {
		out[i].Line = int64(i + 1)
	}
	return out
}

// auditWorld audits a world's capture for scopes, with the logs' ends as
// high watermarks.
func auditWorld(t *testing.T, w *gatetest.World, items []record.Item, scopes []Scope) *Report {
	t.Helper()
	a := New(Config{Names: w.Names})
	for _, ch := range w.Channels {
		a.SetHighWatermark(ch, w.Logs[ch].End)
	}
	return auditItems(t, a, items, scopes)
}

// auditItems reads items twice into a and runs it for scopes.
func auditItems(t testing.TB, a *Auditor, items []record.Item, scopes []Scope) *Report {
	t.Helper()
	for i := range items {
		if err := a.Index(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	return loadRun(t, a, items, scopes)
}

// loadRun gives items to a's Load and runs it for scopes.
func loadRun(t testing.TB, a *Auditor, items []record.Item, scopes []Scope) *Report {
	t.Helper()
	for i := range items {
		if err := a.Load(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := a.Run(scopes)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// randomScopes picks one to three scopes of random channels, often
// skipping the intermediate ones.
func randomScopes(w *gatetest.World, rng *rand.Rand) []Scope {
	var out []Scope
	for k := range 1 + rng.IntN(3) {
		s := Scope{Name: fmt.Sprintf("node%d", k)}
		for _, ch := range w.Channels {
			if rng.IntN(2) == 0 {
				s.Channels = append(s.Channels, ch)
			}
		}
		if len(s.Channels) == 0 {
			s.Channels = w.Channels[:1]
		}
		out = append(out, s)
	}
	return out
}

const simSeeds = 300

// Honest stamps have no hole, whatever the scope — and no finding at all
// when the capture proves no gaps. (Scope growth seeds from carried
// knowledge: a node that starts a channel at an explicit offset claims a
// prefix it never folded, and the audit reports what that prefix's causes
// hide; TestAuditAgreesWithReference covers those worlds.) With the gaps proven, the simulator's
// stamps claim settled positions (SPEC §3's Stamp), which may lie on a
// marker below a held head: those, and only those, are not-a-record.
func TestAuditSimulatorHonest(t *testing.T) {
	for seed := range uint64(simSeeds) {
		w := gatetest.Simulate(gatetest.Config{Seed: seed, SeededGrowthOnly: true})
		rng := rand.New(rand.NewPCG(seed, 1))
		scopes := randomScopes(w, rng)
		if rep := auditWorld(t, w, worldItems(w, rng, false), scopes); rep.Len() > 0 {
			t.Fatalf("seed %d, scopes %v: %d findings on honest stamps, first %+v", seed, scopes, rep.Len(), all(rep)[0])
		}
		rep := auditWorld(t, w, worldItems(w, rng, true), scopes)
		for _, f := range all(rep) {
			if f.Kind != FindingNotARecord || w.Record(f.Claim.Channel, f.Claim.Position) != nil {
				t.Fatalf("seed %d: %v finding on honest stamps with proven gaps: %+v", seed, f.Kind, f)
			}
		}
	}
}

// The sabotage that skips receipt folding opens holes, and the audit finds
// them on a good share of the seeds.
func TestAuditSimulatorUnfolded(t *testing.T) {
	withHoles := 0
	for seed := range uint64(simSeeds) {
		w := gatetest.Simulate(gatetest.Config{Seed: seed, StampSettledOnly: true})
		rng := rand.New(rand.NewPCG(seed, 2))
		rep := auditWorld(t, w, worldItems(w, rng, false), randomScopes(w, rng))
		if rep.Counts[FindingHole] > 0 {
			withHoles++
		}
		for k, n := range rep.Counts {
			if k != FindingHole && n > 0 {
				t.Fatalf("seed %d: %d %v findings from unfolded stamps", seed, n, k)
			}
		}
	}
	t.Logf("holes on %d of %d seeds", withHoles, simSeeds)
	if withHoles < simSeeds/4 {
		t.Errorf("holes on %d of %d seeds: want at least a quarter", withHoles, simSeeds)
	}
}

// refRecord is a record of the naive reference.
type refRecord struct {
	id   int
	ch   clock.Channel
	off  int64
	clk  clock.Clock
	prev []int // earlier records of the same channel
}

// reference is a direct transcription of the definition: the
// causes of m are the records its clock claims (every record of the channel
// at or below the position), the records before it on its own channel, and
// theirs, recursively, through any channel; what the gate makes m wait for
// is the same through the consumed channels only. A hole is a consumed
// record among the first and not among the second.
type reference struct {
	recs   []*refRecord
	byChan map[clock.Channel][]*refRecord
	memo   map[[2]int]map[int]bool // (scope or −1, id) → set
}

func newReference(items []record.Item) *reference {
	r := &reference{byChan: map[clock.Channel][]*refRecord{}, memo: map[[2]int]map[int]bool{}}
	for _, it := range items {
		if it.Kind != record.KindRecord {
			continue
		}
		ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
		c, _, err := clock.FromHeaders(it.Headers)
		if err != nil {
			panic(err)
		}
		rec := &refRecord{id: len(r.recs), ch: ch, off: it.Offset, clk: c}
		for _, p := range r.byChan[ch] {
			rec.prev = append(rec.prev, p.id)
		}
		r.recs = append(r.recs, rec)
		r.byChan[ch] = append(r.byChan[ch], rec)
	}
	return r
}

// causes returns the causes of record id, through the channels keep allows
// (nil: all); key tells the memo which.
func (r *reference) causes(key, id int, keep func(clock.Channel) bool) map[int]bool {
	if s, ok := r.memo[[2]int{key, id}]; ok {
		return s
	}
	m := r.recs[id]
	out := map[int]bool{}
	add := func(x int) {
		out[x] = true
		for y := range r.causes(key, x, keep) {
			out[y] = true
		}
	}
	for _, x := range m.prev {
		add(x)
	}
	for _, e := range m.clk.Entries() {
		if e.Channel == m.ch || keep != nil && !keep(e.Channel) {
			continue
		}
		for _, x := range r.byChan[e.Channel] {
			if x.off <= e.Position {
				add(x.id)
			}
		}
	}
	r.memo[[2]int{key, id}] = out
	return out
}

// refHole is a hole of m on one channel: the offsets of the missed
// ancestors there, what m itself claims there and the latest offset there
// that m waits for (−1 for none).
type refHole struct {
	Missed        []int64
	Claims, Waits int64
}

// holes returns, per scope, "m-channel@offset>a-channel" → the hole.
func (r *reference) holes(scopes []Scope, names *clock.Names) map[string]*refHole {
	out := map[string]*refHole{}
	for si, s := range scopes {
		keep := func(ch clock.Channel) bool { return slices.Contains(s.Channels, ch) }
		for _, m := range r.recs {
			if !keep(m.ch) {
				continue
			}
			waits := r.causes(si, m.id, keep)
			for a := range r.causes(-1, m.id, nil) {
				ch := r.recs[a].ch
				if !keep(ch) || waits[a] {
					continue
				}
				k := fmt.Sprintf("%s %s@%d>%s", s.Name, names.Channel(m.ch), m.off, names.Channel(ch))
				h := out[k]
				if h == nil {
					h = &refHole{Claims: -1, Waits: -1}
					if p, ok := m.clk.Get(ch); ok {
						h.Claims = p
					}
					for w := range waits {
						if r.recs[w].ch == ch {
							h.Waits = max(h.Waits, r.recs[w].off)
						}
					}
					out[k] = h
				}
				h.Missed = append(h.Missed, r.recs[a].off)
			}
		}
	}
	for _, h := range out {
		slices.Sort(h.Missed)
	}
	return out
}

// fastHoles lists a report's holes the way the reference r of its input
// does.
func fastHoles(rep *Report, r *reference, names *clock.Names) map[string]*refHole {
	out := map[string]*refHole{}
	for _, f := range all(rep) {
		if f.Kind != FindingHole {
			continue
		}
		h := f.Hole
		k := fmt.Sprintf("%s %s@%d>%s", f.Scope, names.Channel(f.Record.Channel), f.Record.Offset, names.Channel(h.Ancestor.Channel))
		got := &refHole{Claims: h.Claims, Waits: h.WaitsFor}
		for _, x := range r.byChan[h.Ancestor.Channel] {
			if x.off >= h.FirstMissed.Offset && x.off <= h.Ancestor.Offset {
				got.Missed = append(got.Missed, x.off)
			}
		}
		if len(got.Missed) != h.Missed {
			got.Missed = append(got.Missed, -1) // a count that disagrees with the records it spans
		}
		out[k] = got
	}
	return out
}

// sprintHoles prints holes by value.
func sprintHoles(holes map[string]*refHole) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(holes)) {
		fmt.Fprintf(&b, "%s: %+v\n", k, *holes[k])
	}
	return b.String()
}

// The fast audit agrees with the naive reference on every seed, honest and
// unfolded, for random scopes.
func TestAuditAgreesWithReference(t *testing.T) {
	for seed := range uint64(simSeeds) {
		for _, unfolded := range []bool{false, true} {
			w := gatetest.Simulate(gatetest.Config{Seed: seed, StampSettledOnly: unfolded})
			rng := rand.New(rand.NewPCG(seed, 3))
			items := worldItems(w, rng, false)
			scopes := randomScopes(w, rng)
			ref := newReference(items)
			got := sprintHoles(fastHoles(auditWorld(t, w, items, scopes), ref, w.Names))
			if want := sprintHoles(ref.holes(scopes, w.Names)); got != want {
				t.Fatalf("seed %d (unfolded %v): audit and reference disagree\naudit:\n%sreference:\n%s", seed, unfolded, got, want)
			}
		}
	}
}

// Every causal inversion the gate makes, under random interleavings, is
// among the reported holes: the gate delivered m before a true ancestor a
// (the simulator's ground truth, which never reads a clock) only where the
// audit said m does not wait for a.
func TestAuditFindsEveryInversion(t *testing.T) {
	inversions := 0
	for seed := range uint64(simSeeds) {
		w := gatetest.Simulate(gatetest.Config{Seed: seed, StampSettledOnly: true})
		rng := rand.New(rand.NewPCG(seed, 4))
		scopes := randomScopes(w, rng)
		items := worldItems(w, rng, false)
		holes := fastHoles(auditWorld(t, w, items, scopes), newReference(items), w.Names)
		for _, s := range scopes {
			for range 3 {
				for _, inv := range gateInversions(t, w, s.Channels, rng) {
					m, a := inv[0], inv[1]
					inversions++
					k := fmt.Sprintf("%s %s@%d>%s", s.Name, w.Names.Channel(m.Channel), m.Offset, w.Names.Channel(a.Channel))
					if h := holes[k]; h == nil || !slices.Contains(h.Missed, a.Offset) {
						t.Fatalf("seed %d, scope %s: the gate delivered %s before its ancestor %s@%d, and the audit has no such hole (%v)",
							seed, s.Name, k, w.Names.Channel(a.Channel), a.Offset, sprintHoles(holes))
					}
				}
			}
		}
	}
	t.Logf("%d inversions, all reported", inversions)
	if inversions == 0 {
		t.Error("no inversion at all: the test proves nothing")
	}
}

// gateInversions replays a random interleaving of the world through a gate
// over scope and returns each (m, a) where m was delivered before its true
// ancestor a on a channel of the scope.
func gateInversions(t *testing.T, w *gatetest.World, scope []clock.Channel, rng *rand.Rand) [][2]*gatetest.Record {
	g, err := gate.New(scope)
	if err != nil {
		t.Fatal(err)
	}
	delivered := map[int]bool{}
	var out [][2]*gatetest.Record
	var evs []gate.Event
	for _, in := range w.Inputs(gatetest.Plan{Scope: scope}, rng) {
		switch in.Kind {
		case gatetest.InputRecord:
			err = g.Receive(in.Channel, in.Offset, in.Record.Clock, nil)
		case gatetest.InputAdvance:
			err = g.Advance(in.Channel, in.Offset)
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = g.Drain(evs[:0])
		for _, ev := range evs {
			if ev.Kind != gate.EventDeliver {
				continue
			}
			m := w.Record(ev.Channel, ev.Offset)
			m.Ancestors.Each(func(id int) {
				if a := w.Records[id]; slices.Contains(scope, a.Channel) && !delivered[id] {
					out = append(out, [2]*gatetest.Record{m, a})
				}
			})
			delivered[m.ID] = true
		}
	}
	return out
}
