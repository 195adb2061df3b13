package audit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// fixture builds the items of a capture by hand: records stamped with
// clocks in text form, and position lines.
type fixture struct {
	t     *testing.T
	names *clock.Names
	items []record.Item
	hwm   map[string]int64
}

func newFixture(t *testing.T, topics ...string) *fixture {
	f := &fixture{t: t, names: &clock.Names{}, hwm: map[string]int64{}}
	for i, name := range topics {
		var id clock.TopicID
		id[0], id[15] = 0xa0, byte(i+1)
		if err := f.names.Add(name, id); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) channel(s string) clock.Channel {
	ch, err := f.names.ParseChannel(s)
	if err != nil {
		f.t.Fatal(err)
	}
	return ch
}

func (f *fixture) item(kind record.Kind, ch string, off int64) *record.Item {
	c := f.channel(ch)
	name, _ := f.names.Name(c.Topic)
	f.items = append(f.items, record.Item{Kind: kind, Line: int64(len(f.items) + 1), Topic: name, TopicID: c.Topic, Partition: c.Partition, Offset: off})
	return &f.items[len(f.items)-1]
}

// rec adds a record at off on ch stamped with clk ("" for no header).
func (f *fixture) rec(ch string, off int64, clk string) {
	it := f.item(record.KindRecord, ch, off)
	if clk == "" {
		return
	}
	c, err := f.names.Parse(clk)
	if err != nil {
		f.t.Fatal(err)
	}
	it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(c)}}
}

// rawRec adds a record whose parsley.causes header is value.
func (f *fixture) rawRec(ch string, off int64, value []byte) {
	it := f.item(record.KindRecord, ch, off)
	it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: value}}
}

func (f *fixture) pos(ch string, p int64) { f.item(record.KindPosition, ch, p) }

// audit runs the audit for scopes, each "NAME: CH,CH" or "CH,CH".
func (f *fixture) audit(scopes ...string) *Report {
	return f.auditMax(0, scopes...)
}

func (f *fixture) auditMax(max int, scopes ...string) *Report {
	var ss []Scope
	for _, s := range scopes {
		var sc Scope
		if name, list, ok := strings.Cut(s, ":"); ok {
			sc.Name, s = name, list
		}
		for _, ch := range strings.Split(s, ",") {
			sc.Channels = append(sc.Channels, f.channel(strings.TrimSpace(ch)))
		}
		ss = append(ss, sc)
	}
	auditor := func() *Auditor {
		a := New(Config{Names: f.names, MaxFindings: max})
		for ch, h := range f.hwm {
			a.SetHighWatermark(f.channel(ch), h)
		}
		return a
	}
	rep := auditItems(f.t, auditor(), f.items, ss)
	// Every fixture is also audited in one reading (Add), which must
	// report the same.
	if one, _ := auditOnce(f.t, auditor(), f.items, ss); reportText(one) != reportText(rep) {
		f.t.Fatalf("one reading and two disagree\none: %s\ntwo: %s", reportText(one), reportText(rep))
	}
	return rep
}

// describe prints a finding compactly for comparisons.
func (f *fixture) describe(x Finding) string {
	ref := func(r RecordRef) string { return fmt.Sprintf("%s@%d", f.names.Channel(r.Channel), r.Offset) }
	s := fmt.Sprintf("%v %s", x.Kind, ref(x.Record))
	switch x.Kind {
	case FindingHole:
		var p []string
		for _, h := range x.Hole.Path {
			p = append(p, ref(h.Record))
		}
		s += fmt.Sprintf(" misses %s (%d, from %s) claims %d waits %d by %s via %s",
			ref(x.Hole.Ancestor), x.Hole.Missed, ref(x.Hole.FirstMissed), x.Hole.Claims, x.Hole.WaitsFor,
			f.names.Channel(x.Producer), strings.Join(p, " > "))
	case FindingWaitCycle:
		for _, st := range x.Cycle {
			s += fmt.Sprintf(" [%s waits %s=%d]", ref(st.Record), f.names.Channel(st.Waits.Channel), st.Waits.Position)
		}
	case FindingUndecodable:
		s += " " + string(x.Code)
	default:
		s += fmt.Sprintf(" claims %s=%d", f.names.Channel(x.Claim.Channel), x.Claim.Position)
	}
	if x.Scope != "" {
		s = x.Scope + ": " + s
	}
	return s
}

