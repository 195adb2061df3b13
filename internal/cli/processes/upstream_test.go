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
	if !strings.HasSuffix(lines[0], "UPSTREAM") || !strings.HasPrefix(lines[1], "enricher ") {
		t.Fatalf("want the UPSTREAM column and the stuck root first:\n%s", out)
	}
	want := "enricher(refusing:POSITIONS_DISCARDED_UNREAD)"
	for _, l := range lines[2:] {
		fields := strings.Fields(l)
		if got := fields[len(fields)-1]; got != want {
			t.Errorf("%s: UPSTREAM %q, want %q", fields[0], got, want)
		}
	}
	if f := strings.Fields(lines[1]); f[len(f)-1] != "-" {
		t.Errorf("enricher waits on nobody, UPSTREAM %q", f[len(f)-1])
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
