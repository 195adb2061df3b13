package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// upstreamFleet is a fleet as it comes about: enricher reads clicks and
// sends enriched in transactions named after its application id (as
// Kafka Streams names them), stops, and retention deletes clicks past its
// committed offset (its next start: POSITIONS_DISCARDED_UNREAD); billing
// and shipping each hold a record whose clock needs an enriched record
// never sent. It returns the broker address.
func upstreamFleet(t *testing.T) string {
	t.Helper()
	apps := []string{"enricher", "billing", "shipping"}
	opts := []kfake.Opt{kfake.SeedTopics(1, "clicks", "enriched", "orders", "payments")}
	for _, app := range apps {
		opts = append(opts, kfake.SeedTopics(1, parsley.ChangelogTopic(app)))
	}
	c := kafkatest.Cluster(t, opts...)
	client := func(o ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner())}, o...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	adm := kadm.NewClient(client())
	md, err := adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	ch := func(topic string) clock.Channel { return clock.Channel{Topic: ids[topic]} }
	var recs []*kgo.Record
	for topic, n := range map[string]int{"clicks": 20, "orders": 3, "payments": 2} {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte("x")})
		}
	}
	kafkatest.Produce(t, c, recs...)
	kafkatest.Transact(t, client(kgo.TransactionalID("enricher-5d1e-0_0")),
		&kgo.Record{Topic: "enriched", Value: []byte("e")}, &kgo.Record{Topic: "enriched", Value: []byte("e")})
	store := func(app string, fed map[string]int64, held *parsleytest.Held, commit map[string]int64) {
		names := map[string]clock.TopicID{}
		for topic := range fed {
			names[topic] = ids[topic]
		}
		recs := append([]*kgo.Record{parsleytest.StoreEntry(app, 0, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})},
			parsleytest.Bindings(app, 0, names)...)
		for topic, pos := range fed {
			recs = append(recs, parsleytest.FedUpTo(app, 0, ch(topic), pos))
		}
		if held != nil {
			recs = append(recs, held.Entry(app, 0))
		}
		kafkatest.Transact(t, client(kgo.TransactionalID(app+"-store")), recs...)
		offs := kadm.Offsets{}
		for topic, at := range commit {
			offs.Add(kadm.Offset{Topic: topic, At: at, LeaderEpoch: -1})
		}
		resp, err := adm.CommitOffsets(context.Background(), app, offs)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("committing %s: %v", app, err)
		}
	}
	store("enricher", map[string]int64{"clicks": 9}, nil, map[string]int64{"clicks": 10})
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "clicks", At: 15})
	if _, err := adm.DeleteRecords(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	for _, down := range []struct{ app, own string }{{"billing", "orders"}, {"shipping", "payments"}} {
		h := &parsleytest.Held{Channel: ch(down.own), Offset: 1, Timestamp: 1, Causes: []clock.Entry{{Channel: ch("enriched"), Position: 9}}}
		store(down.app, map[string]int64{down.own: 1, "enriched": 2}, h, map[string]int64{down.own: 2, "enriched": 3})
	}
	return c.ListenAddrs()[0]
}

