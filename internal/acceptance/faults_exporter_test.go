package acceptance

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/testutil"
)

// This file is the fault table's exporter column. The exporter is
// long-running: under a fault it can ride out it reaches the fault-free
// metrics; under one it cannot it publishes no other answer, says so (its
// refresh errors on stderr and in causalctl_exporter_refresh_errors_total,
// /healthz as docs/metrics.md says), and once the fault is gone its
// metrics are the fault-free ones — the changelog read once, the same
// records held per task.

// testClock is a clock the test moves: the exporter's ages, refresh
// times and /healthz bound are measured on it.
type testClock struct{ ms atomic.Int64 }

func newTestClock(at time.Time) *testClock {
	c := &testClock{}
	c.ms.Store(at.UnixMilli())
	return c
}

func (c *testClock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *testClock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// exporterRun is a running exporter.
type exporterRun struct {
	stderr *testutil.SyncBuffer
	url    string // http://127.0.0.1:PORT, serving /metrics and /healthz
	stop   func() int
	// entries is how many entries the changelog holds (faultEntries
	// unless a test writes more): a scrape counting more read one twice.
	entries float64
}

// exporterArgs are the exporter's flags in these tests: a refresh every
// 50 ms, short timeouts, unhealthy after a minute of the test's clock.
func exporterArgs() []string {
	return []string{"exporter", "--metrics-addr", "127.0.0.1:0",
		"--refresh-interval", "50ms", "--discover-interval", "200ms", "--txn-wait", "1s", "--unhealthy-after", "1m"}
}

func startExporter(t *testing.T, brokers string, clk *testClock, extra ...string) *exporterRun {
	t.Helper()
	args := append(exporterArgs(), "--brokers", brokers, "--request-timeout", "2s", "--dial-timeout", "1s")
	_, stderr, stop := startAsyncAt(t, false, clk.now, append(args, extra...)...)
	return &exporterRun{stderr: stderr, url: metricsURL(t, stderr), stop: stop, entries: faultEntries}
}

var entriesSeries = fmt.Sprintf(`parsley_changelog_entries_read_total{app=%q}`, faultApp)

// await scrapes /metrics until ok says the body is the awaited one and
// returns it, failing at the deadline; every scrape on the way must not
// count a changelog entry twice.
func (e *exporterRun) await(t *testing.T, what string, ok func(body string) bool) string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for {
		_, body := httpGet(t, e.url+"/metrics")
		if n, _ := metricValue(body, entriesSeries); n > e.entries {
			t.Fatalf("%s: %s %v: the changelog holds %v entries, some were counted twice", what, entriesSeries, n, e.entries)
		}
		if ok(body) {
			return body
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("never saw %s; stderr:\n%s\nmetrics:\n%s", what, e.stderr.String(), processLines(body))
		}
	}
}

// health gets /healthz.
func (e *exporterRun) health(t *testing.T) (int, string) {
	t.Helper()
	return httpGet(t, e.url+"/healthz")
}

