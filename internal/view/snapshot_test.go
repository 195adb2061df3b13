package view

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
)

// testChannel is partition p of topic "t<n>".
func testChannel(n int, p int32) clock.Channel {
	var id clock.TopicID
	id[0] = 0x5a
	id[14], id[15] = byte(n>>8), byte(n)
	return clock.Channel{Topic: id, Partition: p}
}

// feeder feeds records to a engine.Replayer built over channels of topics t0…
type feeder struct {
	t   testing.TB
	r   *engine.Replayer
	tr  *Events
	at  time.Time
	ids map[clock.TopicID]string
}

func newFeeder(t testing.TB, scope []clock.Channel, recent int) *feeder {
	t.Helper()
	names := &clock.Names{}
	f := &feeder{t: t, tr: NewEvents(recent), ids: map[clock.TopicID]string{}, at: time.UnixMilli(1_000_000)}
	for _, ch := range scope {
		name := fmt.Sprintf("t%d", int(ch.Topic[14])<<8|int(ch.Topic[15]))
		if err := names.Add(name, ch.Topic); err != nil {
			t.Fatal(err)
		}
		f.ids[ch.Topic] = name
	}
	r, err := engine.New(engine.Config{Scope: scope, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// record feeds a record on ch at off with clock es, one second after the
// last, and returns the events it caused.
func (f *feeder) record(ch clock.Channel, off int64, es ...clock.Entry) []engine.Event {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	it := &record.Item{Kind: record.KindRecord, TopicID: ch.Topic, Partition: ch.Partition, Offset: off,
		Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(es...))}}}
	var evs []engine.Event
	err := f.r.Feed(it, func(ev *engine.Event) error {
		f.tr.Observe(ev, f.at)
		evs = append(evs, *ev)
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

func (f *feeder) snapshot(opts SnapshotOptions) Snapshot {
	opts.Events = f.tr
	return SnapshotOf(f.r, opts)
}

func rowOf(t testing.TB, s Snapshot, name string) ChannelRow {
	t.Helper()
	for _, r := range s.Channels {
		if r.Channel == name {
			return r
		}
	}
	t.Fatalf("no row %s", name)
	return ChannelRow{}
}

func TestSnapshotRowsAndHeads(t *testing.T) {
	a, b, c, d := testChannel(1, 0), testChannel(2, 0), testChannel(3, 0), testChannel(3, 1)
	f := newFeeder(t, []clock.Channel{d, c, b, a}, 10)
	f.record(a, 0)                                       // delivers
	f.record(b, 0, clock.Entry{Channel: a, Position: 4}) // waits t1/0 ≥ 4
	f.record(b, 1)                                       // behind it
	f.record(c, 0, clock.Entry{Channel: b, Position: 1}, clock.Entry{Channel: a, Position: 7})
	now := f.at.Add(500 * time.Millisecond)
	ends := map[clock.Channel]int64{a: 6, b: 2}
	hws := map[clock.Channel]int64{b: 3}
	s := f.snapshot(SnapshotOptions{Title: "watch", Source: "localhost:9092", Now: now,
		LogEnd:        func(ch clock.Channel) (int64, bool) { e, ok := ends[ch]; return e, ok },
		HighWatermark: func(ch clock.Channel) (int64, bool) { e, ok := hws[ch]; return e, ok },
		Facts: inspect.Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) {
			e, ok := ends[ch]
			return &record.LogFacts{LastStable: e, HighWatermark: max(e, hws[ch])}, ok
		}}})

	if s.Title != "watch" || s.Source != "localhost:9092" || s.State != engine.StateRunning || !s.Taken.Equal(now) {
		t.Fatalf("title/source/state/taken: %q %q %v %v", s.Title, s.Source, s.State, s.Taken)
	}
	if s.Scope != 4 || s.Received != 4 || s.Delivered != 1 || s.Held != 3 || s.HeldChannels != 2 {
		t.Fatalf("counters: %+v", s)
	}
	var names []string
	for _, r := range s.Channels {
		names = append(names, r.Channel)
	}
	if want := []string{"t1/0", "t2/0", "t3/0", "t3/1"}; !slices.Equal(names, want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
	rb := rowOf(t, s, "t2/0")
	want := ChannelRow{Channel: "t2/0", TopicID: b.Topic.String(), Settled: -1, ReceivedUpTo: 1, LogEnd: 2,
		Held: 2, HeadOffset: 0, HeadAge: inspect.Age{D: 2500 * time.Millisecond, Known: true}, Blocked: true,
		Waits: "waits t1/0 ≥ 4, settled 0", Head: 0, HighWatermark: 3}
	if !reflect.DeepEqual(rb, want) {
		t.Fatalf("row t2/0:\n got %+v\nwant %+v", rb, want)
	}
	if rd := rowOf(t, s, "t3/1"); rd.Held != 0 || rd.Head != -1 || rd.Waits != "" || rd.Settled != -1 || rd.LogEnd != -1 || rd.HighWatermark != -1 {
		t.Fatalf("row t3/1: %+v", rd)
	}
	if s.OldestHold != (inspect.Age{D: 2500 * time.Millisecond, Known: true}) {
		t.Fatalf("oldest hold %v", s.OldestHold)
	}

	rc := rowOf(t, s, "t3/0")
	if rc.Waits != "waits t1/0 ≥ 7, settled 0 (+1)" {
		t.Fatalf("t3/0 waits %q", rc.Waits)
	}
	hc := s.Heads[rc.Head]
	wantHead := HeadDetail{
		Head: inspect.Head{
			At: c, Channel: "t3/0", TopicID: c.Topic.String(), Offset: 0, Age: inspect.Age{D: 500 * time.Millisecond, Known: true},
			Queued: 1, Clock: "t1/0=7,t2/0=1", ClockEntries: 2, KeySize: -1, ValueSize: -1,
			Blockers: []inspect.Blocker{
				{Channel: "t1/0", Required: 7, Settled: 0, Cause: inspect.CauseBeyondLogEnd, Log: &record.LogFacts{LastStable: 6, HighWatermark: 6}},
				{Channel: "t2/0", Required: 1, Settled: -1, Cause: inspect.CauseHeld, Log: &record.LogFacts{LastStable: 2, HighWatermark: 3}, Root: "t2/0"},
			},
			Chain: []string{"t3/0", "t2/0"}, ChainLen: 2, Root: "t2/0", RootOffset: 0,
			// Its own cause is the most telling blocker's; its chain's root
			// t2/0 waits t1/0 ≥ 4 below the log end: lagging.
			Cause: inspect.CauseBeyondLogEnd, RootCause: inspect.CauseLagging,
		},
		RootWaits: []string{"", "waits t1/0 ≥ 4, settled 0"},
	}
	if !reflect.DeepEqual(hc, wantHead) {
		t.Fatalf("head t3/0:\n got %+v\nwant %+v", hc, wantHead)
	}
	if k := s.Heads[rb.Head].Blockers[0].Cause; k != inspect.CauseLagging {
		t.Fatalf("t2/0 waits t1/0 ≥ 4 below its log end 6: kind %v, want lagging", k)
	}
	if s.Stamp != "t1/0=7,t2/0=1" || s.StampEntries != 2 {
		t.Fatalf("stamp %q (%d)", s.Stamp, s.StampEntries)
	}
	wantRecent := []string{
		"deliver #1 t1/0@0",
		"hold t2/0@0 waits t1/0 ≥ 4, settled 0",
		"hold t2/0@1 behind @0",
		"hold t3/0@0 waits t1/0 ≥ 7, settled 0 (+1)",
	}
	var got []string
	for _, e := range s.Recent {
		got = append(got, e.Text)
	}
	if !slices.Equal(got, wantRecent) {
		t.Fatalf("recent %q, want %q", got, wantRecent)
	}

	// Without log ends: not received; without an Events: no ages, no events.
	s = SnapshotOf(f.r, SnapshotOptions{})
	if k := s.Heads[0].Blockers[0].Cause; k != inspect.CauseNotReceived {
		t.Fatalf("kind without log end %v", k)
	}
	if s.OldestHold.Known || len(s.Recent) != 0 {
		t.Fatalf("no Events: oldest %v, recent %v", s.OldestHold, s.Recent)
	}
	s = SnapshotOf(f.r, SnapshotOptions{Facts: inspect.Facts{Exhausted: true}})
	if k := s.Heads[0].Blockers[0].Cause; k != inspect.CauseBeyondInput {
		t.Fatalf("kind when exhausted %v", k)
	}
}

func TestSnapshotUndecodable(t *testing.T) {
	a := testChannel(1, 0)
	names := &clock.Names{}
	names.Add("t1", a.Topic)
	r, _ := engine.New(engine.Config{Scope: []clock.Channel{a}, Names: names, Undecodable: gate.HoldUndecodable})
	it := &record.Item{Kind: record.KindRecord, TopicID: a.Topic, Offset: 3, Headers: []clock.Header{{Key: clock.HeaderCauses, Value: []byte{2, 0}}}}
	if err := r.Feed(it, func(*engine.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s := SnapshotOf(r, SnapshotOptions{})
	row := s.Channels[0]
	if !row.Blocked || row.Undecodable != "unknown-version" || row.Waits != "undecodable (unknown-version)" {
		t.Fatalf("row %+v", row)
	}
	if h := s.Heads[0]; h.Undecodable != "unknown-version" || len(h.Blockers) != 0 || h.Clock != "{}" || h.ChainLen != 1 {
		t.Fatalf("head %+v", h)
	}
}

// TestSnapshotChains holds the chains and roots of a snapshot against
// gate.WaitChain on a wait graph with a long chain, trees joining it, a
// cycle and a tail running into the cycle.
func TestSnapshotChains(t *testing.T) {
	const n = 60
	var scope []clock.Channel
	for k := range n {
		scope = append(scope, testChannel(k, 0))
	}
	f := newFeeder(t, scope, 0)
	need := func(k int) clock.Entry { return clock.Entry{Channel: scope[k], Position: 0} }
	// 0 ← 1 ← … ← 39: a chain of 40 (k waits k−1); 0 waits 59, never fed.
	f.record(scope[0], 0, need(59))
	for k := 1; k < 40; k++ {
		f.record(scope[k], 0, need(k-1))
	}
	// 40 and 41 join the chain in the middle.
	f.record(scope[40], 0, need(20))
	f.record(scope[41], 0, need(40), need(7))
	// 42 → 43 → 44 → 42 is a cycle, 45 → 46 → 43 runs into it.
	f.record(scope[42], 0, need(43))
	f.record(scope[43], 0, need(44))
	f.record(scope[44], 0, need(42))
	f.record(scope[46], 0, need(43))
	f.record(scope[45], 0, need(46))

	s := f.snapshot(SnapshotOptions{})
	g := f.r.Gate()
	if s.HeldChannels != 47 {
		t.Fatalf("held channels %d", s.HeldChannels)
	}
	for _, row := range s.Channels {
		if row.Held == 0 {
			continue
		}
		ch, err := f.r.Names().ParseChannel(row.Channel)
		if err != nil {
			t.Fatal(err)
		}
		chain := g.WaitChain(ch)
		h := s.Heads[row.Head]
		if h.ChainLen != len(chain) {
			t.Fatalf("%s: chain length %d, gate says %d", row.Channel, h.ChainLen, len(chain))
		}
		var want []string
		for _, c := range chain {
			want = append(want, f.r.Names().Channel(c))
		}
		if len(want) > maxChain {
			want = append(want[:maxChain-1], want[len(want)-1])
		}
		if !slices.Equal(h.Chain, want) {
			t.Fatalf("%s: chain %v, want %v", row.Channel, h.Chain, want)
		}
		cyclicSet := []string{"t42/0", "t43/0", "t44/0", "t45/0", "t46/0"}
		cyclic := slices.Contains(cyclicSet, row.Channel)
		if (h.Cycle != nil) != cyclic {
			t.Fatalf("%s: cycle %v", row.Channel, h.Cycle)
		}
		for _, b := range h.Blockers {
			if b.Cause != inspect.CauseHeld && b.Cause != inspect.CauseCycle {
				continue
			}
			if (b.Cause == inspect.CauseCycle) != slices.Contains(cyclicSet, b.Channel) {
				t.Fatalf("%s: blocker %s cause %v", row.Channel, b.Channel, b.Cause)
			}
			bc, _ := f.r.Names().ParseChannel(b.Channel)
			bchain := g.WaitChain(bc)
			if root := f.r.Names().Channel(bchain[len(bchain)-1]); b.Root != root {
				t.Fatalf("%s: blocker %s root %s, gate says %s", row.Channel, b.Channel, b.Root, root)
			}
		}
	}
	if want := [][]string{{"t42/0", "t43/0", "t44/0"}}; !reflect.DeepEqual(s.Cycles, want) {
		t.Fatalf("cycles %v", s.Cycles)
	}
	if h := s.Heads[rowOf(t, s, "t39/0").Head]; h.ChainLen != 40 || h.Chain[maxChain-1] != "t0/0" {
		t.Fatalf("long chain: %d %v", h.ChainLen, h.Chain)
	}
}

func TestSnapshotCaps(t *testing.T) {
	var scope []clock.Channel
	for k := range 6 {
		scope = append(scope, testChannel(k, 0))
	}
	f := newFeeder(t, scope, 0)
	es := make([]clock.Entry, 0, 5)
	for k := 1; k < 6; k++ {
		es = append(es, clock.Entry{Channel: scope[k], Position: 3})
	}
	f.record(scope[4], 0, clock.Entry{Channel: scope[5], Position: 1})
	f.record(scope[5], 0, clock.Entry{Channel: scope[0], Position: 2})
	f.record(scope[0], 0, es...)
	s := f.snapshot(SnapshotOptions{MaxRows: 4, MaxHeads: 2, MaxClockEntries: 2, MaxStampEntries: 3})
	var names []string
	for _, r := range s.Channels {
		names = append(names, r.Channel)
	}
	// Held channels first (t0, t4, t5), then the rest in order, shown in
	// display order.
	if want := []string{"t0/0", "t1/0", "t4/0", "t5/0"}; !slices.Equal(names, want) || s.RowsOmitted != 2 {
		t.Fatalf("rows %v (omitted %d)", names, s.RowsOmitted)
	}
	if s.HeldChannels != 3 || len(s.Heads) != 2 || s.HeadsOmitted != 1 || rowOf(t, s, "t5/0").Head != -1 {
		t.Fatalf("heads %d omitted %d", len(s.Heads), s.HeadsOmitted)
	}
	if h := s.Heads[0]; h.Clock != "t1/0=3,t2/0=3, … (+3)" || h.ClockEntries != 5 {
		t.Fatalf("clock %q (%d)", h.Clock, h.ClockEntries)
	}
	if s.StampEntries != 6 || s.Stamp != "t0/0=2,t1/0=3,t2/0=3, … (+3)" {
		t.Fatalf("stamp %q (%d)", s.Stamp, s.StampEntries)
	}
}

func TestEvents(t *testing.T) {
	a := testChannel(1, 0)
	tr := NewEvents(3)
	t0 := time.Unix(100, 0)
	tr.Observe(&engine.Event{Type: engine.EventHold, Channel: a, Offset: 4, Behind: -1}, t0)
	tr.Observe(&engine.Event{Type: engine.EventHold, Channel: a, Offset: 5, Behind: 4}, time.Time{})
	tr.Observe(&engine.Event{Type: engine.EventHold, Channel: a, Offset: 6, Behind: 4}, t0.Add(time.Second))
	if at, ok := tr.HeldSince(a, 4); !ok || !at.Equal(t0) {
		t.Fatalf("HeldSince(4) = %v %v", at, ok)
	}
	if _, ok := tr.HeldSince(a, 5); ok {
		t.Fatal("HeldSince of a record received at an unknown time is known")
	}
	tr.Observe(&engine.Event{Type: engine.EventDeliver, Seq: 1, Channel: a, Offset: 4}, t0)
	if _, ok := tr.HeldSince(a, 4); ok {
		t.Fatal("a delivered record is still held")
	}
	if at, ok := tr.HeldSince(a, 6); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("HeldSince(6) = %v %v", at, ok)
	}
	tr.lab.Names = &clock.Names{}
	tr.Stop(&engine.InputError{Line: 9, Channel: "t1/0", Offset: 7, Code: "truncated", Err: fmt.Errorf("truncated")}, t0)
	var got []string
	for _, e := range tr.recentEvents() {
		got = append(got, e.Kind)
	}
	// The ring keeps the last three, oldest first.
	if want := []string{"hold", "deliver", "fail-closed"}; !slices.Equal(got, want) {
		t.Fatalf("recent kinds %v, want %v", got, want)
	}
	// An Events without a ring still tracks holds.
	tr = &Events{}
	tr.Observe(&engine.Event{Type: engine.EventHold, Channel: a, Offset: 1, Behind: -1}, t0)
	if _, ok := tr.HeldSince(a, 1); !ok {
		t.Fatal("zero Events lost a hold")
	}
}

// TestEventsQueueNeverDraining: a channel whose hold queue never empties
// (each delivery leaves the next record held) keeps room for what it holds,
// not for everything it ever held, and still knows when each was received.
func TestEventsQueueNeverDraining(t *testing.T) {
	a := testChannel(1, 0)
	tr := NewEvents(0)
	t0 := time.Unix(100, 0)
	tr.Observe(&engine.Event{Type: engine.EventHold, Channel: a, Offset: 0, Behind: -1}, t0)
	const n = 100_000
	for off := int64(1); off <= n; off++ {
		tr.Observe(&engine.Event{Type: engine.EventHold, Channel: a, Offset: off, Behind: off - 1}, t0.Add(time.Duration(off)))
		tr.Observe(&engine.Event{Type: engine.EventDeliver, Channel: a, Offset: off - 1}, t0)
	}
	q := tr.holds[a]
	if held := len(q.offs) - q.head; held != 1 {
		t.Fatalf("%d held, want 1", held)
	}
	if cap(q.offs) > 16 || cap(q.ats) > 16 {
		t.Errorf("after %d deliveries the queue keeps room for %d offsets and %d times", n, cap(q.offs), cap(q.ats))
	}
	if at, ok := tr.HeldSince(a, n); !ok || !at.Equal(t0.Add(n)) {
		t.Errorf("HeldSince(%d) = %v %v", n, at, ok)
	}
}

func TestRateMeter(t *testing.T) {
	var m RateMeter
	t0 := time.Unix(0, 0)
	if r, d := m.Sample(t0, 0, 0); r != 0 || d != 0 {
		t.Fatalf("first sample %v %v", r, d)
	}
	var r, d float64
	for k := 1; k <= 100; k++ {
		r, d = m.Sample(t0.Add(time.Duration(k)*100*time.Millisecond), int64(k)*1000, int64(k)*500)
	}
	if math.Abs(r-10000) > 1 || math.Abs(d-5000) > 1 {
		t.Fatalf("steady rates %v %v, want 10000 5000", r, d)
	}
	if r2, _ := m.Sample(t0.Add(10*time.Second), 100000, 50000); r2 != r {
		t.Fatalf("a sample at the same instant changed the rate: %v", r2)
	}
}

func BenchmarkSnapshot(b *testing.B) {
	b.Run("stamp=every", func(b *testing.B) { benchSnapshot(b, 0) })
	b.Run("stamp=1s", func(b *testing.B) { benchSnapshot(b, time.Second) })
}

func benchSnapshot(b *testing.B, stampEvery time.Duration) {
	f := benchFeeder(b)
	ends := map[clock.Channel]int64{}
	for _, ch := range f.r.Gate().Scope() {
		ends[ch] = 3
	}
	opts := SnapshotOptions{Title: "bench", Source: "bench", Now: f.at, Rates: &RateMeter{}, StampEvery: stampEvery,
		LogEnd: func(ch clock.Channel) (int64, bool) { e, ok := ends[ch]; return e, ok }}
	s := f.snapshot(opts)
	if s.HeldChannels != 1000 || len(s.Heads) != 1000 || len(s.Channels) != 10000 || s.StampEntries != 9090 {
		b.Fatalf("bench state: %d held channels, %d heads, %d rows, %d stamp entries", s.HeldChannels, len(s.Heads), len(s.Channels), s.StampEntries)
	}
	b.ReportAllocs()
	for b.Loop() {
		opts.Now = opts.Now.Add(100 * time.Millisecond)
		f.snapshot(opts)
	}
}

func benchFeeder(b *testing.B) *feeder {
	const topics, parts = 100, 100
	scope := make([]clock.Channel, 0, topics*parts)
	for k := range topics * parts {
		scope = append(scope, testChannel(k/parts, int32(k%parts)))
	}
	f := newFeeder(b, scope, 50)
	e := func(k int, pos int64) clock.Entry { return clock.Entry{Channel: scope[k], Position: pos} }
	for k := 1000; k < len(scope); k++ {
		var es []clock.Entry
		if k >= 1002 {
			es = []clock.Entry{e(k-1, 0), e(k-2, 0)}
		}
		f.record(scope[k], 0, es...)
	}
	for k := range 1000 {
		switch {
		case k < 900 || k%10 == 0:
			f.record(scope[k], 0, e(1000+k, 5), e(2000+k, 0), e(3000+k, 0), e(4000+k, 0))
		default:
			f.record(scope[k], 0, e(k-1, 0), e(2000+k, 0), e(3000+k, 0), e(4000+k, 0))
		}
		f.record(scope[k], 1)
	}
	return f
}

// TestSnapshotAgesAndCauseCounts: a head received late has two ages, since
// it was received (HeadAge) and since its timestamp (HeadWritten); heads
// are counted by their own cause, a chained head as held; and a blocker
// on a channel that settled nothing yet says "start", not "-".
func TestSnapshotAgesAndCauseCounts(t *testing.T) {
	a, b, c := testChannel(1, 0), testChannel(2, 0), testChannel(3, 0)
	f := newFeeder(t, []clock.Channel{a, b, c}, 10)
	written := f.at.Add(-time.Minute) // a minute before it is received
	it := &record.Item{Kind: record.KindRecord, TopicID: b.Topic, Partition: b.Partition, Offset: 0,
		Timestamp: written.UnixMilli(), HasTimestamp: true,
		Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: a, Position: 9}))}}}
	if err := f.r.Feed(it, func(ev *engine.Event) error { f.tr.Observe(ev, f.at); return nil }); err != nil {
		t.Fatal(err)
	}
	f.record(c, 0, clock.Entry{Channel: b, Position: 0}) // waits behind t2/0, received a second later
	now := f.at.Add(2 * time.Second)
	ends := map[clock.Channel]int64{a: 20, b: 1, c: 1}
	s := f.snapshot(SnapshotOptions{Now: now, Facts: inspect.Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) {
		e, ok := ends[ch]
		return &record.LogFacts{LastStable: e, HighWatermark: e}, ok
	}}})
	rb := rowOf(t, s, "t2/0")
	if want := (inspect.Age{D: 3 * time.Second, Known: true}); rb.HeadAge != want {
		t.Errorf("t2/0 held for %v, want %v (since received)", rb.HeadAge, want)
	}
	if want := (inspect.Age{D: time.Minute + 3*time.Second, Known: true}); rb.HeadWritten != want || s.Heads[rb.Head].Written != want {
		t.Errorf("t2/0 written %v (detail %v), want %v (since its timestamp)", rb.HeadWritten, s.Heads[rb.Head].Written, want)
	}
	if rc := rowOf(t, s, "t3/0"); rc.HeadWritten.Known || !rc.HeadAge.Known {
		t.Errorf("t3/0 without a timestamp: written %v, held for %v", rc.HeadWritten, rc.HeadAge)
	}
	if rb.Waits != "waits t1/0 ≥ 9, settled start" {
		t.Errorf("t2/0 waits %q", rb.Waits)
	}
	want := []CauseCount{{inspect.CauseLagging, 1}, {inspect.CauseHeld, 1}}
	if got := s.CauseCounts(); !reflect.DeepEqual(got, want) {
		t.Errorf("cause counts %v, want %v", got, want)
	}
	if rc := rowOf(t, s, "t3/0"); s.Heads[rc.Head].RootCause != inspect.CauseLagging || s.Heads[rc.Head].MostTelling() != inspect.CauseLagging {
		t.Errorf("t3/0 root cause %v, most telling %v", s.Heads[rc.Head].RootCause, s.Heads[rc.Head].MostTelling())
	}
}