// TestUpstreamRootAgrees: processes, state --app and holds --app name the
// same upstream root of each downstream process — the stopped enricher
// and its refusal — and state's text says it.
func TestUpstreamRootAgrees(t *testing.T) {
	addr := upstreamFleet(t)
	type root struct {
		App    *string  `json:"app"`
		Kind   string   `json:"kind"`
		Code   *string  `json:"code"`
		Reason string   `json:"reason"`
		Topic  string   `json:"topic"`
		Via    []string `json:"via"`
	}
	code, out, stderr := runEnv(t, nil, "processes", "--brokers", addr, "-o", "json")
	if code != 0 {
		t.Fatalf("processes: exit %d: %s", code, stderr)
	}
	for _, e := range loadSchemas(t).Validate("processes.schema.json", out) {
		t.Errorf("processes: %s", e)
	}
	var ps struct {
		Processes []struct {
			App      string `json:"app"`
			Upstream *root  `json:"upstream"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatal(err)
	}
	byApp := map[string]*root{}
	for _, p := range ps.Processes {
		byApp[p.App] = p.Upstream
	}
	if len(ps.Processes) != 3 || ps.Processes[0].App != "enricher" || byApp["enricher"] != nil {
		t.Fatalf("want enricher first and rootless: %s", out)
	}
	for _, app := range []string{"billing", "shipping"} {
		want := byApp[app]
		if want == nil || want.App == nil || *want.App != "enricher" || want.Code == nil || *want.Code != "POSITIONS_DISCARDED_UNREAD" || want.Topic != "enriched" {
			t.Fatalf("processes: %s's upstream %+v, want enricher refusing POSITIONS_DISCARDED_UNREAD", app, want)
		}
		for _, cmd := range []string{"state", "holds"} {
			code, out, stderr := runEnv(t, nil, cmd, "--brokers", addr, "--app", app, "-o", "json")
			if code != 4 {
				t.Errorf("%s --app %s: exit %d, want 4 (it holds): %s", cmd, app, code, stderr)
			}
			if cmd == "state" {
				for _, e := range loadSchemas(t).Validate("state.schema.json", out) {
					t.Errorf("state: %s", e)
				}
			}
			var doc struct {
				Upstream *root `json:"upstream"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%s: %v: %s", cmd, err, out)
			}
			if !reflect.DeepEqual(doc.Upstream, want) {
				t.Errorf("%s --app %s: upstream %+v, processes says %+v", cmd, app, doc.Upstream, want)
			}
		}
		_, text, _ := runEnv(t, nil, "state", "--brokers", addr, "--app", app)
		if !strings.Contains(text, "Upstream root: enricher, refusing POSITIONS_DISCARDED_UNREAD (waiting on enriched") {
			t.Errorf("state --app %s does not name the root:\n%s", app, text)
		}
	}
	_, text, _ := runEnv(t, nil, "state", "--brokers", addr, "--app", "enricher")
	if strings.Contains(text, "Upstream") {
		t.Errorf("state --app enricher names an upstream:\n%s", text)
	}
}

// TestExporterNamesTheUpstreamRoot: the exporter's series names the
// stopped enricher and its refusal for each downstream task, as processes
// does, and none for enricher itself.
func TestExporterNamesTheUpstreamRoot(t *testing.T) {
	addr := upstreamFleet(t)
	clk := newTestClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	e := startExporter(t, addr, clk)
	defer e.stop()
	series := func(app string) string {
		return fmt.Sprintf(`parsley_task_upstream_root{app=%q,reason="refusing POSITIONS_DISCARDED_UNREAD",task="0",upstream="enricher"}`, app)
	}
	body := e.await(t, "the upstream roots", func(body string) bool {
		_, billing := metricValue(body, series("billing"))
		_, shipping := metricValue(body, series("shipping"))
		return billing && shipping
	})
	if strings.Contains(body, `parsley_task_upstream_root{app="enricher"`) {
		t.Errorf("enricher waits on nobody:\n%s", processLines(body))
	}
}

