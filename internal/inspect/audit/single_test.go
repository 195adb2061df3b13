package audit

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate/gatetest"
	"github.com/causalctl/causalctl/internal/record"
)

// auditOnce reads items into a through Add and, when that does not settle
// them, a second time through Reread and Load; then runs it for scopes. It
// returns whether the single reading settled the input.
func auditOnce(t testing.TB, a *Auditor, items []record.Item, scopes []Scope) (*Report, bool) {
	t.Helper()
	for i := range items {
		if err := a.Add(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	if a.Settled() {
		rep, err := a.Run(scopes)
		if err != nil {
			t.Fatal(err)
		}
		return rep, true
	}
	a.Reread()
	return loadRun(t, a, items, scopes), false
}

// reportText is everything a report says, findings in full, for comparing
// two audits of one input.
func reportText(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "records %d channels %v scopes %v not-in-input %v counts %v by-producer %v truncated %v unaudited %d\n",
		rep.Records, rep.Channels, rep.Scopes, rep.NotInInput, rep.Counts, rep.ByProducer, rep.Truncated, rep.Unaudited)
	rep.Each(func(f Finding) error {
		h := f.Hole
		f.Hole = nil // its address differs
		fmt.Fprintf(&b, "%+v", f)
		if h != nil {
			fmt.Fprintf(&b, " %+v", *h)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

// The single reading reports exactly what the two readings do, on every
// seed of the simulator, honest and unfolded, in random interleavings
// (with and without position lines), which mostly claim records later in
// the file and take the second reading, and in the order the records were
// produced, which one reading settles.
func TestAuditSingleReadingAgrees(t *testing.T) {
	settled, reread := 0, 0
	for seed := range uint64(simSeeds) {
		for _, unfolded := range []bool{false, true} {
			w := gatetest.Simulate(gatetest.Config{Seed: seed, StampSettledOnly: unfolded})
			rng := rand.New(rand.NewPCG(seed, 5))
			scopes := randomScopes(w, rng)
			for order, items := range [][]record.Item{worldItems(w, rng, seed%2 == 0), producedItems(w)} {
				two := New(Config{Names: w.Names})
				one := New(Config{Names: w.Names})
				for _, ch := range w.Channels {
					two.SetHighWatermark(ch, w.Logs[ch].End)
					one.SetHighWatermark(ch, w.Logs[ch].End)
				}
				want := reportText(auditItems(t, two, items, scopes))
				rep, ok := auditOnce(t, one, items, scopes)
				if got := reportText(rep); got != want {
					t.Fatalf("seed %d (unfolded %v, order %d, settled %v): one reading and two disagree\none: %s\ntwo: %s", seed, unfolded, order, ok, got, want)
				}
				if ok {
					settled++
				} else {
					reread++
				}
			}
		}
	}
	t.Logf("%d settled in one reading, %d read twice", settled, reread)
	if settled == 0 || reread == 0 {
		t.Errorf("settled %d, reread %d: want both paths taken", settled, reread)
	}
}

// producedItems is the world's capture in the order its records were
// produced: a causal order.
func producedItems(w *gatetest.World) []record.Item {
	out := make([]record.Item, 0, len(w.Records))
	for _, r := range w.Records {
		name, _ := w.Names.Name(r.Channel.Topic)
		out = append(out, record.Item{Kind: record.KindRecord, Line: int64(len(out) + 1), Topic: name, TopicID: r.Channel.Topic,
			Partition: r.Channel.Partition, Offset: r.Offset, Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(r.Clock)}}})
	}
	return out
}

// A claim on a channel the input shows later is not settled by one
// reading, nor are more claims of records read after them than the auditor
// keeps; a claim on a record read before or after is.
func TestAuditSettled(t *testing.T) {
	for _, tc := range []struct {
		name       string
		build      func(f *fixture)
		maxPending int
		settled    bool
	}{
		{"backward", func(f *fixture) {
			f.rec("a/0", 0, "")
			f.rec("b/0", 0, "a/0=0")
		}, 0, true},
		{"forward record", func(f *fixture) {
			f.rec("a/0", 0, "")
			f.rec("b/0", 0, "a/0=1")
			f.rec("a/0", 1, "")
		}, 0, true},
		{"more forward records than kept", func(f *fixture) {
			f.rec("a/0", 0, "")
			f.rec("b/0", 0, "a/0=1")
			f.rec("b/0", 1, "a/0=2")
			f.rec("a/0", 1, "")
			f.rec("a/0", 2, "")
		}, 1, false},
		{"forward channel", func(f *fixture) {
			f.rec("b/0", 0, "a/0=0")
			f.rec("a/0", 0, "")
		}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "a", "b")
			tc.build(f)
			a := New(Config{Names: f.names})
			if tc.maxPending > 0 {
				a.maxPending = tc.maxPending
			}
			for i := range f.items {
				if err := a.Add(&f.items[i]); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.Settled(); got != tc.settled {
				t.Fatalf("Settled() = %v, want %v", got, tc.settled)
			}
			if _, err := a.Run(nil); (err == nil) != tc.settled {
				t.Fatalf("Run: %v, want an error only when not settled", err)
			}
		})
	}
}