func TestMostTelling(t *testing.T) {
	for _, c := range []struct{ own, root, want inspect.Cause }{
		{inspect.CauseHeld, inspect.CauseLagging, inspect.CauseLagging},                            // behind a lagging root
		{inspect.CauseBeyondLogEnd, inspect.CauseLagging, inspect.CauseBeyondLogEnd},               // beyond the end of a held channel
		{inspect.CauseLagging, inspect.CauseBeyondLogEnd, inspect.CauseBeyondLogEnd},               // also behind a root that never delivers
		{inspect.CauseOpenTransaction, inspect.CauseOpenTransaction, inspect.CauseOpenTransaction}, // its own root
		{inspect.CauseUndecodable, "", inspect.CauseUndecodable},
	} {
		h := HeadDetail{Head: inspect.Head{Cause: c.own, RootCause: c.root}}
		if got := h.MostTelling(); got != c.want {
			t.Errorf("own %s, root %s: %s, want %s", c.own, c.root, got, c.want)
		}
	}
}

// TestEventsGapEvent: a gap read past (--allow-gaps) is a recent event of
// its own kind, naming the channel, the deleted offsets and where the read
// went on, in order among the replay's events.
func TestEventsGapEvent(t *testing.T) {
	names := &clock.Names{}
	id := clock.TopicID{1}
	if err := names.Add("orders", id); err != nil {
		t.Fatal(err)
	}
	tr := NewEvents(3)
	tr.lab.Names = names
	ch := clock.Channel{Topic: id, Partition: 0}
	tr.Observe(&engine.Event{Type: engine.EventDeliver, Seq: 1, Channel: ch, Offset: 4}, time.Time{})
	tr.ObserveGap(ch, 5, 100, time.Unix(7, 0))
	got := tr.recentEvents()
	want := RecentEvent{Kind: "gap", Text: "gap orders/0: offsets 5 to 99 deleted before they were read; read on at 100", At: time.Unix(7, 0), Repeats: 1}
	if len(got) != 2 || got[0].Kind != "deliver" || got[1] != want {
		t.Errorf("recent %+v, want a delivery then %+v", got, want)
	}
}

