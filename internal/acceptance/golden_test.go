package acceptance

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/view"
)

// update rewrites the goldens of testdata/faults: go test
// ./internal/acceptance -run TestEveryWayTellsOneStory -update, then
// review the diff.
var update = flag.Bool("update", false, "rewrite the goldens in testdata/faults/*/*.golden")

// The goldens of every demo fault through every entry point:
// testdata/faults/FAULT/ENTRY.golden holds what the entry point prints of
// the demo's notifier under the fault, its volatile parts (ages, times,
// topic and member ids) normalised.

// Volatile parts of the outputs and what stands for them.
var (
	goldenUUID     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	goldenTime     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	goldenAge      = regexp.MustCompile(`\b\d+(\.\d+)?(µs|ms|s|m|h|d)(\d+(\.\d+)?(ms|s|m|h))*\b`)
	goldenMember   = regexp.MustCompile(`\bkgo-[0-9a-f]+\b`)
	goldenAgeValue = regexp.MustCompile(`(?m)^(parsley_records_held_age_max_seconds\{[^}]*\}) [0-9.e+-]+$`)
	// How the notifier batched its writes: the changelog's length.
	goldenEntries = regexp.MustCompile(`(?m)^(parsley_changelog_entries_read_total\{[^}]*\}) \d+$`)
	goldenReadTo  = regexp.MustCompile(`changelog read to \d+ of \d+`)
	// A clock in text form, whose entries come in topic ID order: sorted.
	goldenClock = regexp.MustCompile(`[A-Za-z0-9._-]+/\d+=\d+(,[A-Za-z0-9._-]+/\d+=\d+)+`)
	// The decoder's words on the undecodable header, which cuts random
	// topic ID bytes short.
	goldenDetail = regexp.MustCompile(`truncated: [a-z][^\n—"]*`)
	// Positions and counts: where the demo's notifier stopped when it
	// failed closed depends on how it batched (it stops every task at
	// once, and a channel it had not fed yet has no position), so under
	// the undecodable fault only the positions of records
	// (CHANNEL@OFFSET) and partitions are kept, and the lines of each
	// channel's positions (state's, the exporter's lag series, the live
	// view's rows and stamp) are left out.
	goldenChannelLine = regexp.MustCompile(`(?m)^(›?\s+[a-z]+/\d+\s.*|parsley_channel_.*|stamp\s.*)\n`)
	goldenNumber      = regexp.MustCompile(`(?:^|[^@/\w.])(\d+)\b`)
	// Runs of spaces aligning columns whose widths the ages set.
	goldenSpaces = regexp.MustCompile(`  +`)
)

