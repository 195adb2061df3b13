package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
)

// Bounds of the exporter's soak test.
const (
	exporterSoak      = 60 * time.Second
	exporterHeapBound = 32 << 20 // about 4–7 MiB here
	// exporterMinGrowth is how many changelog entries the soak must have
	// read: a store that kept every entry would pass the heap bound.
	exporterMinGrowth = 200_000
)

// TestSoakExporterOverGrowingChangelogs runs `exporter --metrics-addr`
// for a minute against the demo at its highest rate (--tick 0), whose
// notifier writes its ordering changelog — held records, then their
// tombstones, positions rewritten — a transaction per batch. Scraping the
// exporter's own /metrics every second, it asserts that the heap in use
// stays under a fixed bound after warm-up while the changelog grows by at
// least exporterMinGrowth entries, that every refresh succeeds and
// /healthz stays 200.
func TestSoakExporterOverGrowingChangelogs(t *testing.T) {
	if os.Getenv("CAUSALCTL_SOAK") == "" {
		t.Skip("a one-minute soak: CAUSALCTL_SOAK=1 runs it (.ci/run does)")
	}
	dir := t.TempDir()
	broker, metricsAddr := testutil.FreeAddr(t), testutil.FreeAddr(t)
	demoLog, err := os.Create(filepath.Join(dir, "demo.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer demoLog.Close()
	demo := exec.Command(binary, "demo", "--no-tui", "--tick", "0", "--listen", broker,
		"--duration", (exporterSoak + 15*time.Second).String())
	demo.Stdout, demo.Stderr = demoLog, demoLog
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { demo.Process.Signal(syscall.SIGINT); demo.Wait() }()
	waitListening(t, broker)

	log := &testutil.SyncBuffer{}
	exp := exec.Command(binary, "exporter", "--brokers", broker, "--metrics-addr", metricsAddr,
		"--refresh-interval", "1s", "--discover-interval", "5s")
	exp.Stdout, exp.Stderr = log, log
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		exp.Process.Signal(syscall.SIGINT)
		exp.Wait()
		if t.Failed() {
			t.Logf("exporter:\n%s", log)
		}
	}()
	waitListening(t, metricsAddr)

	start := time.Now()
	var heap []float64
	var first, last exporterScrape
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(start) < exporterSoak {
		<-tick.C
		s := scrapeExporter(t, metricsAddr)
		if s.health != 200 {
			t.Fatalf("healthz %d after %v", s.health, time.Since(start).Round(time.Second))
		}
		if time.Since(start) < soakWarmUp {
			first = s
			continue
		}
		heap = append(heap, s.heap)
		last = s
	}
	checkHeap(t, heap, exporterHeapBound, 30)
	if grown := last.entries - first.entries; grown < exporterMinGrowth {
		t.Errorf("the changelog grew by %.0f entries after warm-up, want at least %d: the soak did not soak", grown, exporterMinGrowth)
	}
	if last.errors != 0 {
		t.Errorf("%.0f refresh errors", last.errors)
	}
	t.Logf("changelog entries read %.0f (%.0f after warm-up), heap in use after warm-up %.1f–%.1f MiB, last refresh %.1f ms",
		last.entries, last.entries-first.entries, slices.Min(heap)/(1<<20), slices.Max(heap)/(1<<20), last.refresh*1000)
}

type exporterScrape struct {
	heap, entries, errors, refresh float64
	health                         int
}

// scrapeExporter reads the exporter's /metrics and /healthz.
func scrapeExporter(t *testing.T, addr string) exporterScrape {
	t.Helper()
	var s exporterScrape
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch {
		case name == "go_memstats_heap_inuse_bytes":
			s.heap = v
		case strings.HasPrefix(name, "parsley_changelog_entries_read_total{"):
			s.entries += v
		case name == "causalctl_exporter_refresh_errors_total":
			s.errors = v
		case name == "causalctl_exporter_refresh_duration_seconds":
			s.refresh = v
		}
	}
	s.health = healthz(t, addr)
	return s
}