// BenchmarkSnapshotWideRoot is a snapshot of 2 000 heads that wait behind
// one root whose clock has 5 000 unmet entries: each head's root cause is
// that root's, classified once per snapshot, not once per head.
func BenchmarkSnapshotWideRoot(b *testing.B) {
	const heads, wide = 2000, 5000
	scope := make([]clock.Channel, 0, 1+heads+wide)
	for k := range 1 + heads + wide {
		scope = append(scope, testChannel(k/100, int32(k%100)))
	}
	f := newFeeder(b, scope, 10)
	var es []clock.Entry
	for k := 1 + heads; k < len(scope); k++ {
		es = append(es, clock.Entry{Channel: scope[k], Position: 3})
	}
	f.record(scope[0], 0, es...)
	for k := 1; k <= heads; k++ {
		f.record(scope[k], 0, clock.Entry{Channel: scope[0], Position: 0})
	}
	opts := SnapshotOptions{Title: "bench", Source: "bench", Now: f.at}
	if s := f.snapshot(opts); len(s.Heads) != 1+heads-1 && len(s.Heads) != DefaultMaxHeads {
		b.Fatalf("%d heads", len(s.Heads))
	}
	b.ReportAllocs()
	for b.Loop() {
		f.snapshot(opts)
	}
}

