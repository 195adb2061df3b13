package demo_test

import (
	"context"
	"encoding/json"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	democmd "github.com/causalctl/causalctl/internal/cli/demo"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/replay"
)

func streams() (*iostreams.IOStreams, *testutil.SyncBuffer, *testutil.SyncBuffer) {
	ios, _, _, _ := iostreams.Test()
	out, errOut := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	ios.Out, ios.ErrOut = out, errOut
	return ios, out, errOut
}

func run(ctx context.Context, ios *iostreams.IOStreams, args ...string) int {
	f := cmdutiltest.Factory(ios, "")
	return cli.Run(ctx, f, args)
}

var (
	addrRE   = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	statusRE = regexp.MustCompile(`(?m)^\[ *\d+s\] produced=\d+ state=running scope=7 tasks=3 task_heads=[0-9:,]+ task_held=[0-9:,]+ received=\d+ delivered=\d+ dropped=\d+ ` +
		`held=\d+ held_channels=\d+ oldest_hold=\S+( causes=[a-z:,0-9-]+)? in=\d+/s out=\d+/s lag=\d+$`)
	tookRE = regexp.MustCompile(`The notifier after ([0-9.]+s)`)
)

// statusTook returns how long the summary says the demo ran.
func statusTook(t *testing.T, out string) time.Duration {
	t.Helper()
	m := tookRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the summary does not say how long it ran:\n%s", out)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDemoDuration is the check: demo --no-tui --duration 3s exits
// 0 with a summary and leaves no goroutine behind.
func TestDemoDuration(t *testing.T) {
	before := runtime.NumGoroutine()
	ios, out, errOut := streams()
	start := time.Now()
	code := run(context.Background(), ios, "demo", "--no-tui", "--duration", "3s")
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	o := out.String()
	addr := addrRE.FindStringSubmatch(o)
	if addr == nil {
		t.Fatalf("no address printed:\n%s", o)
	}
	for _, want := range []string{
		"causalctl processes --brokers " + addr[1],
		"causalctl holds --brokers " + addr[1] + " --app notifier",
		"causalctl topics --brokers " + addr[1],
		"kcat -b " + addr[1] + " -L",
		"causalctl decode --brokers " + addr[1] + " -t shipments --offsets -5",
		"Replay complete: ",
		"│ shipments/1 ",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	// The status lines: every field of the one status line, with the
	// watched node's lag once log ends are known.
	lines := statusRE.FindAllStringSubmatch(o, -1)
	if n := strings.Count(o, "] produced="); len(lines) < 1 || n != len(lines) || n > 4 {
		t.Errorf("%d status lines in 3s (%d well-formed), want one a second:\n%s", n, len(lines), o)
	}
	// It ran for the duration before stopping, on its own clock and ours.
	took := statusTook(t, o)
	if took < 3*time.Second || elapsed < 3*time.Second {
		t.Errorf("stopped after %s (the summary says %s), before --duration 3s", elapsed, took)
	}
	if errOut.String() != "" {
		t.Errorf("stderr: %s", errOut)
	}
	testutil.WaitGoroutines(t, before)
}

// TestDemoJSON checks that -o json keeps stdout for the summary object,
// and that the notifier has caught up and holds nothing at the end.
func TestDemoJSON(t *testing.T) {
	ios, out, errOut := streams()
	code := democmdRun(t, ios, &democmd.Options{Output: "json", Duration: 1500 * time.Millisecond, Tick: 20 * time.Millisecond, StatusEvery: 300 * time.Millisecond, Seed: 3})
	if code != nil {
		t.Fatalf("%v\n%s", code, errOut)
	}
	var sum inspect.Summary
	if err := json.Unmarshal([]byte(out.String()), &sum); err != nil {
		t.Fatalf("stdout is not the summary: %v\n%s", err, out)
	}
	if sum.Received < 50 || sum.Held != 0 || sum.Delivered != sum.Received || len(sum.Channels) != 7 || sum.Failed != nil {
		t.Errorf("summary %+v", sum)
	}
	if e := errOut.String(); !strings.Contains(e, "listening on") || !statusRE.MatchString(e) {
		t.Errorf("stderr lacks the introduction and status:\n%s", e)
	}
}

func democmdRun(t *testing.T, ios *iostreams.IOStreams, opts *democmd.Options) error {
	t.Helper()
	opts.IO = ios
	if opts.Output == "" {
		opts.Output = "text"
	}
	if opts.Listen == "" {
		opts.Listen = demo.DefaultListen
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return democmd.Run(ctx, opts)
}

// TestDemoInterrupt stops the demo as Ctrl-C does, after reading its
// records at the printed address with a plain Kafka consumer.
func TestDemoInterrupt(t *testing.T) {
	ios, out, errOut := streams()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, ios, "demo", "--no-tui") }()
	addr := waitOutput(t, out, errOut, done, addrRE)[1]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("orders", "shipments"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	topics := map[string]int{}
	for topics["orders"] < 5 || topics["shipments"] < 1 {
		fs := cl.PollFetches(pctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("a plain consumer at %s: %v (read %v)", addr, err, topics)
		}
		fs.EachRecord(func(r *kgo.Record) { topics[r.Topic]++ })
	}
	cl.Close()
	cancel()
	waitStopped(t, done, errOut)
	if o := out.String(); !strings.Contains(o, "The notifier when stopped") || !strings.Contains(o, "\nReplay stopped: ") ||
		strings.Contains(o, "Replay complete") || strings.Contains(o, "interrupted") {
		t.Errorf("no summary saying stopped after Ctrl-C:\n%s", o)
	}
	if e := errOut.String(); strings.Contains(e, "interrupted") {
		t.Errorf("a demo stopped as documented says it was interrupted: %s", e)
	}
}

// TestDemoFault runs the undecodable fault through the command: the
// status says the notifier failed closed and the summary names the code.
func TestDemoFault(t *testing.T) {
	ios, out, errOut := streams()
	err := democmdRun(t, ios, &democmd.Options{Fault: demo.FaultUndecodable, Output: "json", Duration: 1500 * time.Millisecond,
		Tick: 20 * time.Millisecond, StatusEvery: 200 * time.Millisecond, Seed: 2})
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var sum inspect.Summary
	if err := json.Unmarshal([]byte(out.String()), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if sum.Failed == nil || sum.Failed.Code != "truncated" {
		t.Errorf("summary failure %+v", sum.Failed)
	}
	e := errOut.String()
	for _, want := range []string{`Fault "undecodable"`, "fault injected: undecodable", "the notifier FAILED CLOSED at shipments/",
		"its parsley.causes header is undecodable (truncated)", "state=failed-closed code=truncated at=shipments/"} {
		if !strings.Contains(e, want) {
			t.Errorf("stderr lacks %q:\n%s", want, e)
		}
	}
}

// TestDemoTUIHook checks that a live view set in Options is used on a
// terminal, fed snapshots of the watched node, and that --no-tui and a
// pipe bypass it.
func TestDemoTUIHook(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tty        bool
		background bool
		noTUI      bool
		want       bool
	}{{"terminal", true, false, false, true}, {"no-tui", true, false, true, false}, {"pipe", false, false, false, false},
		{"background", true, true, false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ios, out, errOut := streams()
			ios.SetTTY(tc.tty)
			ios.Foreground = tc.tty && !tc.background
			var got []view.Snapshot
			var intro []string
			called := false
			opts := &democmd.Options{Duration: time.Second, Tick: 20 * time.Millisecond, StatusEvery: 200 * time.Millisecond, NoTUI: tc.noTUI,
				Fault: demo.FaultDangling,
				RunTUI: func(ctx context.Context, snaps <-chan view.Snapshot, in []string) error {
					called, intro = true, in
					for {
						select {
						case s, ok := <-snaps:
							if !ok {
								return nil
							}
							got = append(got, s)
						case <-ctx.Done():
							return nil
						}
					}
				}}
			if err := democmdRun(t, ios, opts); err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if called != tc.want {
				t.Fatalf("TUI called: %v, want %v", called, tc.want)
			}
			if !strings.Contains(out.String(), "Replay complete") {
				t.Errorf("no summary:\n%s", out)
			}
			said := strings.Contains(errOut.String(), "not in the terminal's foreground: a status line every second instead of the live view")
			if said != tc.background {
				t.Errorf("stderr says it is in the background: %v, want %v:\n%s", said, tc.background, errOut)
			}
			if !tc.want {
				if !statusRE.MatchString(out.String()) {
					t.Errorf("no status lines without the TUI:\n%s", out)
				}
				return
			}
			if len(got) < 1 || len(got) > 15 {
				t.Errorf("%d snapshots in a second", len(got))
			}
			last := got[len(got)-1]
			if last.Title != "causalctl demo" || last.Scope != 7 || last.Received == 0 || last.State != replay.StateRunning {
				t.Errorf("last snapshot: %q scope %d received %d %v", last.Title, last.Scope, last.Received, last.State)
			}
			if strings.Contains(out.String(), "] produced=") {
				t.Error("status lines printed under the TUI")
			}
			// Every command the introduction suggests, which the view's
			// alternate screen hides, is in the intro its help opens with.
			var suggested int
			for _, l := range strings.Split(out.String(), "\n") {
				if !strings.HasPrefix(l, "  causalctl ") && !strings.HasPrefix(l, "  kcat ") {
					continue
				}
				suggested++
				if !slices.Contains(intro, l) {
					t.Errorf("the view's help lacks %q; it has %q", l, intro)
				}
			}
			if suggested < 5 { // four to try, one for the fault
				t.Errorf("%d commands suggested:\n%s", suggested, out)
			}
		})
	}
}

func TestDemoFlags(t *testing.T) {
	ios, _, errOut := streams()
	if code := run(context.Background(), ios, "demo", "--fault", "meteor"); code != 2 || !strings.Contains(errOut.String(), "meteor") {
		t.Errorf("bad fault: exit %d, %s", code, errOut)
	}
	ios, _, errOut = streams()
	if code := run(context.Background(), ios, "demo", "-o", "ndjson"); code != 2 {
		t.Errorf("-o ndjson: exit %d, %s", code, errOut)
	}
	ios, _, _ = streams()
	f := cmdutiltest.Factory(ios, "")
	var got *democmd.Options
	cmd := democmd.NewCmdDemo(f, func(_ context.Context, o *democmd.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--fault", "cycle", "--seed", "9", "--listen", "127.0.0.1:0", "--data-dir", "/x", "--duration", "2s", "--no-tui", "--stop-notifier-after", "3s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Fault != demo.FaultCycle || got.Seed != 9 || got.DataDir != "/x" || got.Duration != 2*time.Second || !got.NoTUI || got.Output != "text" || got.Tick != demo.DefaultTick || got.StopNotifierAfter != 3*time.Second {
		t.Errorf("options %+v", got)
	}
}

// TestDemoFromGroupNotifier runs the documented `--from-group notifier`
// example against a running demo, before and after --stop-notifier-after
// stopped the notifier (its offsets stay), and completes --from-group with
// the notifier's group.
func TestDemoFromGroupNotifier(t *testing.T) {
	ios, out, errOut := streams()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, ios, "demo", "--no-tui", "--fault", "dangling", "--tick", "20ms", "--stop-notifier-after", "1500ms")
	}()
	waitFor := func(re *regexp.Regexp) []string { t.Helper(); return waitOutput(t, out, errOut, done, re) }
	addr := waitFor(addrRE)[1]
	holds := func() {
		t.Helper()
		hios, hout, herr := streams()
		code := run(ctx, hios, "holds", "--brokers", addr, "-t", "orders,payments,shipments", "--from-group", "notifier", "-o", "json")
		if code != 0 && code != 4 {
			t.Errorf("holds --from-group notifier: exit %d\n%s\n%s", code, hout, herr)
		}
	}
	waitFor(regexp.MustCompile(`fault injected: dangling`))
	holds()
	cios, cout, cerr := streams()
	if code := run(ctx, cios, "__complete", "holds", "--brokers", addr, "--from-group", ""); code != 0 || !strings.Contains(cout.String(), "notifier\n") {
		t.Errorf("completing --from-group: exit %d\n%s\n%s", code, cout, cerr)
	}
	waitFor(regexp.MustCompile(`the notifier process stopped \(--stop-notifier-after\): its state stays in notifier-__parsley\.ordering-changelog, its offsets in group notifier`))
	holds()
	cancel()
	waitStopped(t, done, errOut)
}

// waitOutput polls a running demo's output for re under a deadline that
// only ends a hung test; the demo exiting first fails the test.
func waitOutput(t *testing.T, out, errOut *testutil.SyncBuffer, done <-chan int, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		select {
		case code := <-done:
			t.Fatalf("the demo exited %d before writing %s:\n%s\n%s", code, re, out, errOut)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in:\n%s\n%s", re, out, errOut)
		}
	}
}

// waitStopped waits for a demo stopped by Ctrl-C, the way a demo that
// runs until stopped ends, to exit 0 (after its summary).
func waitStopped(t *testing.T, done <-chan int, errOut *testutil.SyncBuffer) {
	t.Helper()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after Ctrl-C, want 0 (after the summary): %s", code, errOut)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the demo did not stop")
	}
}
