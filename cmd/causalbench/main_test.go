package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for causalbench when the harness
// starts itself as a child (the measuring wrapper, the floor).
func TestMain(m *testing.M) {
	if ok, code := runChild(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole harness at a small size so that it cannot rot:
// every scenario runs and passes its check (all records delivered, all
// counted), and the report holds a row for each and the targets. It
// asserts nothing about speed.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds causalctl and runs every scenario")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-n", "4000,7000", "-runs", "1", "-warmup", "0", "-dir", dir,
		"-procs", "3,5", "-state-entries", "3000", "-plot", dir + "/fleet.svg", "-svg", dir + "/cost.svg"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out, log bytes.Buffer
	if err := run(ctx, cfg, &out, &log); err != nil {
		t.Fatalf("harness: %v\n%s", err, log.String())
	}
	report := out.String()
	want := []string{"### 4000 records", "### 7000 records", "| floor |", "| replay |", "| replay-file |", "| capture |", "| replay-capture |",
		"| broker replay wall ≤ 1.25 × floor |", "| broker replay CPU ≤ 1.25 × floor |", "| replay peak RSS at 7000 within 10 % of 4000 |",
		"| capture replay ≥ 2 M records/s |", "| replay-offline |", "| check |", "| check-8 |",
		"| offline capture replay ≥ 2 M records/s |", "| check, one scope ≥ 1.0 M records/s |", "| check, eight scopes ≥ 0.8 M records/s |",
		"### Ordering state: 3000 changelog entries", "| state |", "| 3 |", "| 5 |",
		"| state over 3000 entries ≥ 1 M entries/s |", "| processes, 3 × 8 tasks ≤ 3 s |", "| exporter scrape, 3 × 8 tasks ≤ 100 ms |",
		"| exporter idle refresh diagnoses no task again | 0 diagnoses | yes |"}
	if cfg.Kcat != "" {
		want = append(want, "| kcat |", "| kcat-json |", "| broker replay wall < kcat |", "| capture writing ≥ 3 × faster than kcat -J |")
	}
	for _, w := range want {
		if !strings.Contains(report, w) {
			t.Errorf("report lacks %q:\n%s", w, report)
		}
	}
	svg, err := os.ReadFile(dir + "/fleet.svg")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), `class="line"`); !strings.HasPrefix(string(svg), "<svg") || n != 5 {
		t.Errorf("the plot has %d lines, want 5:\n%.300s", n, svg)
	}
	if _, err := os.Stat(dir + "/cost.svg"); err != nil {
		t.Errorf("-svg wrote no plot: %v", err)
	}
}

// TestChecksCatchWrongResults: the checks a run must pass fail on
// summaries and counts that miss records, hold some or failed.
func TestChecksCatchWrongResults(t *testing.T) {
	if err := wantSummary([]byte(`{"received":10,"delivered":10,"held":0,"channels":[]}`), 10); err != nil {
		t.Errorf("a complete summary: %v", err)
	}
	for _, bad := range []string{
		`{"received":9,"delivered":9,"held":0}`,
		`{"received":10,"delivered":8,"held":2}`,
		`{"received":10,"delivered":10,"held":0,"failed":{"code":"truncated"}}`,
		`not json`,
	} {
		if err := wantSummary([]byte(bad), 10); err == nil {
			t.Errorf("summary %s passed the check", bad)
		}
	}
	if err := wantCount([]byte("10\n"), 10); err != nil {
		t.Errorf("a full count: %v", err)
	}
	for _, bad := range []string{"9\n", "", "ten"} {
		if err := wantCount([]byte(bad), 10); err == nil {
			t.Errorf("count %q passed the check", bad)
		}
	}
	path := t.TempDir() + "/capture.ndjson"
	lines := `{"topic":"bench","partition":0,"position":0}
{"topic":"bench","partition":0,"offset":0,"value":"a"}
{"topic":"bench","partition":0,"offset":1,"value":"b"}
{"topic":"bench","partition":0,"position":2}
`
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := wantRecordLines(path, 2); err != nil {
		t.Errorf("two record lines: %v", err)
	}
	if err := wantRecordLines(path, 3); err == nil {
		t.Error("a capture with 2 records passed a check for 3")
	}
}