// TestSnapshotPinningTransaction: the live view's blocker names the open
// transaction pinning the last stable offset (the later one listed first),
// and flags its first offset disagreeing with the last stable offset.
func TestSnapshotPinningTransaction(t *testing.T) {
	a, b := testChannel(1, 0), testChannel(2, 0)
	for _, c := range []struct {
		lso      int64
		disagree bool
	}{{4, false}, {3, true}} {
		f := newFeeder(t, []clock.Channel{a, b}, 10)
		f.record(b, 0, clock.Entry{Channel: a, Position: 6}) // in the later transaction
		lf := &record.LogFacts{LastStable: c.lso, HighWatermark: 8, OpenTransactions: []record.OpenTransaction{
			{ProducerID: 9, TransactionalID: "late", FirstOffset: 5}, {ProducerID: 2, TransactionalID: "early", FirstOffset: 4}}}
		s := f.snapshot(SnapshotOptions{Now: f.at, Facts: inspect.Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) { return lf, ch == a }}})
		bd := s.Heads[rowOf(t, s, "t2/0").Head].Blockers[0]
		if bd.Cause != inspect.CauseOpenTransaction || bd.Producer == nil || bd.Producer.TransactionalID != "early" || (bd.Log != nil && !bd.Log.PinAgrees(bd.Producer)) != c.disagree {
			t.Errorf("LSO %d: blocker %+v (producer %+v), want open-transaction by early, disagreeing %v", c.lso, bd, bd.Producer, c.disagree)
		}
	}
}