// processLines are the series of a scrape that say what the processes
// hold — every parsley_ series but the held records' ages, which move
// with the clock — sorted.
func processLines(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "parsley_") && !strings.HasPrefix(l, "parsley_records_held_age_max_seconds") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// metricValue is the value of the series named exactly (name and labels).
func metricValue(body, series string) (float64, bool) {
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// refreshedAt says the last successful refresh is stamped with clk's now.
func refreshedAt(body string, clk *testClock) bool {
	v, ok := metricValue(body, "causalctl_exporter_last_refresh_success_timestamp_seconds")
	return ok && v == float64(clk.now().Unix())
}

const refreshErrors = "causalctl_exporter_refresh_errors_total"

func failedRefreshes(body string) float64 {
	n, _ := metricValue(body, refreshErrors)
	return n
}

// TestFaultTableExporter is the table's exporter column, each fault of
// faultTable with the broker-side ones on the changelog. Faults it can
// ride out are installed before it starts, so that the changelog's first
// read (about 200 KB) runs under them: it reaches the fault-free metrics.
// Of the others, a blackhole comes once it runs: the refreshes fail and
// say so, /healthz stays 200 within --unhealthy-after and is 503 past
// it, and once the brokers answer again the metrics are the fault-free
// ones, nothing read twice. The changelog's read failing for good comes
// before it starts: nothing is published for the process (no held
// records of a store read in part, no "behind a transaction"), the
// refresh error names the changelog partition, its position and the
// cause, /healthz says starting; healed, the fault-free metrics. A
// blackhole before it starts is exit 1 on the dial, one line.
func TestFaultTableExporter(t *testing.T) {
	fc := newFaultCluster(t)
	clk := newTestClock(faultNow)
	e := startExporter(t, fc.brokers, clk)
	body := e.await(t, "the fault-free metrics", func(b string) bool {
		n, _ := metricValue(b, entriesSeries)
		return n == faultEntries
	})
	want := processLines(body)
	for _, held := range []string{
		`parsley_records_held{app="shop",task="0",topic="payments"} 1`,
		`parsley_records_held{app="shop",task="0",topic="orders"} 0`,
		`parsley_records_held{app="shop",task="1",topic="orders"} 0`,
		`parsley_held_heads{app="shop",cause="beyond-log-end",task="0"} 1`,
	} {
		if !strings.Contains(want, held) {
			t.Fatalf("the fault-free metrics lack %s:\n%s", held, want)
		}
	}
	if n := failedRefreshes(body); n != 0 {
		t.Fatalf("without faults: %v failed refreshes: %s", n, e.stderr.String())
	}
	if code := e.stop(); code != cmdutil.ExitOK {
		t.Fatalf("exit %d, want %d", code, cmdutil.ExitOK)
	}
	same := func(b string) bool { return processLines(b) == want }

	for _, f := range faultTable(faultChangelog, faultChangelog) {
		t.Run(f.name, func(t *testing.T) {
			clk := newTestClock(faultNow)
			switch {
			case !f.fails:
				remove := f.install(fc)
				e := startExporter(t, fc.brokers, clk)
				e.await(t, "the fault-free metrics under the fault", same)
				remove()
				if code := e.stop(); code != cmdutil.ExitOK {
					t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
				}
				return
			case strings.HasPrefix(f.wantErr[0], "no Kafka"):
				rideBlackhole(t, fc, f, clk, same)
				return
			}
			remove := f.install(fc)
			e := startExporter(t, fc.brokers, clk)
			body := e.await(t, "a failed refresh", func(b string) bool { return failedRefreshes(b) > 0 })
			if got := processLines(body); got != "" {
				t.Errorf("a changelog not read to its end published as a process:\n%s", got)
			}
			line := e.stderr.Wait(t, 10*time.Second, "the refresh error on stderr", func(s string) bool {
				return strings.Contains(s, "causalctl: exporter: ")
			})
			wantLine := regexp.MustCompile(`causalctl: exporter: shop: reading ` + regexp.QuoteMeta(faultChangelog) +
				`/[01] failed at position \d+ \([^)]*\): no progress for `)
			if !wantLine.MatchString(line) || (strings.Contains(f.name, "NOT_LEADER") && !strings.Contains(line, "NOT_LEADER_FOR_PARTITION")) {
				t.Errorf("stderr %q: want the changelog partition, its position and the cause", line)
			}
			if code, why := e.health(t); code != 503 || !strings.HasPrefix(why, "starting: ") {
				t.Errorf("/healthz while the first read fails: %d %q, want 503 starting", code, why)
			}
			remove()
			e.await(t, "the fault-free metrics once healed", same)
			if code, why := e.health(t); code != 200 || why != "ok\n" {
				t.Errorf("/healthz healed: %d %q, want 200 ok", code, why)
			}
			if code := e.stop(); code != cmdutil.ExitOK {
				t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
			}
		})
	}
}

// rideBlackhole: an exporter that cannot dial at start exits 1 with one
// line; one that runs rides a blackhole out.
func rideBlackhole(t *testing.T, fc *faultCluster, f fault, clk *testClock, same func(string) bool) {
	t.Helper()
	remove := f.install(fc)
	code, _, stderr := faultRun(t, fc, exporterArgs()...)
	remove()
	f.checkFailure(t, code, stderr)

	e := startExporter(t, fc.brokers, clk)
	e.await(t, "the fault-free metrics", same)
	remove = f.install(fc)
	e.await(t, "a failed refresh", func(b string) bool { return failedRefreshes(b) > 0 })
	if code, why := e.health(t); code != 200 || !strings.HasPrefix(why, "ok: refreshes failing for 0s: ") {
		t.Errorf("/healthz within --unhealthy-after: %d %q, want 200 ok: refreshes failing", code, why)
	}
	line := e.stderr.Wait(t, 10*time.Second, "the refresh error on stderr", func(s string) bool {
		return strings.Contains(s, "causalctl: exporter: ")
	})
	if !strings.Contains(line, "127.0.0.1:") {
		t.Errorf("stderr %q: want the broker that does not answer", line)
	}
	clk.add(2 * time.Minute)
	if code, why := e.health(t); code != 503 || !strings.HasPrefix(why, "refreshes failing for 2m0s: ") {
		t.Errorf("/healthz past --unhealthy-after: %d %q, want 503 refreshes failing for 2m0s", code, why)
	}
	remove()
	body := e.await(t, "the fault-free metrics once healed", func(b string) bool { return same(b) && refreshedAt(b, clk) })
	if code, why := e.health(t); code != 200 || why != "ok\n" {
		t.Errorf("/healthz healed: %d %q, want 200 ok", code, why)
	}
	if n, _ := metricValue(body, entriesSeries); n != faultEntries {
		t.Errorf("%s %v, want %d", entriesSeries, n, faultEntries)
	}
	if code := e.stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
	}
}