// TestFlags: sizes are a list, unknown scenarios and bad numbers are
// refused, and -only replay-capture runs capture first.
func TestFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-n", "10,20", "-only", "replay-capture", "-kcat", ""}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sizes) != 2 || cfg.Sizes[0] != 10 || cfg.Sizes[1] != 20 {
		t.Errorf("sizes %v, want [10 20]", cfg.Sizes)
	}
	var names []string
	for _, sc := range scenarios(scenarioEnv{}, cfg.Only) {
		names = append(names, sc.name)
	}
	if strings.Join(names, ",") != "capture,replay-capture" {
		t.Errorf("-only replay-capture runs %v, want capture then replay-capture", names)
	}
	if !wantsBench(cfg.Only) || wantsBench([]string{"state", "scrape"}) || !wants(nil, "processes") || wants([]string{"state"}, "processes") {
		t.Error("-only state,scrape seeds the bench topic, or -only state runs processes")
	}
	for _, bad := range [][]string{{"-n", "0"}, {"-n", "x"}, {"-only", "nope"}, {"-runs", "0"}, {"extra"}, {"-procs", "0"}, {"-procs", "2,x"}, {"-state-entries", "0"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("flags %v accepted", bad)
		}
	}
}

// TestSkipsKcatWhenAbsent: without kcat its scenarios are left out rather
// than failing the run.
func TestSkipsKcatWhenAbsent(t *testing.T) {
	for _, sc := range scenarios(scenarioEnv{kcat: ""}, nil) {
		if strings.HasPrefix(sc.name, "kcat") {
			t.Errorf("scenario %s runs without kcat", sc.name)
		}
	}
	if _, err := exec.LookPath("kcat"); err == nil {
		n := 0
		for _, sc := range scenarios(scenarioEnv{kcat: "kcat"}, nil) {
			if strings.HasPrefix(sc.name, "kcat") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d kcat scenarios with kcat, want 2", n)
		}
	}
}

// runs makes measurements of wall and CPU seconds and MiB of RSS.
func runs(wall, cpu, rss []float64) []measurement {
	var ms []measurement
	for i := range wall {
		ms = append(ms, measurement{Wall: time.Duration(wall[i] * 1e9), CPU: time.Duration(cpu[i] * 1e9), RSS: rss[i]})
	}
	return ms
}

// TestTargets evaluates the targets from medians, not from the best or
// worst run, and says no when a target is missed.
func TestTargets(t *testing.T) {
	small := sizeReport{Records: 1_000_000, Results: []result{
		{"floor", runs([]float64{1, 0.3, 0.4}, []float64{0.3, 0.3, 0.3}, []float64{80, 80, 80})},
		// median wall 0.45 (1.125× the floor's 0.4); the 9 s outlier must not count.
		// CPU 0.45: 1.5× the floor's, within 2× but not the 1.25×.
		{"replay", runs([]float64{0.45, 9, 0.44}, []float64{0.45, 0.45, 0.45}, []float64{100, 100, 100})},
		{"kcat", runs([]float64{1, 1, 1}, []float64{0.4, 0.4, 0.4}, []float64{120, 120, 120})},
		{"capture", runs([]float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5, 0.5}, []float64{50, 50, 50})},
		{"kcat-json", runs([]float64{1, 1, 1}, []float64{1, 1, 1}, []float64{40, 40, 40})},
		{"replay-capture", runs([]float64{0.4, 0.4, 0.4}, []float64{0.4, 0.4, 0.4}, []float64{60, 60, 60})},
	}}
	big := sizeReport{Records: 4_000_000, Results: []result{
		{"replay", runs([]float64{2}, []float64{2}, []float64{105})},
		{"replay-capture", runs([]float64{2}, []float64{2}, []float64{90})},
	}}
	got := map[string]bool{}
	for _, tg := range targets([]sizeReport{small, big}, false) {
		got[tg.what] = tg.met
	}
	want := map[string]bool{
		"broker replay wall ≤ 1.25 × floor":                         true,
		"broker replay wall < kcat":                                 true,
		"broker replay CPU ≤ 1.25 × floor":                          false, // 0.45 vs 0.3
		"replay peak RSS ≤ 150 MiB":                                 true,
		"replay peak RSS at 4000000 within 10 % of 1000000":         true, // 105 vs 100
		"replay-capture peak RSS ≤ 150 MiB":                         true,
		"replay-capture peak RSS at 4000000 within 10 % of 1000000": false, // 90 vs 60
		"capture replay ≥ 2 M records/s":                            true,  // 2.5 M/s
		"capture writing ≥ 3 × faster than kcat -J":                 false, // 2×
		"replay -f wall ≤ 0.6 × broker replay":                      false, // 0.4 vs 0.45: 0.89×
	}
	for what, met := range want {
		if g, ok := got[what]; !ok || g != met {
			t.Errorf("%s: met=%v (evaluated: %v), want %v", what, g, ok, met)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d targets evaluated, want %d: %v", len(got), len(want), got)
	}
}

