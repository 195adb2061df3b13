package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/testutil"
)

// lookTool finds a tool the end-to-end tests need. It may be missing only
// outside CI (.ci/run installs it): there the test is skipped.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs Debian's prometheus package", name)
		}
		t.Skipf("%s is not installed (Debian's prometheus package)", name)
	}
	return path
}

// startPrometheus runs prometheus with the config file until the test
// ends, and returns its API once it is ready.
func startPrometheus(t *testing.T, prom, config string) promAPI {
	t.Helper()
	web := testutil.FreeAddr(t)
	log := &testutil.SyncBuffer{}
	// At info level it says when it is ready: the test waits on that line.
	cmd := exec.Command(prom, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(t.TempDir(), "data"),
		"--web.listen-address="+web, "--log.level=info")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus (%s) log:\n%s", config, log.String())
		}
	})
	log.Wait(t, 60*time.Second, "prometheus ready", func(s string) bool {
		return strings.Contains(s, "Server is ready to receive web requests")
	})
	return promAPI{t: t, base: "http://" + web}
}

// promAPI queries a Prometheus server's HTTP API.
type promAPI struct {
	t    *testing.T
	base string
}

type promResult struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// alertAnnotation is annotation name of the firing alert named alert.
func (p promAPI) alertAnnotation(alert, name string) string {
	p.t.Helper()
	code, body := httpGet(p.t, p.base+"/api/v1/alerts")
	var r struct {
		Data struct {
			Alerts []struct {
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
				State       string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		p.t.Fatalf("alerts: %d %s", code, body)
	}
	for _, a := range r.Data.Alerts {
		if a.Labels["alertname"] == alert && a.State == "firing" {
			return a.Annotations[name]
		}
	}
	p.t.Fatalf("no firing %s in %s", alert, body)
	return ""
}

// query runs an instant query; a query Prometheus refuses fails the test.
func (p promAPI) query(q string) promResult {
	p.t.Helper()
	code, body := httpGet(p.t, p.base+"/api/v1/query?query="+url.QueryEscape(q))
	var r promResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		p.t.Fatalf("query %s: %d %s", q, code, body)
	}
	if r.Status != "success" {
		p.t.Fatalf("query %s: %s: %s", q, r.ErrorType, r.Error)
	}
	return r
}

// await runs q until it returns a series whose value ok accepts.
func (p promAPI) await(what, q string, ok func(float64) bool) {
	p.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		r := p.query(q)
		for _, s := range r.Data.Result {
			var v float64
			if str, isStr := s.Value[1].(string); isStr {
				fmt.Sscan(str, &v)
			}
			if ok(v) {
				return
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: %s returns %+v", what, q, r.Data.Result)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestPrometheusScrapesDemo is the end-to-end check: Debian's
// prometheus, with the contrib alert rules loaded, scrapes `demo
// --fault dangling --metrics-addr` on 127.0.0.1 (a free port, or
// CAUSALCTL_METRICS_ADDR: .ci/run gives 127.0.0.1:9464). Its HTTP API then
// has the held records and the oldest hold's age, the beyond-log-end
// rule's expression returns the dangling head and the alert is pending,
// every dashboard query is valid PromQL, and promtool accepts a scrape.
func TestPrometheusScrapesDemo(t *testing.T) {
	lookTool(t, "prometheus")
	addr := os.Getenv("CAUSALCTL_METRICS_ADDR")
	if addr == "" {
		addr = testutil.FreeAddr(t)
	}
	_, stderr, stop := startAsync(t, false, "demo", "--no-tui", "--fault", "dangling", "--metrics-addr", addr)
	target := metricsURL(t, stderr)
	checkMetrics(t, target)

	rules, err := filepath.Abs("../../contrib/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	api := startPrometheusFor(t, "causalctl", target, rules)

	api.await("the scrape", `up{job="causalctl"}`, func(v float64) bool { return v == 1 })
	api.await("held records", `causalctl_held_records{job="causalctl"}`, func(v float64) bool { return v > 0 })
	api.await("the oldest hold", `causalctl_oldest_hold_age_seconds{job="causalctl"}`, func(v float64) bool { return v > 0 })
	api.await("a channel's positions", `causalctl_channel_log_end_offset{job="causalctl",topic="payments",partition="1"}`, func(v float64) bool { return v > 0 })

	// The dangling claim: the beyond-log-end rule's own expression returns
	// it, and the alert is pending (its for: has not passed yet).
	var expr string
	for _, r := range testutil.AlertRules(t, rules) {
		if r.Alert == "CausalctlBlockedBeyondLogEnd" {
			expr = r.Expr
		}
	}
	if expr == "" {
		t.Fatal("no CausalctlBlockedBeyondLogEnd rule")
	}
	api.await("the beyond-log-end rule", expr, func(v float64) bool { return v >= 1 })
	api.await("the alert", `ALERTS{alertname="CausalctlBlockedBeyondLogEnd",alertstate="pending"}`, func(v float64) bool { return v == 1 })
	if r := api.query(`causalctl_failed_closed{job="causalctl"} == 1`); len(r.Data.Result) != 0 {
		t.Errorf("failed closed under the dangling fault: %+v", r.Data.Result)
	}

	// contrib/prometheus/demo.yml as README.md gives it: its rule file is
	// found beside it and, with the demo's short for:, the alert fires
	// while the demo runs, not only pends. Off CI's 127.0.0.1:9464 (the
	// address it scrapes), a copy scrapes this demo, beside a copy of the
	// rule file.
	demoConfig, err := filepath.Abs("../../contrib/prometheus/demo.yml")
	if err != nil {
		t.Fatal(err)
	}
	if hostport := strings.TrimPrefix(target, "http://"); hostport != "127.0.0.1:9464" {
		demoConfig = copyDemoConfig(t, demoConfig, hostport)
	}
	demoAPI := startPrometheus(t, lookTool(t, "prometheus"), demoConfig)
	demoAPI.await("demo.yml's scrape", `up{job="causalctl"}`, func(v float64) bool { return v == 1 })
	demoAPI.await("demo.yml's alert", `ALERTS{alertname="CausalctlBlockedBeyondLogEnd",alertstate="firing"}`, func(v float64) bool { return v == 1 })

	// Every dashboard query is valid PromQL over what was scraped.
	d := testutil.ReadDashboard(t, "../../contrib/grafana/causalctl.json")
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			expr := strings.NewReplacer("$instance", ".*", "$__rate_interval", "5s").Replace(q.Expr)
			api.query(expr)
		}
	}
	if code := stop(); code != 0 {
		t.Errorf("demo exit %d, want 0 when stopped; stderr %s", code, stderr)
	}
}

// copyDemoConfig copies demo.yml, scraping hostport instead of
// 127.0.0.1:9464, and the rule file it names into a directory of the
// test's, and returns the copy's path.
func copyDemoConfig(t *testing.T, config, hostport string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"127.0.0.1:9464"`)) {
		t.Fatalf("%s does not scrape 127.0.0.1:9464", config)
	}
	b = bytes.ReplaceAll(b, []byte(`"127.0.0.1:9464"`), []byte(strconv.Quote(hostport)))
	if err := os.WriteFile(filepath.Join(dir, "demo.yml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(filepath.Join(filepath.Dir(config), "demo-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo-alerts.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "demo.yml")
}

// startPrometheusFor runs startPrometheus on a configuration of its own:
// the rule files loaded, target (http://HOST:PORT) scraped as job and the
// rules evaluated every second.
func startPrometheusFor(t *testing.T, job, target string, rules ...string) promAPI {
	t.Helper()
	config := filepath.Join(t.TempDir(), "prometheus.yml")
	files := ""
	for _, r := range rules {
		files += fmt.Sprintf("  - %s\n", r)
	}
	if err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
%sscrape_configs:
  - job_name: %s
    static_configs:
      - targets: [%q]
`, files, job, strings.TrimPrefix(target, "http://")), 0o644); err != nil {
		t.Fatal(err)
	}
	return startPrometheus(t, lookTool(t, "prometheus"), config)
}

// checkMetrics runs promtool check metrics on a scrape of target, in the
// text format it reads.
func checkMetrics(t *testing.T, target string) string {
	t.Helper()
	promtool := lookTool(t, "promtool")
	_, scrape := httpGet(t, target+"/metrics")
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(scrape)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	return scrape
}

// TestPrometheusScrapesExporter is the exporter's end-to-end check (issue
// 23's done-when): `exporter` follows `demo --fault dangling`'s notifier (a
// Parsley-format process), a real Prometheus scrapes it with
// contrib/prometheus/parsley-alerts.yaml loaded (its for: durations cut to
// 5s, so that it fires within the test), and its HTTP API has the
// notifier's held records per task, the beyond-log-end head of the task
// owning payments/1, and ParsleyHeadBeyondLogEnd firing for that task
// only; promtool accepts a scrape; every query of the dashboard is valid.
// The exporter listens on a free port, or CAUSALCTL_METRICS_ADDR.
func TestPrometheusScrapesExporter(t *testing.T) {
	lookTool(t, "prometheus")
	broker := testutil.FreeAddr(t)
	demoOut, _, stopDemo := startAsync(t, false, "demo", "--no-tui", "--fault", "dangling", "--listen", broker)
	demoOut.Wait(t, 20*time.Second, "the demo's broker", func(s string) bool { return strings.Contains(s, "listening on "+broker) })
	addr := os.Getenv("CAUSALCTL_METRICS_ADDR")
	if addr == "" {
		addr = testutil.FreeAddr(t)
	}
	// The pages' external URL is the exporter's own address, so that the
	// alerts' links (their page annotation) can be followed here.
	_, stderr, stop := startAsync(t, false, "exporter", "--brokers", broker, "--metrics-addr", addr,
		"--refresh-interval", "500ms", "--discover-interval", "2s", "--web.external-url", "http://"+addr+"/")
	target := metricsURL(t, stderr)

	// The rules as shipped, but firing after 5s instead of minutes.
	shipped, err := os.ReadFile("../../contrib/prometheus/parsley-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	short := regexp.MustCompile(`(?m)^(\s+for:) \S+$`).ReplaceAll(shipped, []byte("$1 5s"))
	if bytes.Equal(short, shipped) {
		t.Fatal("parsley-alerts.yaml has no for: to shorten")
	}
	rules := filepath.Join(t.TempDir(), "parsley-alerts.yaml")
	if err := os.WriteFile(rules, short, 0o644); err != nil {
		t.Fatal(err)
	}
	api := startPrometheusFor(t, "parsley", target, rules)
	api.await("the scrape", `up{job="parsley"}`, func(v float64) bool { return v == 1 })
	api.await("the notifier's changelog followed", `causalctl_exporter_changelogs_followed{job="parsley"}`, func(v float64) bool { return v == 1 })
	api.await("held records of task 1", `sum by (task) (parsley_records_held{job="parsley",app="notifier",task="1"})`, func(v float64) bool { return v > 0 })
	api.await("the notifier's tasks", `count(count by (task) (parsley_records_held{job="parsley",app="notifier"}))`, func(v float64) bool { return v == 3 })
	api.await("the group's member", `parsley_group_members{job="parsley",app="notifier"}`, func(v float64) bool { return v == 1 })
	api.await("the dangling head", `parsley_held_heads{job="parsley",app="notifier",task="1",cause="beyond-log-end"}`, func(v float64) bool { return v == 1 })
	api.await("the alert", `ALERTS{alertname="ParsleyHeadBeyondLogEnd",alertstate="firing",app="notifier",task="1"}`, func(v float64) bool { return v == 1 })
	if r := api.query(`ALERTS{alertname="ParsleyHeadBeyondLogEnd",task!="1"}`); len(r.Data.Result) != 0 {
		t.Errorf("beyond-log-end alerts for other tasks: %+v", r.Data.Result)
	}
	if r := api.query(`ALERTS{alertname=~"ParsleyCorruptState|ParsleyHoldingUnassigned|ParsleyExporterNotRefreshing"}`); len(r.Data.Result) != 0 {
		t.Errorf("alerts that should not fire: %+v", r.Data.Result)
	}
	// The alert links to the notifier's page, and a browser opened at the
	// exporter's / reaches that page in one click: the notifier first, then
	// the root of its holds and the next step, as holds --app says them.
	page := api.alertAnnotation("ParsleyHeadBeyondLogEnd", "page")
	if want := "http://" + addr + "/processes/" + demo.NotifierApp; page != want {
		t.Errorf("the alert's page annotation %q, want %q", page, want)
	}
	followAlertInBrowser(t, broker, target, page)
	taskPage := api.alertAnnotation("ParsleyHeadBeyondLogEnd", "task_page")
	if want := page + "/tasks/1"; taskPage != want {
		t.Errorf("the alert's task_page annotation %q, want %q", taskPage, want)
	} else if code, body := httpGet(t, taskPage); code != 200 || !strings.Contains(body, "beyond-log-end") {
		t.Errorf("the alert's task page %s: %d, no beyond-log-end head:\n%s", taskPage, code, body)
	}
	scrape := checkMetrics(t, target)
	if !strings.Contains(scrape, `parsley_held_heads{app="notifier",cause="beyond-log-end",task="1"} 1`) {
		t.Errorf("the scrape lacks the dangling head:\n%s", scrape)
	}
	if code, body := httpGet(t, target+"/healthz"); code != 200 {
		t.Errorf("healthz %d %s", code, body)
	}

	d := testutil.ReadDashboard(t, "../../contrib/grafana/parsley.json")
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			expr := strings.NewReplacer("$instance", ".*", "$app", ".*", "$task", ".*", "$__rate_interval", "5s").Replace(q.Expr)
			api.query(expr)
		}
	}
	if code := stop(); code != 0 || !strings.Contains(stderr.String(), "exporter stopped after ") {
		t.Errorf("exporter exit %d, want 0 and its stop line when stopped; stderr %s", code, stderr)
	}
	stopDemo()
}
