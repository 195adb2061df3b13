package metrics

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/causalctl/causalctl/internal/testutil"
)

// The rules and the dashboard shipped in contrib/, from this package.
const (
	alertsPath     = "../../contrib/prometheus/alerts.yaml"
	demoConfigPath = "../../contrib/prometheus/demo.yml"
	dashboardPath  = "../../contrib/grafana/causalctl.json"
)

var metricName = regexp.MustCompile(`\b(causalctl|go|process)_[a-z0-9_]+\b`)

// exported returns the name of every series the registry exports.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	src := &fixed{}
	src.set(twoChannels())
	mfs, err := NewRegistry(src).Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}

// checkNames fails for every metric named in expr that nothing exports: a
// rule or a panel over a misspelt or renamed metric is silently empty.
func checkNames(t *testing.T, where, expr string, names map[string]bool) {
	t.Helper()
	for _, n := range metricName.FindAllString(expr, -1) {
		if !names[n] {
			t.Errorf("%s: %s is not exported (expr %s)", where, n, expr)
		}
	}
	if !strings.Contains(expr, "causalctl_") && !strings.Contains(expr, "go_") && !strings.Contains(expr, "process_") {
		t.Errorf("%s: names no metric of ours: %s", where, expr)
	}
}

// TestAlertRules checks contrib/prometheus/alerts.yaml beyond what promtool
// does (.ci/run runs promtool check rules and test rules): the alerts the
// issue asks for are there, each with a severity and a summary, over
// metrics that exist.
func TestAlertRules(t *testing.T) {
	names := exported(t)
	rules := testutil.AlertRules(t, alertsPath)
	var alerts []string
	for _, r := range rules {
		alerts = append(alerts, r.Alert)
		checkNames(t, r.Alert, r.Expr, names)
		if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: want a severity label, a summary and a description: %+v", r.Alert, r)
		}
	}
	for _, want := range []string{"CausalctlHoldTooOld", "CausalctlFailedClosed", "CausalctlBlockedBeyondLogEnd", "CausalctlSettledNotMoving", "CausalctlDisconnected"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s in %v", want, alerts)
		}
	}
	for _, r := range rules {
		if r.Alert == "CausalctlBlockedBeyondLogEnd" && !strings.Contains(r.Expr, `cause="`+CauseBeyondLogEnd+`"`) {
			t.Errorf("%s does not select the cause %s: %s", r.Alert, CauseBeyondLogEnd, r.Expr)
		}
	}
}

// TestDashboard checks contrib/grafana/causalctl.json: it parses, panel
// ids are unique, panels fit the 24-column grid without overlapping, every
// panel queries the chosen data source and only metrics that exist, and
// the dashboard covers every causalctl metric. The e2e test runs each query
// against a real Prometheus.
func TestDashboard(t *testing.T) {
	names := exported(t)
	d := testutil.ReadDashboard(t, dashboardPath)
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q uid %q", d.Title, d.UID)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if !slices.Contains(vars, "datasource") || !slices.Contains(vars, "instance") {
		t.Errorf("template variables %v, want datasource and instance", vars)
	}
	ids := map[int]bool{}
	used := map[string]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: grid position %+v", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Fatalf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %+v, %d queries", p.Title, p.Datasource, len(p.Targets))
		}
		for _, q := range p.Targets {
			if q.RefID == "" {
				t.Errorf("panel %q: a query without refId", p.Title)
			}
			checkNames(t, p.Title, q.Expr, names)
			if !strings.Contains(q.Expr, `instance=~"$instance"`) {
				t.Errorf("panel %q ignores the instance variable: %s", p.Title, q.Expr)
			}
			for _, n := range metricName.FindAllString(q.Expr, -1) {
				used[n] = true
			}
		}
	}
	for n := range names {
		if strings.HasPrefix(n, "causalctl_") && !used[n] {
			t.Errorf("no panel shows %s", n)
		}
	}
}

// TestDemoAlertRules checks contrib/prometheus/demo.yml and the rule file it
// loads: the rules are alerts.yaml's but for shorter for: durations, and
// the intervals and durations let the demo's faults fire within a minute
// (the fault comes two seconds in; a rule fires one for: after its first
// evaluation true, within an evaluation interval of a scrape).
func TestDemoAlertRules(t *testing.T) {
	var cfg struct {
		Global struct {
			Scrape   string `yaml:"scrape_interval"`
			Evaluate string `yaml:"evaluation_interval"`
		} `yaml:"global"`
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	b, err := os.ReadFile(demoConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.ScrapeConfigs) != 1 || len(cfg.ScrapeConfigs[0].StaticConfigs) != 1 ||
		!slices.Equal(cfg.ScrapeConfigs[0].StaticConfigs[0].Targets, []string{"127.0.0.1:9464"}) {
		t.Errorf("demo.yml scrapes %+v, want 127.0.0.1:9464 only (what README.md tells the demo to serve)", cfg.ScrapeConfigs)
	}
	budget := 2 * time.Second // the fault's step
	for _, d := range []string{cfg.Global.Scrape, cfg.Global.Evaluate} {
		budget += parseDuration(t, d)
	}
	if len(cfg.RuleFiles) != 1 || filepath.IsAbs(cfg.RuleFiles[0]) {
		t.Fatalf("rule_files %v: want one file, relative to demo.yml", cfg.RuleFiles)
	}
	prod := map[string]testutil.AlertRule{}
	for _, r := range testutil.AlertRules(t, alertsPath) {
		prod[r.Alert] = r
	}
	demo := testutil.AlertRules(t, filepath.Join(filepath.Dir(demoConfigPath), cfg.RuleFiles[0]))
	var names []string
	for _, r := range demo {
		names = append(names, r.Alert)
		p, ok := prod[r.Alert]
		if !ok {
			t.Errorf("%s is not a rule of alerts.yaml", r.Alert)
			continue
		}
		if r.Expr != p.Expr || !maps.Equal(r.Labels, p.Labels) || !maps.Equal(r.Annotations, p.Annotations) {
			t.Errorf("%s differs from alerts.yaml's beyond its for: %+v\nwant %+v", r.Alert, r, p)
		}
		if d := budget + parseDuration(t, r.For); d > time.Minute {
			t.Errorf("%s fires %v after the demo starts, want within a minute", r.Alert, d)
		}
	}
	if !slices.Contains(names, "CausalctlBlockedBeyondLogEnd") {
		t.Errorf("the demo's rules %v lack CausalctlBlockedBeyondLogEnd, which --fault dangling trips", names)
	}
}

// parseDuration reads a Prometheus duration of the forms these files use
// ("" is none).
func parseDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d
}