// TestOfflineTargets: the offline replay and check targets, judged on the
// best run with -best and on the median without, and check's memory only
// at 10 M records or more.
func TestOfflineTargets(t *testing.T) {
	small := sizeReport{Records: 1_000_000, Results: []result{
		// best 0.45 s (2.2 M/s), median 0.6 s (1.7 M/s)
		{"replay-offline", runs([]float64{0.45, 0.6, 0.9}, []float64{0.9, 0.9, 0.9}, []float64{60, 60, 60})},
		{"check", runs([]float64{0.9, 1.5, 1.6}, []float64{1, 1, 1}, []float64{100, 100, 100})}, // 1.1 M/s best
		{"check-8", runs([]float64{1.3, 1.4, 2}, []float64{1, 1, 1}, []float64{100, 100, 100})}, // 0.77 M/s best
	}}
	big := sizeReport{Records: 10_000_000, Results: []result{
		{"replay-offline", runs([]float64{5}, []float64{9}, []float64{62})},
		{"check", runs([]float64{10}, []float64{10}, []float64{900})},
		{"check-8", runs([]float64{12}, []float64{10}, []float64{1100})},
	}}
	for _, c := range []struct {
		best bool
		want map[string]bool
	}{
		{true, map[string]bool{
			"offline capture replay ≥ 2 M records/s":                   true,
			"check, one scope ≥ 1.0 M records/s":                       true,
			"check, eight scopes ≥ 0.8 M records/s":                    false,
			"check, one scope peak RSS at 10000000 records ≤ 1 GiB":    true,
			"check, eight scopes peak RSS at 10000000 records ≤ 1 GiB": false,
		}},
		{false, map[string]bool{
			"offline capture replay ≥ 2 M records/s": false,
			"check, one scope ≥ 1.0 M records/s":     false,
		}},
	} {
		got := map[string]bool{}
		for _, tg := range targets([]sizeReport{small, big}, c.best) {
			got[tg.what] = tg.met
		}
		for what, met := range c.want {
			if g, ok := got[what]; !ok || g != met {
				t.Errorf("best=%v: %s: met=%v (evaluated: %v), want %v", c.best, what, g, ok, met)
			}
		}
	}
}

// TestPlot: the cost-per-record plot draws a CPU and a wall line for each
// scenario measured at every size and refuses a single size; the fleet plot
// draws a line per measured cost, leaving out what was not measured.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	one := []sizeReport{{Records: 1_000_000, Results: []result{{"replay", runs([]float64{1}, []float64{1}, []float64{50})}}}}
	if err := writePlot(dir+"/one.svg", config{Runs: 1}, one); err == nil {
		t.Error("a plot of one size was written")
	}
	two := append(one, sizeReport{Records: 4_000_000, Results: []result{
		{"replay", runs([]float64{4}, []float64{4}, []float64{50})},
		{"check", runs([]float64{9}, []float64{9}, []float64{90})}, // not at the first size
	}})
	if err := writePlot(dir+"/two.svg", config{Runs: 1}, two); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(dir + "/two.svg")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), `class="line"`); n != 2 || !strings.Contains(string(svg), ">replay<") || strings.Contains(string(svg), ">check<") {
		t.Errorf("the cost plot has %d lines, want replay's CPU and wall only:\n%s", n, svg)
	}
	if !strings.HasSuffix(string(svg), "</svg>\n") {
		t.Error("the cost plot is not ended")
	}

	fl := []fleetSize{
		{Procs: 10, Processes: &result{"processes", runs([]float64{0.1}, []float64{0.05}, []float64{40})}},
		{Procs: 100, Processes: &result{"processes", runs([]float64{0.5}, []float64{0.3}, []float64{60})}},
	}
	doc := fleetSVG(fleetCurves(fl)).String()
	if n := strings.Count(doc, `class="line"`); n != 2 || strings.Contains(doc, "exporter") {
		t.Errorf("the fleet plot has %d lines, want the processes' wall and CPU only:\n%s", n, doc)
	}
}

