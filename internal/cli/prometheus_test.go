package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	prom := lookTool(t, "prometheus")
	promtool := lookTool(t, "promtool")
	addr := os.Getenv("CAUSALCTL_METRICS_ADDR")
	if addr == "" {
		addr = testutil.FreeAddr(t)
	}
	_, stderr, stop := startAsync(t, false, "demo", "--no-tui", "--fault", "dangling", "--metrics-addr", addr)
	target := metricsURL(t, stderr)

	// promtool check metrics on a real scrape, in the text format it reads.
	_, scrape := httpGet(t, target+"/metrics")
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(scrape)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	rules, err := filepath.Abs("../../contrib/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: causalctl
    static_configs:
      - targets: [%q]
`, rules, strings.TrimPrefix(target, "http://")), 0o644); err != nil {
		t.Fatal(err)
	}
	web := testutil.FreeAddr(t)
	var log bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
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
			t.Logf("prometheus log:\n%s", log.String())
		}
	}()
	api := promAPI{t: t, base: "http://" + web}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := http.Get(api.base + "/-/ready"); err == nil {
			c.Body.Close()
			if c.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus is not ready:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

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

	// Every dashboard query is valid PromQL over what was scraped.
	d := testutil.ReadDashboard(t, "../../contrib/grafana/causalctl.json")
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			expr := strings.NewReplacer("$instance", ".*", "$__rate_interval", "5s").Replace(q.Expr)
			api.query(expr)
		}
	}
	if code := stop(); code != 130 {
		t.Errorf("demo exit %d, want 130 when stopped; stderr %s", code, stderr)
	}
}