// TestUpstreamRootDoneWhen is issue 32's done-when for the fleet, end to
// end on one kfake fleet: an upstream process (enricher) stopped with a
// refusal, two downstream processes holding on its output. processes'
// text and JSON name enricher and its refusal as the root of both and list
// it first; the exporter's parsley_task_upstream_root series say the same
// root for the same processes, and no other; the shipped alert
// (ParsleyUpstreamRoot, run by promtool over exactly the scraped series)
// fires for each, naming the upstream process and its reason.
func TestUpstreamRootDoneWhen(t *testing.T) {
	promtool := lookTool(t, "promtool")
	addr := upstreamFleet(t)

	code, text, stderr := runEnv(t, nil, "processes", "--brokers", addr)
	if code != 0 {
		t.Fatalf("processes: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 4 || !slices.Contains(strings.Fields(lines[0]), "UPSTREAM") || strings.Fields(lines[1])[0] != "enricher" {
		t.Fatalf("processes: want the UPSTREAM column and enricher first:\n%s", text)
	}
	textRoot := map[string]string{}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		for _, field := range f {
			if strings.HasPrefix(field, "enricher(") {
				textRoot[f[0]] = field
			}
		}
	}
	code, js, stderr := runEnv(t, nil, "processes", "--brokers", addr, "-o", "json")
	if code != 0 {
		t.Fatalf("processes -o json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Processes []struct {
			App      string `json:"app"`
			Upstream *struct {
				App    *string `json:"app"`
				Kind   string  `json:"kind"`
				Code   *string `json:"code"`
				Reason string  `json:"reason"`
			} `json:"upstream"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	// want: downstream app → the exporter's labels of its root (upstream, reason).
	want := map[string][2]string{}
	for _, p := range doc.Processes {
		if u := p.Upstream; u != nil && u.App != nil && u.Code != nil {
			want[p.App] = [2]string{*u.App, u.Kind + " " + *u.Code}
		}
	}
	for _, app := range []string{"billing", "shipping"} {
		if want[app] != [2]string{"enricher", "refusing POSITIONS_DISCARDED_UNREAD"} {
			t.Errorf("processes -o json: %s's root %v, want enricher refusing POSITIONS_DISCARDED_UNREAD", app, want[app])
		}
		if textRoot[app] != "enricher(refusing:POSITIONS_DISCARDED_UNREAD)" {
			t.Errorf("processes: %s's UPSTREAM %q", app, textRoot[app])
		}
	}
	if len(want) != 2 {
		t.Errorf("processes -o json: roots %v, want billing's and shipping's alone", want)
	}

	clk := newTestClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	e := startExporter(t, addr, clk)
	defer e.stop()
	var series []string
	e.await(t, "an upstream root for each downstream process", func(body string) bool {
		series = series[:0]
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "parsley_task_upstream_root{") {
				series = append(series, strings.TrimSuffix(l, " 1"))
			}
		}
		return len(series) >= len(want)
	})
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	var inputs, alerts strings.Builder
	seen := map[string]bool{}
	for _, s := range series {
		labels := map[string]string{}
		for _, m := range label.FindAllStringSubmatch(s, -1) {
			labels[m[1]] = m[2]
		}
		app := labels["app"]
		if w, ok := want[app]; !ok || labels["upstream"] != w[0] || labels["reason"] != w[1] {
			t.Errorf("exporter: %s; processes says %v", s, want[app])
		}
		seen[app] = true
		fmt.Fprintf(&inputs, "      - series: '%s'\n        values: '1x15'\n", strings.Replace(s, "{", `{instance="x:9464",job="parsley",`, 1))
		fmt.Fprintf(&alerts, `          - exp_labels: {severity: warning, instance: "x:9464", job: parsley, app: %q, task: %q, upstream: %q, reason: %q}
            exp_annotations:
              page: "http://x:9464/processes/%s"
              task_page: "http://x:9464/processes/%s/tasks/%s"
              summary: "A Parsley process holds records behind a stuck upstream process"
              description: %q
`, app, labels["task"], labels["upstream"], labels["reason"], labels["upstream"], app, labels["task"],
			fmt.Sprintf("Task %s of %s holds records waiting on %s, which is stuck (%s): act on %s, not on %s; its holds clear once %s writes again. `causalctl processes` lists the roots first; docs/fleet.md explains the upstream root.",
				labels["task"], app, labels["upstream"], labels["reason"], labels["upstream"], app, labels["upstream"]))
	}
	if len(seen) != len(want) {
		t.Errorf("exporter: roots for %v, processes for %v", seen, want)
	}
	rules, err := filepath.Abs("../../contrib/prometheus/parsley-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	test := fmt.Sprintf(`rule_files:
  - %q
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
%s    alert_rule_test:
      - eval_time: 6m
        alertname: ParsleyUpstreamRoot
        exp_alerts:
%s`, rules, inputs.String(), alerts.String())
	if err := os.WriteFile(filepath.Join(dir, "scraped_test.yaml"), []byte(test), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "scraped_test.yaml")).CombinedOutput(); err != nil {
		t.Errorf("the alert over the scraped series: %v\n%s\n%s", err, out, test)
	}
}