func (f *fixture) want(rep *Report, want ...string) {
	f.t.Helper()
	var got []string
	for _, x := range all(rep) {
		got = append(got, f.describe(x))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		f.t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n := 0
	for _, c := range rep.Counts {
		n += c
	}
	if n != rep.Len() {
		f.t.Errorf("counts %v add up to %d, not %d findings", rep.Counts, n, rep.Len())
	}
	for _, x := range all(rep) {
		rep.ByProducer[x.Kind][x.Producer]--
	}
	for k, m := range rep.ByProducer {
		for ch, n := range m {
			if n != 0 {
				f.t.Errorf("%v findings by producer %s: off by %d", k, f.names.Channel(ch), n)
			}
		}
	}
}

// A hole two unconsumed hops deep: v stamps without folding u's clock, so
// c/0, stamped honestly from what it received (v's clock), hides a/0 behind
// v and u.
func TestAuditHoleTwoHopsDeep(t *testing.T) {
	f := newFixture(t, "a", "u", "v", "c")
	f.rec("a/0", 0, "")
	f.rec("a/0", 1, "")
	f.rec("u/0", 0, "a/0=1")
	f.rec("v/0", 0, "u/0=0") // unfolded: claims u, drops u's claim on a
	f.rec("c/0", 0, "v/0=0,u/0=0")
	f.rec("c/0", 1, "v/0=0,u/0=0,a/0=0") // waits for a/0@0 only: a/0@1 still missed
	f.rec("c/0", 2, "v/0=0,u/0=0,a/0=1")
	rep := f.audit("a/0,c/0")
	f.want(rep,
		"hole c/0@0 misses a/0@1 (2, from a/0@0) claims -1 waits -1 by v/0 via c/0@0 > v/0@0 > u/0@0 > a/0@1",
		"hole c/0@1 misses a/0@1 (1, from a/0@1) claims 0 waits 0 by v/0 via c/0@1 > v/0@0 > u/0@0 > a/0@1",
	)
	if p := all(rep)[0].Hole.Path; p[1].Via != HopClaims || p[1].Claim != 0 || p[3].Claim != 1 {
		t.Errorf("path hops %+v: want claims with the claimed positions", p)
	}
	// Rooted at c/0@0's claim on v/0, where its causes leave the scope.
	if r := all(rep)[0].Root(); !r.Claimed || r.Record.Channel != f.channel("c/0") || r.Record.Offset != 0 || r.Claim != (clock.Entry{Channel: f.channel("v/0"), Position: 0}) {
		t.Errorf("root %+v: want c/0@0 claiming v/0=0", r)
	}
	// A node consuming u too waits for u/0@0, and so for a/0@1.
	f.want(f.audit("a/0,u/0,c/0"))
	// One consuming v does not: v itself has the hole.
	f.want(f.audit("n: a/0,v/0,c/0"),
		"n: hole c/0@0 misses a/0@1 (2, from a/0@0) claims -1 waits -1 by v/0 via c/0@0 > v/0@0 > u/0@0 > a/0@1",
		"n: hole c/0@1 misses a/0@1 (1, from a/0@1) claims 0 waits 0 by v/0 via c/0@1 > v/0@0 > u/0@0 > a/0@1",
		"n: hole v/0@0 misses a/0@1 (2, from a/0@0) claims -1 waits -1 by v/0 via v/0@0 > u/0@0 > a/0@1",
	)
	// Every channel in scope: nothing can hide.
	f.want(f.audit())
}

// The same shape, stamped honestly (v folds u's clock): no hole at any
// depth, for any scope.
func TestAuditHonestChainHasNoHole(t *testing.T) {
	f := newFixture(t, "a", "u", "v", "c")
	f.rec("a/0", 0, "")
	f.rec("u/0", 0, "a/0=0")
	f.rec("v/0", 0, "u/0=0,a/0=0")
	f.rec("c/0", 0, "v/0=0,u/0=0,a/0=0")
	for _, scope := range []string{"a/0,c/0", "a/0,v/0", "a/0,u/0", "c/0", "a/0,c/0,v/0"} {
		f.want(f.audit(scope))
	}
}

// A hole inherited along the record's own channel: c/0@1 claims nothing,
// but follows c/0@0, whose unconsumed cause u/0@0 claims a/0@0 — and the
// gate only makes c/0@1 wait for what c/0@0 waits for.
func TestAuditHoleThroughOwnChannel(t *testing.T) {
	f := newFixture(t, "a", "u", "c")
	f.rec("a/0", 0, "")
	f.rec("u/0", 0, "a/0=0")
	f.rec("c/0", 0, "u/0=0")
	f.rec("c/0", 1, "")
	f.want(f.audit("a/0,c/0"),
		"hole c/0@0 misses a/0@0 (1, from a/0@0) claims -1 waits -1 by c/0 via c/0@0 > u/0@0 > a/0@0",
		"hole c/0@1 misses a/0@0 (1, from a/0@0) claims -1 waits -1 by c/0 via c/0@1 > c/0@0 > u/0@0 > a/0@0",
	)
}

func TestAuditNotARecord(t *testing.T) {
	f := newFixture(t, "a", "c")
	f.pos("a/0", 0)
	f.rec("a/0", 0, "")
	f.pos("a/0", 3) // 1 and 2: a commit marker and an aborted record, say
	f.rec("a/0", 3, "")
	f.rec("a/0", 5, "") // a bare gap at 4 proves nothing
	f.pos("a/0", 8)     // 6 and 7 carried no record
	f.rec("c/0", 0, "a/0=2")
	f.rec("c/0", 1, "a/0=3")
	f.rec("c/0", 2, "a/0=4")
	f.rec("c/0", 3, "a/0=7")
	f.rec("c/0", 4, "a/0=8") // at the range end: nothing is known there
	f.want(f.audit(), "not-a-record c/0@0 claims a/0=2", "not-a-record c/0@3 claims a/0=7")
}

func TestAuditBeyondLogEnd(t *testing.T) {
	f := newFixture(t, "a", "c", "x")
	f.hwm["a/0"] = 2
	f.hwm["x/0"] = 10 // a channel outside the input, as a broker lists it
	f.rec("a/0", 0, "")
	f.rec("a/0", 1, "")
	f.rec("c/0", 0, "a/0=1,x/0=9")
	f.rec("c/0", 1, "a/0=2")
	f.rec("c/0", 2, "x/0=10")
	rep := f.audit()
	f.want(rep, "beyond-log-end c/0@1 claims a/0=2", "beyond-log-end c/0@2 claims x/0=10")
	if all(rep)[0].HighWatermark != 2 || all(rep)[1].HighWatermark != 10 {
		t.Errorf("high watermarks %d, %d: want 2 and 10", all(rep)[0].HighWatermark, all(rep)[1].HighWatermark)
	}
}

// A capture's log-facts lines give the high watermarks, and say which
// topics are compacted: there a gap may be a compacted record, not a marker.
func TestAuditLogFacts(t *testing.T) {
	f := newFixture(t, "a", "k", "c")
	f.item(record.KindLogFacts, "a/0", 0).Facts = &record.LogFacts{HighWatermark: 4, LastStable: 4}
	f.item(record.KindLogFacts, "k/0", 0).Facts = &record.LogFacts{HighWatermark: 9, LastStable: 9,
		Retention: &record.Retention{Ms: -1, Bytes: -1, CleanupPolicy: "compact"}}
	for _, ch := range []string{"a/0", "k/0"} {
		f.pos(ch, 0)
		f.rec(ch, 0, "")
		f.pos(ch, 3)
		f.rec(ch, 3, "")
	}
	f.rec("c/0", 0, "a/0=1,k/0=1")
	f.rec("c/0", 1, "a/0=4,k/0=8")
	f.want(f.audit(), "not-a-record c/0@0 claims a/0=1", "beyond-log-end c/0@1 claims a/0=4")
}

func TestAuditSelfCycle(t *testing.T) {
	f := newFixture(t, "c")
	f.rec("c/0", 4, "c/0=3") // below: FIFO already enforces it
	f.rec("c/0", 5, "c/0=5")
	f.rec("c/0", 6, "c/0=9")
	f.want(f.audit(), "self-cycle c/0@5 claims c/0=5", "self-cycle c/0@6 claims c/0=9")
}

func TestAuditUnknownTopic(t *testing.T) {
	f := newFixture(t, "a", "named")
	ghost := "a0000000-0000-0000-0000-0000000000ff"
	f.rec("a/0", 0, ghost+"/2=7,named/0=3")
	rep := f.audit()
	f.want(rep, "unknown-topic a/0@0 claims "+ghost+"/2=7")
	var out []string
	for _, ch := range rep.NotInInput {
		out = append(out, f.names.Channel(ch))
	}
	if got := strings.Join(out, ","); got != "named/0,"+ghost+"/2" && got != ghost+"/2,named/0" {
		t.Errorf("not in input: %s", got)
	}
}

func TestAuditWaitCycle(t *testing.T) {
	f := newFixture(t, "a", "b", "c")
	f.rec("a/0", 0, "")
	f.rec("a/0", 1, "b/0=0")
	f.rec("b/0", 0, "a/0=1")
	f.rec("b/0", 1, "")
	f.rec("c/0", 0, "b/0=1") // behind the cycle: not audited
	f.rec("c/0", 1, "a/0=0")
	rep := f.audit()
	f.want(rep, "wait-cycle a/0@1 [a/0@1 waits b/0=0] [b/0@0 waits a/0=1]")
	if rep.Unaudited != 5 {
		t.Errorf("unaudited %d, want 5 (a/0@1, b/0@0, b/0@1, c/0@0 and c/0@1 behind it)", rep.Unaudited)
	}
}

// Every undecodable header is listed with its reason code, and the audit
// goes on past them.
func TestAuditUndecodable(t *testing.T) {
	f := newFixture(t, "a", "c")
	f.rawRec("a/0", 0, []byte{0x02, 0x00})
	f.rawRec("a/0", 1, []byte{0x01})
	f.rec("c/0", 0, "c/0=0")
	rep := f.audit()
	f.want(rep, "self-cycle c/0@0 claims c/0=0", "undecodable a/0@0 unknown-version", "undecodable a/0@1 truncated")
	if u := all(rep)[1]; u.Record.Line != 1 || !strings.Contains(u.Reason, "unknown-version") {
		t.Errorf("finding %+v: want line 1 and the decoder's reason", u)
	}
}

func TestAuditMaxFindings(t *testing.T) {
	f := newFixture(t, "c")
	for off := range int64(10) {
		f.rec("c/0", off, fmt.Sprintf("c/0=%d", off+1))
	}
	rep := f.auditMax(3)
	if rep.Len() != 3 || !rep.Truncated {
		t.Errorf("%d findings, truncated %v: want 3, true", rep.Len(), rep.Truncated)
	}
	if rep := f.audit(); rep.Len() != 10 || rep.Truncated {
		t.Errorf("without a limit: %d findings, truncated %v", rep.Len(), rep.Truncated)
	}
}

func TestAuditBadInput(t *testing.T) {
	for name, build := range map[string]func(f *fixture){
		"offsets decrease": func(f *fixture) { f.rec("a/0", 5, ""); f.rec("a/0", 4, "") },
		"below a position": func(f *fixture) { f.pos("a/0", 9); f.rec("a/0", 4, "") },
	} {
		f := newFixture(t, "a")
		build(f)
		a := New(Config{Names: f.names})
		var err error
		for i := range f.items {
			if err = a.Index(&f.items[i]); err != nil {
				break
			}
		}
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Line != 2 || ie.Offset < 0 {
			t.Errorf("%s: error %v, want an input error naming line 2 and the offset", name, err)
		}
	}
	// A second reading that differs from the first.
	f := newFixture(t, "a")
	f.rec("a/0", 1, "")
	a := New(Config{Names: f.names})
	if err := a.Index(&f.items[0]); err != nil {
		t.Fatal(err)
	}
	other := f.items[0]
	other.Offset = 2
	if err := a.Load(&other); !errors.Is(err, ErrChanged) {
		t.Errorf("changed input: %v", err)
	}
}

// all returns every finding of a report, in report order.
func all(rep *Report) []Finding {
	var out []Finding
	rep.Each(func(f Finding) error {
		out = append(out, f)
		return nil
	})
	return out
}

// TestFindingRoot: a forged claim is the root of its own finding and of
// every hole it makes, its record's and those of the records that follow
// it on its channel; a hole of an unfolded stamp is rooted at the claim
// leaving the consumed channels; a record alone roots an undecodable
// header.
func TestFindingRoot(t *testing.T) {
	f := newFixture(t, "a", "u", "c")
	f.hwm["u/0"] = 1
	f.rec("a/0", 0, "")
	f.rec("a/0", 1, "")
	f.rec("u/0", 0, "a/0=1")
	f.rec("c/0", 0, "a/0=0")
	f.rec("c/0", 1, "u/0=99") // forged: beyond u's log end; reaches u/0@0, so a/0@1
	f.rec("c/0", 2, "")
	f.rawRec("c/0", 3, []byte{0x7f})
	rep := f.audit("a/0,c/0")
	forged := Root{Record: RecordRef{Channel: f.channel("c/0"), Offset: 1, Line: 5}, Claim: clock.Entry{Channel: f.channel("u/0"), Position: 99}, Claimed: true}
	got := map[string]Root{}
	for _, x := range all(rep) {
		got[f.describe(x)] = x.Root()
	}
	want := map[string]Root{
		"hole c/0@1 misses a/0@1 (1, from a/0@1) claims -1 waits 0 by c/0 via c/0@1 > u/0@0 > a/0@1":         forged,
		"hole c/0@2 misses a/0@1 (1, from a/0@1) claims -1 waits 0 by c/0 via c/0@2 > c/0@1 > u/0@0 > a/0@1": forged,
		"hole c/0@3 misses a/0@1 (1, from a/0@1) claims -1 waits 0 by c/0 via c/0@3 > c/0@1 > u/0@0 > a/0@1": forged,
		"beyond-log-end c/0@1 claims u/0=99": forged,
		"undecodable c/0@3 unknown-version":  {Record: RecordRef{Channel: f.channel("c/0"), Offset: 3, Line: 7}},
	}
	for d, r := range got {
		w, ok := want[d]
		if !ok {
			t.Errorf("unexpected finding %s (root %+v)", d, r)
			continue
		}
		if r != w {
			t.Errorf("%s: root %+v, want %+v", d, r, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d findings, want %d", len(got), len(want))
	}
}
