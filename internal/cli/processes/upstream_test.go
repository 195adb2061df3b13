package processes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/testutil"
)

// stoppedUpstream is the fleet of the issue: enricher reads clicks and
// sends enriched, in transactions whose id begins with its application
// id (as Kafka Streams names them); it stopped, retention then deleted
// clicks past its committed offset, so its next start is refused
// (POSITIONS_DISCARDED_UNREAD). billing (running) and shipping (stopped)
// each hold a record whose clock needs an enriched record enricher never
// sent. byTransaction false writes enriched with a plain producer: the
// cluster then cannot tell who writes it.
func stoppedUpstream(t *testing.T, byTransaction bool) *world {
	t.Helper()
	parts := map[string]int32{"clicks": 1, "enriched": 1, "orders": 1, "payments": 1}
	for _, app := range []string{"enricher", "billing", "shipping"} {
		parts[parsley.ChangelogTopic(app)] = 1
	}
	w := newWorld(t, parts)
	w.fill(t, "clicks", 1, 20)
	w.fill(t, "orders", 1, 3)
	w.fill(t, "payments", 1, 2)
	var sent []*kgo.Record
	for range 3 {
		sent = append(sent, &kgo.Record{Topic: "enriched", Partition: 0, Value: []byte("e")})
	}
	if byTransaction {
		kafkatest.Transact(t, w.client(t, kgo.TransactionalID("enricher-3f2a-1")), sent...)
	} else {
		kafkatest.Produce(t, w.c, sent...)
	}
	w.store(t, "enricher", []string{"clicks"}, []task{{fed: map[string]int64{"clicks": 9}}})
	w.commit(t, "enricher", map[string]int64{"clicks/0": 10})
	// Retention passes the stopped enricher's committed position.
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "clicks", Partition: 0, At: 15})
	if _, err := w.adm.DeleteRecords(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	ago := now.Add(-4 * 60e9).UnixMilli()
	w.store(t, "billing", []string{"enriched", "orders"}, []task{{fed: map[string]int64{"enriched": 3, "orders": 1},
		held: []held{{topic: "orders", off: 1, ts: ago, causes: map[string]int64{"enriched/0": 5}}}}})
	w.commit(t, "billing", map[string]int64{"enriched/0": 4, "orders/0": 2})
	w.join(t, "billing", "enriched", "orders")
	w.store(t, "shipping", []string{"enriched", "payments"}, []task{{fed: map[string]int64{"enriched": 3, "payments": 0},
		held: []held{{topic: "payments", off: 0, ts: ago, causes: map[string]int64{"enriched/0": 7}}}}})
	w.commit(t, "shipping", map[string]int64{"enriched/0": 4, "payments/0": 1})
	return w
}

