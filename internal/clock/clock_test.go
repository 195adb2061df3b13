package clock

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func testNames(t testing.TB) *Names {
	t.Helper()
	n := &Names{}
	for _, s := range []string{
		"orders=00000000-0000-0001-0000-000000000001",
		"payments=00000000-0000-0001-0000-000000000002",
	} {
		if err := n.AddFlag(s); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func parse(t testing.TB, n *Names, s string) Clock {
	t.Helper()
	c, err := n.Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return c
}

func TestTopicID(t *testing.T) {
	id, err := ParseTopicID("01020304-0506-0708-090A-0B0C0D0E0F10")
	if err != nil {
		t.Fatal(err)
	}
	if got := id.String(); got != "01020304-0506-0708-090a-0b0c0d0e0f10" {
		t.Errorf("canonical form %s", got)
	}
	for _, bad := range []string{"", "01020304050607080900a0b0c0d0e0f10", "01020304-0506-0708-090a-0b0c0d0e0f1", "0102030g-0506-0708-090a-0b0c0d0e0f10", "01020304_0506-0708-090a-0b0c0d0e0f10"} {
		if _, err := ParseTopicID(bad); err == nil {
			t.Errorf("ParseTopicID(%q) accepted", bad)
		}
	}
}

func TestTextForm(t *testing.T) {
	n := testNames(t)
	for _, tc := range []struct{ in, want string }{
		{"{}", "{}"},
		{" {} ", "{}"},
		{"payments/3=7,orders/0=41", "orders/0=41,payments/3=7"},
		{"orders/10=1, orders/2=5", "orders/2=5,orders/10=1"},
		{"00000000-0000-0001-0000-000000000002/1=0", "payments/1=0"},
		{"ABCDEF00-0000-0001-0000-000000000002/1=9", "abcdef00-0000-0001-0000-000000000002/1=9"},
		{"orders/0=9223372036854775806", "orders/0=9223372036854775806"},
	} {
		c := parse(t, n, tc.in)
		if got := n.Format(c); got != tc.want {
			t.Errorf("Format(Parse(%q)) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, why string }{
		{"", "empty"},
		{"orders/0", "CHANNEL=POSITION"},
		{"orders=1", "NAME/PARTITION"},
		{"orders/x=1", "partition"},
		{"orders/-1=1", "partition"},
		{"orders/0=-1", "position"},
		{"orders/0=9223372036854775807", "position"},
		{"orders/0=1,orders/0=2", "named twice"},
		{"shipments/0=1", "unknown topic \"shipments\""},
		{"00000000-0000-0000-0000-000000000000/0=1", "zero topic UUID"},
		{"orders/0=1,", "CHANNEL=POSITION"},
	} {
		_, err := n.Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("Parse(%q) = %v, want an error about %q", tc.in, err, tc.why)
		}
	}
}

func TestNamesConflicts(t *testing.T) {
	n := testNames(t)
	if err := n.AddFlag("orders=00000000-0000-0001-0000-000000000001"); err != nil {
		t.Errorf("re-adding the same binding: %v", err)
	}
	for _, bad := range []string{
		"orders=00000000-0000-0001-0000-000000000009",  // name moved
		"refunds=00000000-0000-0001-0000-000000000001", // UUID renamed
		"a/b=00000000-0000-0001-0000-000000000005",     // slash in name
		"orders", // no UUID
		"zero=00000000-0000-0000-0000-000000000000",      // zero UUID
		"x=not-a-uuid-at-all-0000-000000000000000000000", // bad UUID
	} {
		if err := n.AddFlag(bad); err == nil {
			t.Errorf("AddFlag(%q) accepted", bad)
		}
	}
	if n.Len() != 2 {
		t.Errorf("failed adds changed the names: %d", n.Len())
	}
	var none *Names
	if got := none.Channel(Channel{TopicID{1}, 4}); got != "01000000-0000-0000-0000-000000000000/4" {
		t.Errorf("nil Names: %s", got)
	}
}

func TestClockAlgebra(t *testing.T) {
	n := testNames(t)
	a := parse(t, n, "orders/0=5,orders/1=2")
	b := parse(t, n, "orders/1=7,payments/0=1")
	if got := n.Format(a.Join(b)); got != "orders/0=5,orders/1=7,payments/0=1" {
		t.Errorf("join = %s", got)
	}
	if !a.Join(b).Dominates(a) || !a.Join(b).Dominates(b) {
		t.Error("a join does not dominate its parts")
	}
	if a.Dominates(b) || b.Dominates(a) {
		t.Error("incomparable clocks reported as dominating")
	}
	if !a.Dominates(Clock{}) || (Clock{}).Dominates(a) {
		t.Error("empty clock ordering")
	}
	scope := map[Channel]bool{}
	for _, e := range b.Entries() {
		scope[e.Channel] = true
	}
	if got := n.Format(a.Restrict(func(c Channel) bool { return scope[c] })); got != "orders/1=2" {
		t.Errorf("restrict = %s", got)
	}
	ch, _ := n.ParseChannel("orders/0")
	if got := n.Format(a.Without(ch)); got != "orders/1=2" {
		t.Errorf("without = %s", got)
	}
	if got := n.Format(a.With(ch, 3)); got != n.Format(a) {
		t.Errorf("with a lower position changed the clock: %s", got)
	}
	if p, ok := a.Get(ch); !ok || p != 5 {
		t.Errorf("get = %d %v", p, ok)
	}
	if _, ok := b.Get(ch); ok {
		t.Error("get of an absent channel")
	}
	if _, err := New(Entry{Channel{TopicID{}, 0}, 1}); err == nil {
		t.Error("New accepted a zero topic")
	}
	if c := MustNew(Entry{Channel{TopicID{2}, 0}, 1}, Entry{Channel{TopicID{1}, 0}, 4}, Entry{Channel{TopicID{2}, 0}, 3}); c.String() != "01000000-0000-0000-0000-000000000000/0=4,02000000-0000-0000-0000-000000000000/0=3" {
		t.Errorf("New sorted and folded to %s", c)
	}
}

// TestClockAlgebraRandom checks join and dominance against a map model.
func TestClockAlgebraRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func() (Clock, map[Channel]int64) {
		m := map[Channel]int64{}
		var es []Entry
		for range r.IntN(6) {
			ch := Channel{TopicID{byte(1 + r.IntN(3))}, int32(r.IntN(3))}
			p := int64(r.IntN(5))
			es = append(es, Entry{ch, p})
			m[ch] = max(m[ch], p)
		}
		return MustNew(es...), m
	}
	dominates := func(a, b map[Channel]int64) bool {
		for ch, p := range b {
			if q, ok := a[ch]; !ok || q < p {
				return false
			}
		}
		return true
	}
	for range 2000 {
		a, am := random()
		b, bm := random()
		if got, want := a.Dominates(b), dominates(am, bm); got != want {
			t.Fatalf("%v ≥ %v: got %v", a, b, got)
		}
		j := a.Join(b)
		jm := map[Channel]int64{}
		for ch, p := range am {
			jm[ch] = p
		}
		for ch, p := range bm {
			jm[ch] = max(jm[ch], p)
		}
		if j.Len() != len(jm) || !dominates(jm, mapOf(j)) || !dominates(mapOf(j), jm) {
			t.Fatalf("%v ⊔ %v = %v", a, b, j)
		}
		if !a.Join(b).Equal(b.Join(a)) {
			t.Fatalf("join not commutative on %v, %v", a, b)
		}
		if got, err := (*Names)(nil).Parse(j.String()); (j.IsEmpty() && err != nil) || (err == nil && !got.Equal(j)) {
			t.Fatalf("text round trip of %v: %v %v", j, got, err)
		}
	}
}

func mapOf(c Clock) map[Channel]int64 {
	m := map[Channel]int64{}
	for _, e := range c.Entries() {
		m[e.Channel] = e.Position
	}
	return m
}

func TestDominatesDoesNotAllocate(t *testing.T) {
	a, b := benchClock(16, 0), benchClock(16, 1)
	if n := testing.AllocsPerRun(100, func() { _ = a.Dominates(b) }); n != 0 {
		t.Errorf("Dominates allocated %v times", n)
	}
}

// benchClock returns a clock of n entries spread over n/4+1 topics.
func benchClock(n int, shift int64) Clock {
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{Channel{TopicID{0, byte(i/4 + 1)}, int32(i % 4)}, int64(1000*i) + shift}
	}
	return MustNew(es...)
}

var sizes = []int{1, 4, 16, 64}

func BenchmarkDecode(b *testing.B) {
	for _, n := range sizes {
		v := Encode(benchClock(n, 0))
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				if _, err := Decode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendDecode(b *testing.B) {
	for _, n := range sizes {
		v := Encode(benchClock(n, 0))
		var buf []Entry
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				var err error
				if buf, err = AppendDecode(buf[:0], v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, n := range sizes {
		c := benchClock(n, 0)
		buf := make([]byte, 0, 2048)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendEncode(buf[:0], c)
			}
		})
	}
}

func BenchmarkDominates(b *testing.B) {
	for _, n := range sizes {
		x, y := benchClock(n, 1), benchClock(n, 0)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !x.Dominates(y) {
					b.Fatal("no dominance")
				}
			}
		})
	}
}