// TestExporterReadDenied: an ACL denying the exporter's credentials the
// changelog or the group of a process, while it runs, is said on stderr
// naming the topic or group and the operation, counted as a failed
// refresh, and leaves the exporter serving (/healthz 200 within
// --unhealthy-after); once the ACL is removed its metrics are the
// fault-free ones again.
func TestExporterReadDenied(t *testing.T) {
	fc, alice, adm := deniableFaultCluster(t)
	for _, d := range processDenials() {
		if !d.discovered {
			continue // a changelog it may not describe is not listed: no process
		}
		t.Run(d.name, func(t *testing.T) {
			clk := newTestClock(faultNow)
			e := startExporter(t, fc.brokers, clk, alice...)
			want := processLines(e.await(t, "the fault-free metrics", func(b string) bool {
				n, _ := metricValue(b, entriesSeries)
				return n == faultEntries
			}))
			remove := deny(t, adm, d.acl)
			e.await(t, "a failed refresh", func(b string) bool { return failedRefreshes(b) > 0 })
			said := e.stderr.Wait(t, 10*time.Second, "the refusal on stderr", func(s string) bool {
				return strings.Contains(s, "causalctl: exporter: ")
			})
			_, line, _ := strings.Cut(said, "causalctl: exporter: ")
			if line, _, _ = strings.Cut(line, "\n"); line != "shop: "+d.want {
				t.Errorf("stderr %q: want causalctl: exporter: shop: %s", said, d.want)
			}
			if code, why := e.health(t); code != 200 || !strings.HasPrefix(why, "ok: refreshes failing for ") {
				t.Errorf("/healthz while refused: %d %q, want 200 ok: refreshes failing", code, why)
			}
			remove()
			clk.add(time.Second)
			e.await(t, "the fault-free metrics once allowed", func(b string) bool { return processLines(b) == want && refreshedAt(b, clk) })
			if code := e.stop(); code != cmdutil.ExitOK {
				t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
			}
		})
	}
}
