package acceptance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runFor runs causalctl in-process until it returns or d passes (then its
// context is cancelled, as Ctrl-C would).
func runFor(t *testing.T, d time.Duration, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(tty)
	f := cmdutiltest.Factory(ios, "")
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	code = cli.Run(ctx, f, args)
	return code, out.String(), errOut.String()
}

// writeUndecodable appends a record to payments/0 (offset 6) whose header
// is cut short: truncated.
func writeUndecodable(t *testing.T, p *pipeline) {
	t.Helper()
	w, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bad := &kgo.Record{Topic: "payments", Partition: 0, Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: []byte{1}}}}
	if err := w.ProduceSync(context.Background(), bad).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestWatchFailsClosed: an undecodable header stops the shadow node; the
// last status says where and why, and the command exits 1 with one line
// on stderr. Which record that line names is asserted typed where the
// error is at hand (watch.TestRunTerminalFeedFails, enginetest); the
// line's text is checked once, in replay.TestFailClosedKeepsEvents.
func TestWatchFailsClosed(t *testing.T) {
	p := newPipeline(t)
	writeUndecodable(t, p)
	code, out, stderr := runFor(t, 10*time.Second, false,
		"watch", "--brokers", p.addr, "-t", "payments", "--offsets", "start", "--interval", "100ms")
	if code != 1 || !strings.HasPrefix(stderr, "causalctl: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want exit 1 and one line", code, stderr)
	}
	if !strings.Contains(out, "state=failed-closed code=truncated at=payments/0@6") {
		t.Errorf("status lines:\n%s", out)
	}
}

func TestWatchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"watch"}, "--topic"},
		{[]string{"watch", "-t", "orders", "--offsets", "1:5"}, "without end"},
		{[]string{"watch", "-t", "orders", "--undecodable", "skip"}, "--undecodable"},
		{[]string{"watch", "-t", "orders", "--interval", "0s"}, "--interval"},
		{[]string{"watch", "-t", "orders", "--metrics-addr", "9464"}, "--metrics-addr"},
		{[]string{"watch", "-t", "orders", "--metrics-addr", "localhost:http"}, "--metrics-addr"},
		{[]string{"demo", "--metrics-addr", "127.0.0.1:99999"}, "--metrics-addr"},
		{[]string{"demo", "--tick", "-1s"}, "--tick"},
	} {
		code, _, stderr := runFor(t, 5*time.Second, false, append(tc.args, "--brokers", "127.0.0.1:1")...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}

var metricsAddrRE = regexp.MustCompile(`metrics: http://(127\.0\.0\.1:\d+)/metrics`)

// lastLine is the last complete line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// startAsync runs causalctl in-process in the background over buffers the
// test may read while it runs; stop cancels it (as Ctrl-C would) and
// returns the exit code.
func startAsync(t *testing.T, tty bool, args ...string) (stdout, stderr *testutil.SyncBuffer, stop func() int) {
	t.Helper()
	return startAsyncAt(t, tty, nil, args...)
}

// startAsyncAt is startAsync with the clock now (nil: the wall clock).
func startAsyncAt(t *testing.T, tty bool, now func() time.Time, args ...string) (stdout, stderr *testutil.SyncBuffer, stop func() int) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	ios.SetTTY(tty)
	stdout, stderr = &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	ios.Out, ios.ErrOut = stdout, stderr
	f := cmdutiltest.Factory(ios, "")
	if now != nil {
		f.Now = now
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, f, args) }()
	var once sync.Once
	code := -1
	stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("causalctl did not stop after cancel")
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	return stdout, stderr, stop
}

// metricsURL waits for the command to announce its metrics endpoint.
func metricsURL(t *testing.T, stderr *testutil.SyncBuffer) string {
	t.Helper()
	out := stderr.Wait(t, 10*time.Second, "the metrics address", metricsAddrRE.MatchString)
	return "http://" + metricsAddrRE.FindStringSubmatch(out)[1]
}

// scrapeUntil gets url until every wanted line is in the body, and returns
// the status code and body of the last get. The endpoint renders the
// latest snapshot, and a status line on stdout follows every interval's:
// it gets url again after each new status line, for at most 10 s.
func scrapeUntil(t *testing.T, stdout *testutil.SyncBuffer, url string, want ...string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := testutil.Lines(stdout.String())
		code, body := httpGet(t, url)
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return code, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lacks %q:\n%s", url, missing, body)
		}
		afterLines(t, stdout, lines+1)
	}
}

