package metrics

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/parsley"
	ctest "github.com/causalctl/causalctl/internal/testutil"
)

// hostileMux serves the exporter's endpoints over src, on the test's clock.
func hostileMux(src Processes, now *time.Time, opts Options) func(path string) (int, string) {
	clock := func() time.Time { return *now }
	h := NewEndpoint(FleetSource(src, HealthBounds{Failing: time.Minute, Refresh: 15 * time.Second}, clock, opts), "causalctl exporter", clock)
	return func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
}

// withApps is the notifier snapshot with a process of each app added, its
// one task holding a record of a topic of the same name.
func withApps(apps ...string) *fleet.Snapshot {
	s := notifierSnapshot()
	for _, app := range apps {
		s.Processes = append(s.Processes, fleet.Process{App: app, Changelog: parsley.ChangelogTopic(app), Members: 1,
			Tasks: []fleet.Task{{Task: 0, Topics: []fleet.TopicHolds{{Topic: app, Held: 1}}}}})
	}
	return s
}

// TestExporterHostileNames: application ids and topic names that are not
// valid UTF-8, or hold control characters, sorted first and last, made the
// collector panic in MustNewConstMetric and lose the series after them —
// every application's, and causalctl_exporter_*. They are exported
// escaped, every other series with them, and counted.
func TestExporterHostileNames(t *testing.T) {
	src := &fixedProcesses{}
	now := scrapeTime
	get := hostileMux(src, &now, Options{})
	src.set(withApps("a\xffutf", "bad\xffutf-\x1b[31m", "zz\xfe\u202e"))
	code, body := get("/metrics")
	if code != 200 || !utf8.ValidString(body) || strings.ContainsAny(body, "\x1b\u202e") {
		t.Fatalf("/metrics: %d, valid UTF-8 %v:\n%s", code, utf8.ValidString(body), body)
	}
	for _, want := range []string{
		`parsley_records_held{app="notifier",task="1",topic="shipments"} 5`,
		`parsley_records_held{app="a\\xffutf",task="0",topic="a\\xffutf"} 1`,
		`parsley_records_held{app="bad\\xffutf-\\x1b[31m",task="0",topic="bad\\xffutf-\\x1b[31m"} 1`,
		`parsley_group_members{app="zz\\xfe\\u202e"} 1`,
		`causalctl_exporter_refresh_errors_total 3`,
		`causalctl_exporter_refresh_duration_seconds 0.25`,
		`causalctl_exporter_series_escaped 72`, // 24 series of each of the three
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Rendered safely, nothing was dropped: healthy.
	if code, why := get("/healthz"); code != 200 || why != "ok\n" {
		t.Errorf("/healthz: %d %q", code, why)
	}
}

// TestExporterDroppedSeriesUnhealthy: two application ids that escape
// alike (a raw \xff and the four characters \xff) would be one series
// twice: the registry drops it, every other series is served, and /healthz
// says so until a render drops nothing.
func TestExporterDroppedSeriesUnhealthy(t *testing.T) {
	src := &fixedProcesses{}
	now := scrapeTime
	get := hostileMux(src, &now, Options{})
	src.set(withApps("x\xff", `x\xff`))
	code, body := get("/metrics")
	for _, want := range []string{`parsley_records_held{app="notifier",task="1",topic="shipments"} 5`, `causalctl_exporter_refresh_errors_total 3`} {
		if code != 200 || !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics %d lacks %s", code, want)
		}
	}
	if code, why := get("/healthz"); code != 503 || !strings.HasPrefix(why, "the latest render dropped series: ") || strings.Count(why, "\n") != 1 {
		t.Errorf("/healthz after a render that dropped a series: %d %q", code, why)
	}
	src.set(notifierSnapshot())
	get("/metrics")
	if code, why := get("/healthz"); code != 200 || why != "ok\n" {
		t.Errorf("/healthz after a render that dropped nothing: %d %q", code, why)
	}
}

