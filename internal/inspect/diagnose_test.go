package inspect

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// testNames names testChannel(n, p)'s topics t<n>.
func testNames(t *testing.T, ns ...int) *clock.Names {
	t.Helper()
	names := &clock.Names{}
	for _, n := range ns {
		if err := names.Add("t"+string(rune('0'+n)), testChannel(n, 0).Topic); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

func mustGate(t *testing.T, scope []clock.Channel, opts ...gate.Option) *gate.Gate {
	t.Helper()
	g, err := gate.New(scope, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func recv(t *testing.T, g *gate.Gate, ch clock.Channel, off int64, es ...clock.Entry) {
	t.Helper()
	if err := g.Receive(ch, off, clock.MustNew(es...), nil); err != nil {
		t.Fatal(err)
	}
}

// TestClassify gives every cause of a not-received blocker its case: the
// same head (t2/0@0 waiting on t1/0) classified under different facts.
func TestClassify(t *testing.T) {
	a, b := testChannel(1, 0), testChannel(2, 0)
	facts := &record.LogFacts{LogStart: 2, LastStable: 10, HighWatermark: 12,
		// The later-started transaction listed first: the one named is the
		// one pinning the last stable offset, whatever the order and
		// whichever transaction the required offset lies in.
		OpenTransactions: []record.OpenTransaction{{ProducerID: 3, TransactionalID: "late", FirstOffset: 11}, {ProducerID: 7, TransactionalID: "tx", FirstOffset: 10}}}
	withLog := func(lf *record.LogFacts) func(clock.Channel) (*record.LogFacts, bool) {
		return func(ch clock.Channel) (*record.LogFacts, bool) { return lf, ch == a }
	}
	for _, c := range []struct {
		name     string
		required int64
		facts    Facts
		want     Cause
		producer int64 // 0: none named
	}{
		{"below the log start", 1, Facts{Log: withLog(facts)}, CauseTruncated, 0},
		{"in the log", 5, Facts{Log: withLog(facts)}, CauseLagging, 0},
		{"at the last stable offset", 10, Facts{Log: withLog(facts)}, CauseOpenTransaction, 7},
		{"inside the later transaction", 11, Facts{Log: withLog(facts)}, CauseOpenTransaction, 7},
		{"at the high watermark", 12, Facts{Log: withLog(facts)}, CauseBeyondLogEnd, 0},
		{"far beyond", 1 << 40, Facts{Log: withLog(facts)}, CauseBeyondLogEnd, 0},
		{"no last stable offset", 11, Facts{Log: withLog(&record.LogFacts{LastStable: -1, HighWatermark: 12})}, CauseLagging, 0},
		{"offline, within the input", 3, Facts{InputEnd: func(clock.Channel) (int64, bool) { return 4, true }}, CauseNotReceived, 0},
		{"offline, beyond the input", 4, Facts{InputEnd: func(clock.Channel) (int64, bool) { return 4, true }}, CauseBeyondInput, 0},
		{"offline, input read to its end", 3, Facts{Exhausted: true}, CauseBeyondInput, 0},
		{"offline, nothing known", 3, Facts{}, CauseNotReceived, 0},
		{"not read at all", 5, Facts{Log: withLog(facts), Reads: func(ch clock.Channel) bool { return ch != a }}, CauseOutOfScope, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := mustGate(t, []clock.Channel{a, b})
			recv(t, g, b, 0, clock.Entry{Channel: a, Position: c.required})
			bs := g.Blockers(b)
			if len(bs) != 1 {
				t.Fatalf("blockers %v", bs)
			}
			got, txn := c.facts.Classify(g, bs[0])
			if got != c.want {
				t.Errorf("cause %s, want %s", got, c.want)
			}
			if (txn == nil) != (c.producer == 0) || txn != nil && txn.ProducerID != c.producer {
				t.Errorf("producer %+v, want %d", txn, c.producer)
			}
		})
	}

	// A claim on an offset the position passed without a record: a
	// marker. Only a gate that settles on receipt keeps it held.
	for _, receiptOnly := range []bool{false, true} {
		g := mustGate(t, []clock.Channel{a, b}, gate.WithPositionAdvance(!receiptOnly))
		for _, step := range []func() error{
			func() error { return g.Advance(a, 0) },
			func() error { return g.Receive(a, 0, clock.Clock{}, nil) },
			func() error { return g.Receive(b, 0, clock.MustNew(clock.Entry{Channel: a, Position: 1}), nil) },
			func() error { return g.Advance(a, 2) }, // a commit marker at 1
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
		bs := g.Blockers(b)
		if !receiptOnly {
			if bs != nil {
				t.Errorf("position advance left %v", bs)
			}
			continue
		}
		for _, f := range []Facts{{}, {Log: withLog(&record.LogFacts{LastStable: 2, HighWatermark: 2})}} {
			if got, _ := f.Classify(g, bs[0]); got != CauseNotARecord {
				t.Errorf("claim on a marker (facts %v): %s", f.Log != nil, got)
			}
		}
	}
}

// TestDiagnose follows a chain of three to its root, names a forged
// cycle, measures ages and retention headroom, and groups heads by root.
func TestDiagnose(t *testing.T) {
	a, b, c, d := testChannel(1, 0), testChannel(2, 0), testChannel(3, 0), testChannel(4, 0)
	x, y := testChannel(5, 0), testChannel(6, 0)
	names := testNames(t, 1, 2, 3, 4, 5, 6)
	g := mustGate(t, []clock.Channel{a, b, c, d, x, y})
	recv(t, g, a, 0, clock.Entry{Channel: d, Position: 9}) // d's log ends at 5: never written
	recv(t, g, b, 0, clock.Entry{Channel: a, Position: 0})
	recv(t, g, b, 1)
	recv(t, g, c, 0, clock.Entry{Channel: b, Position: 0})
	recv(t, g, x, 0, clock.Entry{Channel: y, Position: 0}) // a forged cycle
	recv(t, g, y, 0, clock.Entry{Channel: x, Position: 0})

	now := time.UnixMilli(10_000_000)
	ts := map[clock.Channel]time.Time{a: now.Add(-90 * time.Minute), b: now.Add(-time.Minute), c: now.Add(-time.Second)}
	retention := &record.Retention{Ms: (2 * time.Hour).Milliseconds(), Bytes: -1, CleanupPolicy: "delete"}
	logs := map[clock.Channel]*record.LogFacts{
		a: {HighWatermark: 1, LastStable: 1, Retention: retention},
		b: {HighWatermark: 2, LastStable: 2, Retention: &record.Retention{Ms: -1, CleanupPolicy: "delete"}},
		d: {HighWatermark: 5, LastStable: 5},
	}
	in := Input{Gate: g, Names: names, Now: now, RetentionWarn: DefaultRetentionWarn,
		Facts:     Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) { lf, ok := logs[ch]; return lf, ok }},
		Timestamp: func(ch clock.Channel, _ int64) (time.Time, bool) { v, ok := ts[ch]; return v, ok },
	}
	rep := Diagnose(in)
	if len(rep.Heads) != 5 || rep.RecordsHeld != 6 {
		t.Fatalf("%d heads, %d held: %+v", len(rep.Heads), rep.RecordsHeld, rep.Heads)
	}
	byName := map[string]Head{}
	for _, h := range rep.Heads {
		byName[h.Channel] = h
	}
	hc := byName["t3/0"]
	if hc.Cause != CauseHeld || hc.Root != "t1/0" || hc.RootOffset != 0 || hc.RootCause != CauseBeyondLogEnd ||
		strings.Join(hc.Chain, " ") != "t3/0 t2/0 t1/0" || hc.Blockers[0].Root != "t1/0" {
		t.Errorf("chain of three: %+v", hc)
	}
	if hc.Age != (Age{D: time.Second, Known: true}) || hc.Retention != nil {
		t.Errorf("t3/0 age %v, headroom %+v (no facts for t3)", hc.Age, hc.Retention)
	}
	ha := byName["t1/0"]
	if ha.Cause != CauseBeyondLogEnd || ha.Root != "t1/0" || len(ha.Chain) != 1 || ha.Blockers[0].Log != logs[d] {
		t.Errorf("root: %+v", ha)
	}
	if r := ha.Retention; r == nil || r.Left != 30*time.Minute || !r.Warn || !r.DeletesAt.Equal(now.Add(30*time.Minute)) {
		t.Errorf("headroom of t1/0: %+v, want 30m left, flagged under 1h", r)
	}
	if hb := byName["t2/0"]; hb.Retention != nil || hb.Queued != 2 {
		t.Errorf("t2/0 keeps records forever: headroom %+v; queued %d", hb.Retention, hb.Queued)
	}
	for _, n := range []string{"t5/0", "t6/0"} {
		h := byName[n]
		if h.Cause != CauseCycle || h.RootCause != CauseCycle || len(h.Cycle) != 2 || h.Blockers[0].Cause != CauseCycle {
			t.Errorf("%s on the cycle: %+v", n, h)
		}
	}
	if len(rep.Cycles) != 1 || len(rep.Cycles[0]) != 2 {
		t.Errorf("cycles %v", rep.Cycles)
	}
	if len(rep.Roots) != 2 {
		t.Fatalf("roots %+v", rep.Roots)
	}
	r := rep.Roots[0]
	if r.Channel != "t1/0" || r.Cause != CauseBeyondLogEnd || strings.Join(r.Heads, " ") != "t1/0@0 t2/0@0 t3/0@0" ||
		!strings.Contains(r.NextStep, "t4/0@9 was never written") || hc.NextStep != r.NextStep {
		t.Errorf("root of the chain: %+v", r)
	}
	if r := rep.Roots[1]; r.Cause != CauseCycle || len(r.Heads) != 2 || !strings.Contains(r.NextStep, "→") {
		t.Errorf("root of the cycle: %+v", r)
	}

	// A lower warning threshold does not flag 30 minutes, nor does 0
	// (off), though the headroom is still told.
	for _, warn := range []time.Duration{10 * time.Minute, 0} {
		in.RetentionWarn = warn
		if h := Diagnose(in).Heads[0]; h.Retention == nil || h.Retention.Warn || h.Retention.Left != 30*time.Minute {
			t.Errorf("30m left under a %v threshold: %+v", warn, h.Retention)
		}
	}
	// Only holds at least a minute old (t3/0's is younger); the cycle's
	// heads have no timestamps, so no age: they are kept, undated, for
	// they cannot be shown younger.
	old := rep.OlderThan(time.Minute)
	var kept []string
	for _, h := range old.Heads {
		kept = append(kept, fmt.Sprintf("%s known=%v", h.Channel, h.Age.Known))
	}
	if strings.Join(kept, " ") != "t1/0 known=true t2/0 known=true t5/0 known=false t6/0 known=false" ||
		len(old.Roots) != 2 || strings.Join(old.Roots[0].Heads, " ") != "t1/0@0 t2/0@0" || len(old.Roots[1].Heads) != 2 {
		t.Errorf("older than 1m: heads %v, roots %+v", kept, old.Roots)
	}
	if rep.OlderThan(0) != rep {
		t.Error("OlderThan(0) changed the report")
	}
}

// TestNextSteps: every root cause has advice that names the place.
func TestNextSteps(t *testing.T) {
	b := &Blocker{Channel: "payments/1", Required: 9,
		Producer: &record.OpenTransaction{ProducerID: 7, TransactionalID: "payments-tx", StartedAt: 1764450000123}}
	for _, c := range Causes() {
		got := NextStep(c, "orders/0@41", b, []string{"a/0", "b/0"})
		if got == "" {
			t.Errorf("%s: no next step", c)
		}
		want := map[Cause]string{
			CauseOpenTransaction: `transactional id "payments-tx", producer 7 (epoch 0), open since 2025-11-29T21:00:00Z`,
			CauseOutOfScope:      "add payments/1 to the scope",
			CauseCycle:           "a/0 → b/0 → a/0",
			CauseUndecodable:     "orders/0@41",
			CauseHeld:            "orders/0@41",
			CauseReady:           "orders/0@41",
		}[c]
		if want == "" {
			want = "payments/1@9"
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", c, got, want)
		}
	}
}

// TestNextStepPinDisagrees: the open transaction named says where it pins
// the channel, and says so when that is not the last stable offset the
// brokers gave (offsets and transactions read at two moments).
func TestNextStepPinDisagrees(t *testing.T) {
	txn := &record.OpenTransaction{ProducerID: 7, FirstOffset: 8}
	for _, c := range []struct {
		lso      int64
		disagree bool
	}{{8, false}, {5, true}} {
		b := &Blocker{Channel: "payments/1", Required: 9, Producer: txn, Log: &record.LogFacts{LastStable: c.lso, HighWatermark: 12}}
		got := NextStep(CauseOpenTransaction, "orders/0@41", b, nil)
		if !strings.Contains(got, "open from 8 ") && !strings.Contains(got, "open from 8,") {
			t.Errorf("LSO %d: %q does not say the transaction is open from 8", c.lso, got)
		}
		if says := strings.Contains(got, "not the last stable offset 5: the offsets and the transactions were read at two moments"); says != c.disagree {
			t.Errorf("LSO %d: %q says the disagreement: %v, want %v", c.lso, got, says, c.disagree)
		}
	}
}

// TestTimesAtTheExtremes: retention of 2^63−1 ms and record timestamps at
// the ends of int64 milliseconds saturate instead of wrapping: a record
// kept "forever" is never due, one from the far past always is, and ages
// keep their sign.
func TestTimesAtTheExtremes(t *testing.T) {
	ch := testChannel(1, 0)
	now := time.UnixMilli(1_700_000_000_000)
	const week = 7 * 24 * time.Hour
	for _, tc := range []struct {
		name        string
		tsMs, retMs int64
		left        time.Duration // wanted headroom
		warn        bool
	}{
		{"forever as the largest number", now.UnixMilli(), math.MaxInt64, math.MaxInt64, false},
		{"forever, from the far past", math.MinInt64, math.MaxInt64, math.MinInt64, true},
		{"a week, from the far future", math.MaxInt64, week.Milliseconds(), math.MaxInt64, false},
		{"a week, from the far past", math.MinInt64, week.Milliseconds(), math.MinInt64, true},
		{"a week, from the epoch", 0, week.Milliseconds(), time.UnixMilli(0).Add(week).Sub(now), true},
		{"a week, written now", now.UnixMilli(), week.Milliseconds(), week, false},
		{"no time at all", now.UnixMilli(), 0, 0, true},
		{"just past Duration's range", now.UnixMilli(), math.MaxInt64/int64(time.Millisecond) + 1, math.MaxInt64, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Facts{Log: func(clock.Channel) (*record.LogFacts, bool) {
				return &record.LogFacts{Retention: &record.Retention{Ms: tc.retMs, Bytes: -1, CleanupPolicy: "delete"}}, true
			}}
			ts := time.UnixMilli(tc.tsMs)
			h := f.headroom(ch, ts, now, time.Hour)
			if h == nil {
				t.Fatal("no headroom")
			}
			if h.Left != tc.left || h.Warn != tc.warn || h.DeletesAt.Before(ts) {
				t.Errorf("left %v warn %v deletes at %v; want left %v warn %v, not before %v", h.Left, h.Warn, h.DeletesAt, tc.left, tc.warn, ts)
			}
			if off := f.headroom(ch, ts, now, 0); off.Warn || off.Left != h.Left {
				t.Errorf("--retention-warn 0 flags: %+v", off)
			}
		})
	}
	for _, tc := range []struct {
		tsMs int64
		want time.Duration
	}{{math.MinInt64, math.MaxInt64}, {math.MaxInt64, math.MinInt64}, {now.UnixMilli() - 1500, 1500 * time.Millisecond}} {
		a, b := testChannel(2, 0), testChannel(3, 0)
		g := mustGate(t, []clock.Channel{a, b})
		recv(t, g, a, 0, clock.Entry{Channel: b, Position: 1})
		rep := Diagnose(Input{Gate: g, Now: now, Names: testNames(t, 2, 3),
			Timestamp: func(clock.Channel, int64) (time.Time, bool) { return time.UnixMilli(tc.tsMs), true }})
		if len(rep.Heads) != 1 || rep.Heads[0].Age != (Age{D: tc.want, Known: true}) {
			t.Errorf("timestamp %d: heads %+v, want age %v", tc.tsMs, rep.Heads, tc.want)
		}
	}
	if got := msDuration(math.MinInt64); got != math.MinInt64 {
		t.Errorf("msDuration(MinInt64) = %v", got)
	}
}

// TestRootPastAHeldQueue is the demo's dangling claim as its ordering
// state holds it: t2/0 holds a head waiting on t3/0, which is in the log
// and not read yet (lagging), and t1/0 holds one claiming t2/0 far past
// its log end. Draining t2/0's queue cannot meet that claim, so t1/0's
// root is its own head, beyond-log-end — never t2/0's lagging head, which
// would tell the operator the process should catch up.
func TestRootPastAHeldQueue(t *testing.T) {
	s, p, o := testChannel(1, 0), testChannel(2, 0), testChannel(3, 0)
	g := mustGate(t, []clock.Channel{s, p, o})
	recv(t, g, p, 5, clock.Entry{Channel: o, Position: 20})
	recv(t, g, s, 3, clock.Entry{Channel: p, Position: 1000027})
	logs := map[clock.Channel]*record.LogFacts{
		s: {LastStable: 10, HighWatermark: 10}, p: {LastStable: 9, HighWatermark: 9}, o: {LastStable: 30, HighWatermark: 30},
	}
	rep := Diagnose(Input{Gate: g, Names: testNames(t, 1, 2, 3), Facts: Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) {
		lf, ok := logs[ch]
		return lf, ok
	}}})
	got := map[string]string{}
	for _, h := range rep.Heads {
		got[h.Channel] = fmt.Sprintf("%s root %s@%d %s", h.Cause, h.Root, h.RootOffset, h.RootCause)
	}
	want := map[string]string{
		"t1/0": "beyond-log-end root t1/0@3 beyond-log-end",
		"t2/0": "lagging root t2/0@5 lagging",
	}
	for ch, w := range want {
		if got[ch] != w {
			t.Errorf("%s: %s, want %s", ch, got[ch], w)
		}
	}
	if len(rep.Roots) != 2 {
		t.Errorf("roots %+v, want one per head", rep.Roots)
	}
}