// normalise replaces the volatile parts of out, what the demo's notifier
// wrote under fault.
func normalise(fault, out string) string {
	out = goldenAgeValue.ReplaceAllString(out, "$1 AGE")
	out = goldenUUID.ReplaceAllString(out, "UUID")
	out = goldenTime.ReplaceAllString(out, "TIME")
	out = goldenMember.ReplaceAllString(out, "MEMBER")
	out = goldenEntries.ReplaceAllString(out, "$1 N")
	out = goldenReadTo.ReplaceAllString(out, "changelog read to N of N")
	out = goldenClock.ReplaceAllStringFunc(out, func(c string) string {
		es := strings.Split(c, ",")
		slices.Sort(es)
		return strings.Join(es, ",")
	})
	out = goldenDetail.ReplaceAllString(out, "truncated: DETAIL ")
	out = goldenAge.ReplaceAllString(out, "AGE")
	if fault == string(demo.FaultUndecodable) {
		out = positionsOut(goldenChannelLine.ReplaceAllString(out, ""))
	}
	out = goldenSpaces.ReplaceAllString(out, "  ")
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// positionsOut replaces the numbers of out by N but for exit codes,
// task numbers, labels, series' values (the lag series are left out),
// partitions and record offsets (CHANNEL@OFFSET).
func positionsOut(out string) string {
	var b strings.Builder
	last := 0
	for _, m := range goldenNumber.FindAllStringSubmatchIndex(out, -1) {
		start := m[2] // the number, after the character before it
		before := strings.ToLower(out[max(0, start-5):start])
		if strings.HasSuffix(before, "exit ") || strings.HasSuffix(before, "task ") || strings.HasSuffix(before, "=\"") || strings.HasSuffix(before, "} ") {
			continue // an exit code, a task, a label, a series' value
		}
		b.WriteString(out[last:start])
		b.WriteString("N")
		last = m[3]
	}
	b.WriteString(out[last:])
	return b.String()
}

// checkFaultGoldens compares what every entry point prints of the
// notifier at addr (under fault) with testdata/faults/fault/*.golden.
func checkFaultGoldens(t *testing.T, fault, addr string, now time.Time, snap view.Snapshot) {
	t.Helper()
	text := func(args ...string) string {
		code, out, stderr := runAt(t, addr, now, args...)
		return fmt.Sprintf("$ causalctl %s\n# exit %d\n%s# stderr\n%s", strings.Join(args, " "), code, out, stderr)
	}
	got := map[string]string{
		"state":            text("state", "--app", demo.NotifierApp),
		"holds-app":        text("holds", "--app", demo.NotifierApp),
		"holds-from-group": text("holds", "-t", "orders,payments,shipments", "--from-group", demo.NotifierApp),
		"processes":        text("processes", "--app", demo.NotifierApp),
		"exporter":         exporterText(t, addr, now),
		"watch-app":        watchText(snap),
	}
	for entry, out := range got {
		file := filepath.Join("testdata", "faults", fault, entry+".golden")
		out = normalise(fault, out)
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v (run with -update to write it)", file, err)
			continue
		}
		if out != string(want) {
			t.Errorf("%s: %s differs from the golden (run with -update and review the diff):\n--- got\n%s\n--- want\n%s", fault, entry, out, want)
		}
	}
}

// exporterText is the exporter's series of the notifier after one
// refresh.
func exporterText(t *testing.T, addr string, now time.Time) string {
	t.Helper()
	return strings.Join(exporterSeries(t, addr, demo.NotifierApp, now), "\n") + "\n"
}

// exporterSeries are the parsley_ series the exporter's collector
// exports of the processes whose application id starts with app after
// one refresh of its tracker, scraped at now, as sorted lines
// NAME{LABEL="VALUE",…} VALUE. (The exporter's own series, of its
// timings, are left out.)
func exporterSeries(t *testing.T, addr, app string, now time.Time) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tr := fleet.New(fleet.Config{Client: cl, AppPrefix: app, Now: func() time.Time { return now }})
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.Refresh(ctx); err != nil {
		t.Fatalf("%s: the exporter's refresh: %v", app, err)
	}
	mfs, err := metrics.NewRegistry(metrics.FleetSource(tr, metrics.HealthBounds{}, func() time.Time { return now }, metrics.Options{})).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "parsley_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %v", mf.GetName(), strings.Join(labels, ","), value(m)))
		}
	}
	slices.Sort(lines)
	return lines
}

// watchText is watch --app's view of snap as a wide terminal shows it
// (no colour; wide enough that no clock wraps), and its status line.
func watchText(snap view.Snapshot) string {
	m := tui.NewModel(tui.NewStyles(lipgloss.NewRenderer(io.Discard), false), tui.Options{Title: snap.Title})
	m.Update(tea.WindowSizeMsg{Width: 400, Height: 60})
	m.Update(tui.SnapshotMsg{Snapshot: snap})
	st := live.StatusOf(&snap)
	screen := strings.TrimRight(m.View(), "\n ")
	for strings.Contains(screen, "\n\n\n") {
		screen = strings.ReplaceAll(screen, "\n\n\n", "\n\n") // the empty rows of a tall screen
	}
	return screen + "\n# status line\n" + st.String() + "\n"
}