// TestProcessHealthStalled: a refresh that does not end (a broker that
// does not answer holds it for the request timeout, and the next) turns
// /healthz 503 --unhealthy-after past the refresh it was due, not only
// once it fails, 30 s later: the snapshot published before it says it is
// not failing.
func TestProcessHealthStalled(t *testing.T) {
	src := &fixedProcesses{}
	now := scrapeTime
	get := hostileMux(src, &now, Options{})
	s := notifierSnapshot()
	s.Taken = now
	src.set(s)
	now = now.Add(15*time.Second + time.Minute)
	if code, why := get("/healthz"); code != 200 {
		t.Errorf("a refresh running within the bound: %d %q", code, why)
	}
	now = now.Add(time.Second)
	if code, why := get("/healthz"); code != 503 || !strings.HasPrefix(why, "no refresh ended for 1m16s") {
		t.Errorf("a refresh running past the bound: %d %q", code, why)
	}
}

// TestProcessCollectorMaxSeriesRefusals: the start refusals, a series per
// reason and process (35 000 for 5 000 processes), count against
// --max-series: past it, a process exports only the reasons it meets and
// their total, and the sum by reason stays that of the uncapped scrape.
func TestProcessCollectorMaxSeriesRefusals(t *testing.T) {
	s := &fleet.Snapshot{}
	want := map[parsley.Reason]float64{}
	for i := range 10 {
		p := fleet.Process{App: fmt.Sprintf("app%02d", i), Members: 1, StartRefusals: map[parsley.Reason]int{},
			Tasks: []fleet.Task{{Task: 0, Topics: []fleet.TopicHolds{{Topic: "orders", Held: 1}}}}}
		if i%3 == 0 {
			p.StartRefusals[parsley.ReasonOrderingStateLost] = 1
			want[parsley.ReasonOrderingStateLost]++
		}
		s.Processes = append(s.Processes, p)
	}
	src := &fixedProcesses{}
	src.set(s)
	reasons := len(parsley.Reasons())
	for _, tc := range []struct {
		max, refusalSeries, folded int
		totals                     float64
	}{
		{0, 10 * reasons, 0, 0},
		// Each process: 2 series of its task, then its refusals, 15 in
		// all: 30 hold two processes; the refusals of app02 to app09
		// fold, only app03's, app06's and app09's one reason each
		// exported, and the eight totals.
		{30, 2*reasons + 3, 8, 3},
	} {
		c := NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{MaxSeries: tc.max})
		reg := registryOf(t, c)
		if n, err := testutil.GatherAndCount(reg, "parsley_process_start_refusals"); err != nil || n != tc.refusalSeries {
			t.Errorf("max %d: %d refusal series (%v), want %d", tc.max, n, err, tc.refusalSeries)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got, totals, folded := map[parsley.Reason]float64{}, 0.0, -1.0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				switch mf.GetName() {
				case "parsley_process_start_refusals":
					for _, l := range m.GetLabel() {
						if l.GetName() == "reason" {
							got[parsley.Reason(l.GetValue())] += m.GetGauge().GetValue()
						}
					}
				case "parsley_process_start_refusals_all":
					totals += m.GetGauge().GetValue()
				case "causalctl_exporter_refusals_folded":
					folded = m.GetGauge().GetValue()
				}
			}
		}
		if got[parsley.ReasonOrderingStateLost] != want[parsley.ReasonOrderingStateLost] || folded != float64(tc.folded) {
			t.Errorf("max %d: refusals by reason %v, want %v; %v processes folded, want %d", tc.max, got, want, folded, tc.folded)
		}
		if totals != tc.totals {
			t.Errorf("max %d: parsley_process_start_refusals_all sums to %v, want %v", tc.max, totals, tc.totals)
		}
	}
}

// TestHealthBodyEscaped: /healthz says the refresh error, which names
// application ids and topics: no raw control byte reaches a curl on a
// terminal.
func TestHealthBodyEscaped(t *testing.T) {
	src := &fixedProcesses{}
	now := scrapeTime
	get := hostileMux(src, &now, Options{})
	for _, s := range ctest.Hostile {
		failing := notifierSnapshot()
		failing.Taken = now
		failing.FailingSince, failing.LastError = now.Add(-2*time.Minute), s+": describing group "+s
		src.set(failing)
		code, body := get("/healthz")
		if code != 503 || !strings.Contains(body, "EVIL") || strings.Count(body, "\n") != 1 {
			t.Errorf("/healthz: %d %q", code, body)
		}
		ctest.NoRawHostile(t, "/healthz", body)
	}
}