// TestNewSharedAgainstNew: over random entries — in order, shuffled, with
// a channel twice, invalid — NewShared gives New's clock or New's error;
// it shares the entries exactly when they are in clock order, and never
// modifies entries it does not share.
func TestNewSharedAgainstNew(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shared := 0
	for range 3000 {
		var es []Entry
		for range r.IntN(6) {
			e := Entry{Channel{TopicID{byte(r.IntN(4))}, int32(r.IntN(3))}, int64(r.IntN(5))}
			if r.IntN(40) == 0 {
				e.Position = -1
			}
			es = append(es, e)
		}
		if c, err := New(es...); err == nil && r.IntN(2) == 0 { // in clock order, as a store keeps them, usually
			es = append([]Entry(nil), c.Entries()...)
		}
		before := append([]Entry(nil), es...)
		want, werr := New(es...)
		got, err := NewShared(es)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("NewShared(%v): error %v, New's %v", es, err, werr)
		}
		if err != nil {
			continue
		}
		if !got.Equal(want) {
			t.Fatalf("NewShared(%v) = %v, New %v", es, got, want)
		}
		inOrder := true
		for i := 1; i < len(es); i++ {
			inOrder = inOrder && es[i-1].Channel.Compare(es[i].Channel) < 0
		}
		shares := len(es) > 0 && &got.Entries()[0] == &es[0]
		if shares != (inOrder && len(es) > 0) {
			t.Fatalf("NewShared(%v): shares %v, in clock order %v", es, shares, inOrder)
		}
		if shares {
			shared++
			if cap(got.Entries()) != len(es) {
				t.Fatalf("a shared clock's entries have room past them (cap %d)", cap(got.Entries()))
			}
		} else if fmt.Sprint(es) != fmt.Sprint(before) {
			t.Fatalf("NewShared modified entries it did not share: %v, were %v", es, before)
		}
	}
	if shared < 500 {
		t.Errorf("only %d of 3000 clocks shared their entries", shared)
	}
}
