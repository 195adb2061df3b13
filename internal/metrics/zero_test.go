package metrics

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/view"
)

// TestZeroRule: both sources of the one surface follow docs/metrics.md's
// rule for series of nothing. Over a snapshot where nothing is held and
// no position is known, every metric the page says is "absent" while
// unknown has no series, every other metric of the source's tables that
// the page says reads 0 has one, and no series is negative (a −1 would be
// a position reported as if known).
func TestZeroRule(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `((?:causalctl|parsley)_[a-z_]+)` \\|(.*)$")
	absent, zero := map[string]bool{}, map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		name, meaning := m[1], m[2]
		switch {
		case strings.Contains(meaning, "absent"):
			absent[name] = true
		case strings.Contains(meaning, "no series for") || strings.Contains(meaning, "a process past `--max-series`"):
			// present only sometimes: with what it names
		case regexp.MustCompile(`\b0 (when|while|included|with)\b|, else 0|every cause is exported`).MatchString(meaning):
			zero[name] = true
		}
	}
	if len(absent) < 9 || len(zero) < 12 {
		t.Fatalf("read %d absent and %d zero metrics from docs/metrics.md: the table changed shape", len(absent), len(zero))
	}

	live := &fixed{}
	live.set(view.Snapshot{State: engine.StateRunning, Scope: 1,
		Channels: []view.ChannelRow{{Channel: "orders/0", TopicID: ordersID, Partition: 0, Settled: -1, ReceivedUpTo: -1, HighWatermark: -1, LogEnd: -1}}})
	fl := &fixedProcesses{s: &fleet.Snapshot{Processes: []fleet.Process{{App: "a", Changelog: "a-__parsley.ordering-changelog",
		Tasks: []fleet.Task{{Task: 0, Topics: []fleet.TopicHolds{{Topic: "orders"}},
			Channels: []fleet.Channel{{Topic: "orders", Partition: 0, FedLag: -1, CommittedLag: -1}}}}}}}}
	for name, src := range map[string]Source{"live": LiveSource(live, Options{}, nil), "fleet": FleetSource(fl, HealthBounds{}, nil, Options{})} {
		mfs, err := NewRegistry(src).Gather()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]*dto.MetricFamily{}
		for _, mf := range mfs {
			got[strings.TrimSuffix(mf.GetName(), "_total")] = mf
			for _, m := range mf.GetMetric() {
				if v := m.GetGauge().GetValue() + m.GetCounter().GetValue(); v < 0 {
					t.Errorf("%s: %s%v = %v: a negative series of nothing", name, mf.GetName(), m.GetLabel(), v)
				}
			}
		}
		// The families of this source: those its collector describes.
		mine := map[string]bool{}
		for n := range absent {
			if mf := got[strings.TrimSuffix(n, "_total")]; mf != nil && len(mf.GetMetric()) > 0 {
				t.Errorf("%s: %s has %d series while unknown; docs/metrics.md says it is absent", name, n, len(mf.GetMetric()))
			}
		}
		for n := range zero {
			if ownedBy(n, name) {
				mine[n] = true
				if mf := got[strings.TrimSuffix(n, "_total")]; mf == nil || len(mf.GetMetric()) == 0 {
					t.Errorf("%s: %s has no series of nothing; docs/metrics.md says it reads 0", name, n)
				}
			}
		}
		if len(mine) == 0 {
			t.Errorf("%s: no zero metric of docs/metrics.md belongs to it", name)
		}
	}
}

// ownedBy says whether metric belongs to source ("live": watch's and the
// demo's causalctl_ series; "fleet": the exporter's parsley_ and
// causalctl_exporter_ series).
func ownedBy(metric, source string) bool {
	fleet := strings.HasPrefix(metric, "parsley_") || strings.HasPrefix(metric, "causalctl_exporter_")
	return fleet == (source == "fleet")
}

// TestOneSurface: the live driver's and the refresher's endpoints are one
// surface — the same paths, formats and health contract — whichever
// source feeds them.
func TestOneSurface(t *testing.T) {
	live, fl := &fixed{}, &fixedProcesses{}
	sources := map[string]Source{"live": LiveSource(live, Options{}, nil), "fleet": FleetSource(fl, HealthBounds{Failing: time.Minute}, nil, Options{})}
	for name, src := range sources {
		h := NewEndpoint(src, "causalctl "+name, nil)
		get := func(path, accept string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		if r := get("/healthz", ""); r.Code != http.StatusServiceUnavailable || !strings.HasPrefix(r.Body.String(), "starting: ") {
			t.Errorf("%s: /healthz before the first snapshot: %d %q", name, r.Code, r.Body)
		}
		if r := get("/", ""); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), "/metrics") || !strings.Contains(r.Body.String(), "/healthz") {
			t.Errorf("%s: /: %d %q", name, r.Code, r.Body)
		}
		post := httptest.NewRecorder()
		h.ServeHTTP(post, httptest.NewRequest(http.MethodPost, "/metrics", nil))
		if post.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: POST /metrics: %d", name, post.Code)
		}
	}
	live.set(twoChannels())
	fl.mu.Lock()
	fl.s = &fleet.Snapshot{Processes: []fleet.Process{{App: "a"}}, Taken: time.Now(), LastSuccess: time.Now()}
	fl.mu.Unlock()
	for name, src := range sources {
		h := NewEndpoint(src, "causalctl "+name, nil)
		for _, accept := range []string{"", "application/openmetrics-text; version=1.0.0"} {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", accept)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			open := strings.HasPrefix(rec.Header().Get("Content-Type"), "application/openmetrics-text")
			if rec.Code != http.StatusOK || open != (accept != "") || open != strings.HasSuffix(rec.Body.String(), "# EOF\n") {
				t.Errorf("%s: /metrics asked %q: %d %q", name, accept, rec.Code, rec.Header().Get("Content-Type"))
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
			t.Errorf("%s: /healthz with a snapshot: %d %q", name, rec.Code, rec.Body)
		}
	}
}
