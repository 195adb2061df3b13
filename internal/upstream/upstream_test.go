package upstream

import (
	"slices"
	"strings"
	"testing"
)

func writers(pairs ...string) Writers {
	w := Writers{}
	for _, p := range pairs {
		app, topic, _ := strings.Cut(p, ">")
		w.Add(topic, app)
	}
	return w
}

// TestStoppedUpstreamIsTheRootOfTwo: an upstream process stopped with a
// refusal is the root of both processes holding on its output.
func TestStoppedUpstreamIsTheRootOfTwo(t *testing.T) {
	g := New([]Node{
		{App: "enricher", Stuck: Refusing, Code: "POSITIONS_DISCARDED_UNREAD"},
		{App: "billing", Stuck: Holding, WaitsOn: []string{"enriched"}},
		{App: "shipping", Stuck: Stopped, WaitsOn: []string{"enriched", "payments"}},
		{App: "payer"},
	}, writers("enricher>enriched", "payer>payments"))
	roots := g.Resolve()
	for _, app := range []string{"billing", "shipping"} {
		r, ok := roots[app]
		if !ok || r.App != "enricher" || r.Reason() != "refusing POSITIONS_DISCARDED_UNREAD" || r.Topic != "enriched" {
			t.Errorf("%s: root %+v, want enricher refusing POSITIONS_DISCARDED_UNREAD via enriched", app, r)
		}
	}
	if _, ok := roots["enricher"]; ok {
		t.Errorf("enricher waits on nothing, has root %+v", roots["enricher"])
	}
	if got := Roots(roots); !got["enricher"] || len(got) != 1 {
		t.Errorf("Roots = %v, want enricher alone", got)
	}
}

// TestChainOfThree: c holds on b's output, b holds on a's, a is stopped:
// the root of both b and c is a, reached through b.
func TestChainOfThree(t *testing.T) {
	g := New([]Node{
		{App: "a", Stuck: Stopped},
		{App: "b", Stuck: Holding, WaitsOn: []string{"ta"}},
		{App: "c", Stuck: Holding, WaitsOn: []string{"tb"}},
	}, writers("a>ta", "b>tb"))
	roots := g.Resolve()
	if r := roots["c"]; r.App != "a" || r.Kind != Stopped || !slices.Equal(r.Via, []string{"b", "a"}) || r.Topic != "tb" {
		t.Errorf("c: %+v, want a stopped via b, a on tb", r)
	}
	if r := roots["b"]; r.App != "a" || !slices.Equal(r.Via, []string{"a"}) {
		t.Errorf("b: %+v, want a", r)
	}
	if r := roots["c"]; r.Text() != "a(stopped)" {
		t.Errorf("text %q", r.Text())
	}
}

// TestCycleOfTwo: two running processes holding on each other's output
// name the cycle, the same for both.
func TestCycleOfTwo(t *testing.T) {
	g := New([]Node{
		{App: "y", Stuck: Holding, WaitsOn: []string{"tx"}},
		{App: "x", Stuck: Holding, WaitsOn: []string{"ty"}},
	}, writers("x>tx", "y>ty"))
	roots := g.Resolve()
	for _, app := range []string{"x", "y"} {
		r := roots[app]
		if r.Kind != Cycle || !slices.Equal(r.Cycle, []string{"x", "y"}) {
			t.Errorf("%s: %+v, want the cycle x, y", app, r)
		}
	}
	if r := roots["y"]; r.Text() != "cycle(x>y)" {
		t.Errorf("text %q", r.Text())
	}
}

// TestHealthyWritersAreNoRoot: holds on a topic whose writer runs and
// holds nothing name no root; a holding writer waiting on no stuck one is
// the root itself.
func TestHealthyWritersAreNoRoot(t *testing.T) {
	g := New([]Node{
		{App: "up"},
		{App: "mid", Stuck: Holding, WaitsOn: []string{"elsewhere"}},
		{App: "down", Stuck: Holding, WaitsOn: []string{"tu", "tm"}},
		{App: "lone", Stuck: Holding, WaitsOn: []string{"tu"}},
	}, writers("up>tu", "mid>tm"))
	roots := g.Resolve()
	if _, ok := roots["lone"]; ok {
		t.Errorf("lone waits on a healthy writer, has root %+v", roots["lone"])
	}
	if r := roots["down"]; r.App != "mid" || r.Kind != Holding {
		t.Errorf("down: %+v, want mid holding", r)
	}
}

// TestTheMostTellingRootWins: a refusal ranks before a stop.
func TestTheMostTellingRootWins(t *testing.T) {
	g := New([]Node{
		{App: "s", Stuck: Stopped},
		{App: "r", Stuck: Refusing, Code: "ORDERING_STATE_LOST"},
		{App: "d", Stuck: Holding, WaitsOn: []string{"ts", "tr"}},
	}, writers("s>ts", "r>tr"))
	if r := g.Resolve()["d"]; r.App != "r" {
		t.Errorf("d: %+v, want r", r)
	}
}

func TestParseFleet(t *testing.T) {
	w, err := ParseFleet("fleet.txt", strings.NewReader("# the fleet\n\nenricher: enriched, audit\nbilling:invoices\nenricher: more\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Writers{"enriched": {"enricher"}, "audit": {"enricher"}, "invoices": {"billing"}, "more": {"enricher"}}
	if len(w) != len(want) {
		t.Fatalf("got %v, want %v", w, want)
	}
	for topic, apps := range want {
		if !slices.Equal(w[topic], apps) {
			t.Errorf("%s: %v, want %v", topic, w[topic], apps)
		}
	}
	for in, line := range map[string]string{
		"a: t\nno colon here\n": "line 2",
		"a: t\n\n: t\n":         "line 3",
		"a: bad topic!\n":       "line 1",
		"a:\n":                  "line 1",
		"a b: t\n":              "line 1",
	} {
		_, err := ParseFleet("fleet.txt", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), "fleet.txt "+line) {
			t.Errorf("%q: error %v, want one naming %s", in, err, line)
		}
	}
}

// TestRootOfATask: a task is resolved from its own topics: one waiting on
// the stuck writer's topic names it, one waiting elsewhere names none.
func TestRootOfATask(t *testing.T) {
	g := New([]Node{
		{App: "up", Stuck: Stopped},
		{App: "down", Stuck: Holding, WaitsOn: []string{"tu", "other"}},
	}, writers("up>tu"))
	if r, ok := g.RootOf("down", []string{"tu"}); !ok || r.App != "up" {
		t.Errorf("task on tu: %+v, %v; want up", r, ok)
	}
	if r, ok := g.RootOf("down", []string{"other"}); ok {
		t.Errorf("task on other: %+v, want none", r)
	}
}