// TestFleetTargets: the fleet targets take the median, or the best run
// with -best.
func TestFleetTargets(t *testing.T) {
	fl := fleetReport{Fleet: []fleetSize{{Procs: 200,
		Processes: &result{"processes", runs([]float64{2, 3.5, 4}, []float64{1, 1, 1}, []float64{60, 60, 60})},
		Scrape:    &scrapeResult{Scrapes: []time.Duration{150e6, 90e6, 120e6}},
	}}}
	for _, c := range []struct {
		best bool
		want bool
	}{{false, false}, {true, true}} {
		got := map[string]bool{}
		for _, tg := range fleetTargets(fl, c.best) {
			got[tg.what] = tg.met
		}
		for _, what := range []string{"processes, 200 × 8 tasks ≤ 3 s", "exporter scrape, 200 × 8 tasks ≤ 100 ms"} {
			if met, ok := got[what]; !ok || met != c.want {
				t.Errorf("best=%v: %s: met=%v (evaluated: %v), want %v", c.best, what, met, ok, c.want)
			}
		}
	}
}

// TestScalePlot: the scale plot needs replay-tasks and replay-shards at
// every size, draws the one-core line through the measured CPU, and a
// shard's line at the shards' CPU divided by their count.
func TestScalePlot(t *testing.T) {
	dir := t.TempDir()
	cfg := config{Runs: 1, Shards: 3, Channels: 6}
	reps := []sizeReport{
		{Records: 1_000_000, Results: []result{{"replay-tasks", runs([]float64{1}, []float64{1.2}, []float64{33})}, {"replay-shards", runs([]float64{3}, []float64{3.6}, []float64{33})}}},
		{Records: 4_000_000, Results: []result{{"replay-tasks", runs([]float64{4}, []float64{4.8}, []float64{33})}}},
	}
	if err := writeScalePlot(dir+"/missing.svg", cfg, reps); err == nil || !strings.Contains(err.Error(), "replay-shards was not measured at 4000000") {
		t.Errorf("a size without replay-shards: %v", err)
	}
	reps[1].Results = append(reps[1].Results, result{"replay-shards", runs([]float64{12}, []float64{14.4}, []float64{33})})
	if err := writeScalePlot(dir+"/scale.svg", cfg, reps); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/scale.svg")
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	if n := strings.Count(svg, `class="line"`); n != 4 || !strings.Contains(svg, "1.20 µs CPU a record") || !strings.HasSuffix(svg, "</svg>\n") {
		t.Errorf("the scale plot has %d lines, want 4 at 1.20 µs a record:\n%s", n, svg)
	}
}

// TestStoreMemoryTargets: state, processes and the exporter are each
// judged against twice the live stores they hold, when the seed counted
// them — and only then.
func TestStoreMemoryTargets(t *testing.T) {
	const mib = 1 << 20
	fl := fleetReport{
		State: &stateReport{Entries: 10, LiveBytes: 100 * mib, Result: result{"state", runs([]float64{1}, []float64{1}, []float64{150})}},
		Fleet: []fleetSize{{Procs: 200, LiveBytes: 10 * mib,
			Processes: &result{"processes", runs([]float64{1}, []float64{1}, []float64{25})},
			Scrape:    &scrapeResult{Scrapes: []time.Duration{1e6}, RSS: 15}}},
	}
	got := map[string]target{}
	for _, tg := range fleetTargets(fl, false) {
		got[tg.what] = tg
	}
	for what, want := range map[string]bool{"state": true, "processes": false, "exporter": true} {
		tg, ok := got[what+" peak RSS ≤ 2 × the live store's bytes"]
		if !ok || tg.met != want {
			t.Errorf("%s: %+v (evaluated: %v), want met=%v", what, tg, ok, want)
		}
	}
	fl.Fleet[0].LiveBytes = 0
	for _, tg := range fleetTargets(fl, false) {
		if strings.HasPrefix(tg.what, "processes peak RSS") || strings.HasPrefix(tg.what, "exporter peak RSS") {
			t.Errorf("judged without the stores' bytes: %+v", tg)
		}
	}
}