// TestStoppedUpstreamIsNamed is the done-when: processes names
// the stopped upstream process and its refusal as the root of both
// downstream holds, lists it first, and says the same in JSON.
func TestStoppedUpstreamIsNamed(t *testing.T) {
	w := stoppedUpstream(t, true)
	out, errOut, code := run(t, w.c, false)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], " UPSTREAM ") || !strings.HasPrefix(lines[1], "enricher ") {
		t.Fatalf("want the UPSTREAM column and the stuck root first:\n%s", out)
	}
	want := "enricher(refusing:POSITIONS_DISCARDED_UNREAD)"
	for _, l := range lines[2:] {
		fields := strings.Fields(l)
		if got := fields[len(fields)-3]; got != want {
			t.Errorf("%s: UPSTREAM %q, want %q", fields[0], got, want)
		}
	}
	if f := strings.Fields(lines[1]); f[len(f)-3] != "-" {
		t.Errorf("enricher waits on nobody, UPSTREAM %q", f[len(f)-3])
	}

	js, errOut, code := run(t, w.c, false, "-o", "json")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	if errs := testutil.LoadSchemas(t, "../../../docs/schemas").Validate("processes.schema.json", js); len(errs) > 0 {
		t.Errorf("the JSON breaks its schema: %v", errs)
	}
	var doc struct {
		Processes []struct {
			App      string
			Upstream *struct {
				App    *string
				Kind   string
				Code   *string
				Reason string
				Topic  string
				Via    []string
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Processes {
		u := p.Upstream
		switch p.App {
		case "enricher":
			if u != nil {
				t.Errorf("enricher: upstream %+v, want null", u)
			}
		default:
			if u == nil || u.App == nil || *u.App != "enricher" || u.Kind != "refusing" || u.Code == nil || *u.Code != "POSITIONS_DISCARDED_UNREAD" || u.Topic != "enriched" {
				t.Errorf("%s: upstream %+v, want enricher refusing POSITIONS_DISCARDED_UNREAD on enriched", p.App, u)
			}
		}
	}
}

// TestFleetFileNamesWriters: when the cluster cannot tell who writes a
// topic (a plain producer), no root is named, until --fleet says it.
func TestFleetFileNamesWriters(t *testing.T) {
	w := stoppedUpstream(t, false)
	out, errOut, code := run(t, w.c, false)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "enricher(") {
		t.Fatalf("a root named without knowing the writer:\n%s", out)
	}
	fleet := filepath.Join(t.TempDir(), "fleet.txt")
	if err := os.WriteFile(fleet, []byte("# who sends what\nenricher: enriched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, w.c, false, "--fleet", fleet)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, "enricher(refusing:POSITIONS_DISCARDED_UNREAD)"); n != 2 {
		t.Errorf("want both downstream processes naming enricher:\n%s", out)
	}
	if err := os.WriteFile(fleet, []byte("enricher: enriched\nbilling invoices\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = run(t, w.c, false, "--fleet", fleet)
	if code != 2 || !strings.Contains(errOut, "line 2") {
		t.Errorf("a bad fleet file: exit %d, %q; want 2 naming line 2", code, errOut)
	}
}

// member is one process of a fleet world: the topic it sends (by
// transactions whose id begins with its application id), the topic its
// one held record waits on, whether a member of its group runs.
type member struct {
	app, sends, waitsOn string
	running             bool
}

// fleetWorld writes a fleet as it comes about: each process reads its own
// input topic in-APP (3 records) and sends two records to its topic;
// one that waits holds in-APP@1, whose clock needs its topic's record 50,
// never sent (beyond its log end); one that does not has read all.
func fleetWorld(t *testing.T, members ...member) *world {
	t.Helper()
	parts := map[string]int32{}
	for _, m := range members {
		parts["in-"+m.app], parts[parsley.ChangelogTopic(m.app)] = 1, 1
		if m.sends != "" {
			parts[m.sends] = 1
		}
	}
	w := newWorld(t, parts)
	for _, m := range members {
		w.fill(t, "in-"+m.app, 1, 3)
		if m.sends != "" {
			kafkatest.Transact(t, w.client(t, kgo.TransactionalID(m.app+"-0c1d-out")),
				&kgo.Record{Topic: m.sends, Value: []byte("a")}, &kgo.Record{Topic: m.sends, Value: []byte("b")})
		}
	}
	for _, m := range members {
		in := "in-" + m.app
		topics := []string{in}
		tk := task{fed: map[string]int64{in: 2}}
		committed := map[string]int64{in + "/0": 3}
		if m.waitsOn != "" {
			topics = append(topics, m.waitsOn)
			tk = task{fed: map[string]int64{in: 1, m.waitsOn: 1}, held: []held{
				{topic: in, off: 1, ts: now.Add(-60e9).UnixMilli(), causes: map[string]int64{m.waitsOn + "/0": 50}}}}
			committed = map[string]int64{in + "/0": 2, m.waitsOn + "/0": 3}
		}
		w.store(t, m.app, topics, []task{tk})
		w.commit(t, m.app, committed)
		if m.running {
			w.join(t, m.app, topics...)
		}
	}
	return w
}

// upstreamColumn (third from the end, before RETENTION and NEXT-START) runs processes and returns each row's UPSTREAM cell, by
// application id, and the applications in the order listed.
func upstreamColumn(t *testing.T, w *world) (map[string]string, []string) {
	t.Helper()
	out, errOut, code := run(t, w.c, false)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cells := map[string]string{}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(l)
		cells[f[0]] = f[len(f)-3]
		order = append(order, f[0])
	}
	return cells, order
}

// TestChainOfThree: c holds on what b sends, b on what a sends, and a has
// stopped: a is the root of both, listed first.
func TestChainOfThree(t *testing.T) {
	w := fleetWorld(t,
		member{app: "a", sends: "ta"},
		member{app: "b", sends: "tb", waitsOn: "ta", running: true},
		member{app: "c", waitsOn: "tb", running: true})
	cells, order := upstreamColumn(t, w)
	want := map[string]string{"a": "-", "b": "a(stopped)", "c": "a(stopped)"}
	for app, cell := range want {
		if cells[app] != cell {
			t.Errorf("%s: UPSTREAM %q, want %q", app, cells[app], cell)
		}
	}
	if order[0] != "a" {
		t.Errorf("order %v: the root first", order)
	}
	js, _, _ := run(t, w.c, false, "-o", "json")
	if !strings.Contains(js, `"via":["b","a"]`) {
		t.Errorf("c's way to a through b is not in the JSON:\n%s", js)
	}
}

// TestCycleOfTwo: two running processes each holding on what the other
// sends are named as a cycle.
func TestCycleOfTwo(t *testing.T) {
	w := fleetWorld(t,
		member{app: "x", sends: "tx", waitsOn: "ty", running: true},
		member{app: "y", sends: "ty", waitsOn: "tx", running: true},
		member{app: "z", sends: "tz", running: true})
	cells, _ := upstreamColumn(t, w)
	for app, cell := range map[string]string{"x": "cycle(x>y)", "y": "cycle(x>y)", "z": "-"} {
		if cells[app] != cell {
			t.Errorf("%s: UPSTREAM %q, want %q", app, cells[app], cell)
		}
	}
}