// afterLines waits for stdout to hold n status lines: n−1 intervals of the
// command have passed since it started.
func afterLines(t *testing.T, stdout *testutil.SyncBuffer, n int) {
	t.Helper()
	stdout.Wait(t, 10*time.Second, fmt.Sprintf("%d status lines", n), func(out string) bool { return testutil.Lines(out) >= n })
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestWatchMetrics runs watch headless on a terminal (--no-tui) with a
// metrics endpoint on a free port: the held payment, its cause, and the
// channels' positions are exported; health is ok; status lines go on;
// nothing is written to the cluster.
func TestWatchMetrics(t *testing.T) {
	p := newPipeline(t)
	stdout, stderr, stop := startAsync(t, true,
		"watch", "--brokers", p.addr, "-t", "orders,payments", "--offsets", "start", "--interval", "100ms",
		"--no-tui", "--metrics-addr", "127.0.0.1:0")
	base := metricsURL(t, stderr)
	orders1 := `{partition="1",topic="orders",topic_id="` + p.orders.String() + `"}`
	payments0 := `{partition="0",topic="payments",topic_id="` + p.payments.String() + `"}`
	code, body := scrapeUntil(t, stdout, base+"/metrics",
		"causalctl_held_records 1\n",
		"causalctl_records_received_total 6\n",
		"causalctl_records_delivered_total 5\n",
		// payments/0@4 claims orders/1@9: beyond its log end.
		`causalctl_blocked_heads{cause="beyond-log-end"} 1`+"\n",
		`causalctl_blocked_heads{cause="held"} 0`+"\n",
		"causalctl_channel_held_records"+payments0+" 1\n",
		"causalctl_channel_settled_offset"+payments0+" 3\n",
		// orders/1: the open transaction's record at 2 is below the high
		// watermark 3, above the last stable offset 2.
		"causalctl_channel_log_end_offset"+orders1+" 3\n",
		"causalctl_channel_last_stable_offset"+orders1+" 2\n",
		`causalctl_failed_closed{reason=""} 0`+"\n",
		"causalctl_scope_channels 3\n",
	)
	if code != 200 {
		t.Errorf("/metrics: %d", code)
	}
	if !strings.Contains(body, "causalctl_oldest_hold_age_seconds ") || strings.Contains(body, "causalctl_oldest_hold_age_seconds 0\n") {
		t.Errorf("the oldest hold has no age:\n%s", body)
	}
	if code, body := httpGet(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code := stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d; stderr %s", code, cmdutil.ExitOK, stderr)
	}
	if !strings.Contains(stdout.String(), "held=1") {
		t.Errorf("no status lines on stdout:\n%s", stdout)
	}
	if strings.ContainsRune(stdout.String(), '\x1b') {
		t.Errorf("escape sequence with --no-tui: %q", stdout)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the endpoint is still served after watch returned")
	}
	p.checkReadOnly(t)
}

// TestWatchMetricsFailClosed: with a metrics endpoint, a gate that fails
// closed does not end watch: the failure is said on stderr naming the
// record, exported, and health turns 503, until watch is stopped (then
// exit 1: its gate failed).
func TestWatchMetricsFailClosed(t *testing.T) {
	p := newPipeline(t)
	writeUndecodable(t, p)
	stdout, stderr, stop := startAsync(t, false,
		"watch", "--brokers", p.addr, "-t", "payments", "--offsets", "start", "--interval", "100ms", "--metrics-addr", "127.0.0.1:0")
	base := metricsURL(t, stderr)
	scrapeUntil(t, stdout, base+"/metrics", `causalctl_failed_closed{reason="truncated"} 1`+"\n")
	if code, body := httpGet(t, base+"/healthz"); code != 503 || body != "failed closed at payments/0@6: truncated\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	// A stopped gate does not end watch while metrics are served: three
	// more intervals pass, each with its status line, the failed state.
	afterLines(t, stdout, testutil.Lines(stdout.String())+3)
	if last := lastLine(stdout.String()); !strings.HasPrefix(last, "state=failed-closed code=truncated at=payments/0@6 ") {
		t.Errorf("last status line %q", last)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 503 {
		t.Errorf("/healthz: %d", code)
	}
	if !strings.Contains(stderr.String(), "(still serving metrics until stopped)") {
		t.Errorf("stderr %q", stderr)
	}
	if code := stop(); code != cmdutil.ExitFailure {
		t.Errorf("exit %d, want 1 (the gate failed closed), stderr %q", code, stderr)
	}
}

// TestWatchFromGroupRestart: watch --from-group starts where the watched
// node's group committed, and a restarted watch starts there again — not
// where the last run stopped, not at the start — since it commits nothing.
func TestWatchFromGroupRestart(t *testing.T) {
	p := newPipeline(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	var off kadm.Offsets
	off.AddOffset("orders", 0, 4, -1)   // orders/0@0 consumed
	off.AddOffset("orders", 1, 2, -1)   // orders/1@0 consumed
	off.AddOffset("payments", 0, 2, -1) // payments/0@0 consumed
	if err := kadm.NewClient(cl).CommitAllOffsets(t.Context(), "notifier", off); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	p.mu.Lock()
	p.keys = map[int16]int{} // the commit above was the test's, not causalctl's
	p.mu.Unlock()
	payments0 := `{partition="0",topic="payments",topic_id="` + p.payments.String() + `"}`
	for run := range 2 {
		stdout, stderr, stop := startAsync(t, false,
			"watch", "--brokers", p.addr, "-t", "orders,payments", "--from-group", "notifier", "--interval", "100ms",
			"--metrics-addr", "127.0.0.1:0")
		base := metricsURL(t, stderr)
		// From the group's offsets: orders/0@4, payments/0@2 (delivered)
		// and payments/0@4 (held on orders/1@9), nothing before them.
		scrapeUntil(t, stdout, base+"/metrics",
			"causalctl_records_received_total 3\n",
			"causalctl_records_delivered_total 2\n",
			"causalctl_held_records 1\n",
			"causalctl_channel_received_offset"+payments0+" 5\n",
		)
		// Three intervals later, still nothing more.
		afterLines(t, stdout, testutil.Lines(stdout.String())+3)
		if _, body := httpGet(t, base+"/metrics"); !strings.Contains(body, "causalctl_records_received_total 3\n") {
			t.Errorf("run %d: more than the records after the group's offsets:\n%s", run, body)
		}
		if code := stop(); code != cmdutil.ExitOK {
			t.Errorf("run %d: exit %d; stderr %s", run, code, stderr)
		}
	}
	p.checkReadOnly(t)
}

// TestWatchMetricsOutlivesBroker: a sidecar (--metrics-addr) whose broker
// stays gone for longer than --request-timeout keeps running: healthy,
// counting disconnected seconds, until stopped (exit 0); without the endpoint
// watch ends after the timeout (TestWatchBrokerKilled).
func TestWatchMetricsOutlivesBroker(t *testing.T) {
	p := newPipeline(t)
	stdout, stderr, stop := startAsync(t, false,
		"watch", "--brokers", p.addr, "-t", "orders,payments", "--offsets", "start", "--interval", "100ms",
		"--request-timeout", "1s", "--dial-timeout", "500ms", "--metrics-addr", "127.0.0.1:0")
	base := metricsURL(t, stderr)
	scrapeUntil(t, stdout, base+"/metrics", "causalctl_records_received_total 6\n")
	p.c.Close()
	// Retrying for 3 s, three request timeouts with no broker, as the
	// status line says; the deadline is well beyond.
	stdout.Wait(t, 20*time.Second, "3 s of retrying", func(out string) bool {
		return strings.Contains(out, `state="disconnected (retrying, 3s)"`)
	})
	_, body := scrapeUntil(t, stdout, base+"/metrics", "causalctl_records_received_total 6\n")
	if strings.Contains(body, "causalctl_disconnected_seconds 0\n") || !strings.Contains(body, "causalctl_disconnected_seconds ") {
		t.Errorf("3s without a broker, not disconnected:\n%s", body)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d while retrying, want 200", code)
	}
	if code := stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d (still running when stopped); stderr %q", code, cmdutil.ExitOK, stderr)
	}
}
