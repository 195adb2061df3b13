package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
)

// Bounds of the soak test.
const (
	soakPhase  = 30 * time.Second // each of the two demo runs
	soakWarmUp = 10 * time.Second
	// soakHeapBound is the heap in use watch may never pass after warm-up.
	// It runs at about 4 MiB here; keeping every record received (~9 000
	// a second at the demo's highest rate) would pass it within seconds.
	soakHeapBound = 32 << 20
)

// TestSoakWatchAcrossBrokerRestart runs `watch --metrics-addr` for about a
// minute against the demo at its highest rate (--tick 0). Half-way through
// the demo stops — its embedded kfake broker closes, saving its data dir —
// and starts again on the same port from the same data dir, appending to
// the same logs. Scraping watch's own /metrics every second, the test
// asserts that the heap in use stays under a fixed bound after warm-up, that
// watch rides out the restart and reads on from where it was — no channel's
// received offset ever goes back, nothing is dropped (a re-read would be),
// it never fails — and that it ends exactly at the end of every log.
func TestSoakWatchAcrossBrokerRestart(t *testing.T) {
	// A minute at the demo's highest rate takes a core: .ci/run runs it
	// in a step of its own, not beside every other package's tests.
	if os.Getenv("CAUSALCTL_SOAK") == "" {
		t.Skip("a one-minute soak: CAUSALCTL_SOAK=1 runs it (.ci/run does)")
	}
	dir := t.TempDir()
	broker, metricsAddr := testutil.FreeAddr(t), testutil.FreeAddr(t)
	demo := func(n int) (*exec.Cmd, string) {
		log := filepath.Join(dir, fmt.Sprintf("demo%d.log", n))
		f, err := os.Create(log)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(binary, "demo", "--no-tui", "--tick", "0", "--listen", broker,
			"--data-dir", filepath.Join(dir, "data"), "--duration", soakPhase.String(), "--seed", strconv.Itoa(n))
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		waitListening(t, broker)
		return cmd, log
	}
	demo1, _ := demo(1)

	watchLog := &strings.Builder{}
	watch := exec.Command(binary, "watch", "--brokers", broker, "-t", "orders,payments,shipments",
		"--no-tui", "--interval", "10s", "--metrics-addr", metricsAddr)
	out, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	watch.Stderr = watch.Stdout
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() { io.Copy(watchLog, out); close(copied) }()
	defer func() {
		watch.Process.Signal(syscall.SIGINT)
		watch.Wait()
		<-copied
		if t.Failed() {
			t.Logf("watch:\n%s", watchLog)
		}
	}()
	waitListening(t, metricsAddr)
	start := time.Now()

	var heap []float64
	var restartedAt time.Time
	var before, last soakScrape
	restarted := false
	var demo2Log string
	demo1Done := make(chan error, 1)
	go func() { demo1Done <- demo1.Wait() }()
	var demo2 *exec.Cmd
	demo2Done := make(chan error, 1)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case err := <-demo1Done:
			if err != nil {
				t.Fatalf("the first demo run: %v", err)
			}
			// The broker is gone (closed, its data saved): start it again
			// on the same port, from the same data dir.
			before = scrapeSoak(t, metricsAddr)
			demo2, demo2Log = demo(2)
			go func() { demo2Done <- demo2.Wait() }()
			restarted, restartedAt = true, time.Now()
		case err := <-demo2Done:
			if err != nil {
				t.Fatalf("the second demo run: %v", err)
			}
			done = true
		case <-tick.C:
		}
		s := scrapeSoak(t, metricsAddr)
		if time.Since(start) > soakWarmUp {
			heap = append(heap, s.heap)
		}
		for ch, off := range last.received {
			if s.received[ch] < off {
				t.Fatalf("%s: received offset went back from %d to %d: a re-read", ch, off, s.received[ch])
			}
		}
		if s.dropped != 0 || s.failed != 0 || s.health != http.StatusOK {
			t.Fatalf("after %s: %v dropped, failed closed %v, /healthz %d", time.Since(start).Round(time.Second), s.dropped, s.failed, s.health)
		}
		last = s
		if time.Since(start) > 3*soakPhase {
			t.Fatal("the demo runs did not end")
		}
	}
	if !restarted {
		t.Fatal("the broker was never restarted")
	}
	checkHeap(t, heap, soakHeapBound, 20)
	// It read on after the restart, and ends where the logs end: the
	// second run's summary table has every channel's last offset.
	ends := summaryReceived(t, demo2Log)
	if len(ends) != 7 {
		t.Fatalf("the second demo's summary lists %v", ends)
	}
	for ch, end := range ends {
		if last.received[ch] != end {
			t.Errorf("%s: watch received up to %d, the log ends at %d", ch, last.received[ch], end)
		}
	}
	if last.receivedTotal <= before.receivedTotal {
		t.Errorf("nothing received after the restart at %s: %v then %v", restartedAt.Sub(start).Round(time.Second), before.receivedTotal, last.receivedTotal)
	}
	t.Logf("received %v records (%v before the restart), heap in use after warm-up %.1f–%.1f MiB",
		last.receivedTotal, before.receivedTotal, slices.Min(heap)/(1<<20), slices.Max(heap)/(1<<20))
}

type soakScrape struct {
	heap, receivedTotal, dropped, failed float64
	received                             map[string]int64 // "topic/partition" → received offset
	health                               int
}

var channelSample = regexp.MustCompile(`^causalctl_channel_received_offset\{partition="(\d+)",topic="([^"]+)",topic_id="[^"]+"\} (\S+)$`)

// scrapeSoak reads watch's /metrics and /healthz.
func scrapeSoak(t *testing.T, addr string) soakScrape {
	t.Helper()
	s := soakScrape{received: map[string]int64{}}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if m := channelSample.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[3], 64)
			s.received[m[2]+"/"+m[1]] = int64(v)
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_memstats_heap_inuse_bytes":
			s.heap = v
		case "causalctl_records_received_total":
			s.receivedTotal = v
		case "causalctl_records_dropped_total":
			s.dropped = v
		case `causalctl_failed_closed{reason=""}`:
		default:
			if strings.HasPrefix(name, "causalctl_failed_closed{") {
				s.failed = v
			}
		}
	}
	s.health = healthz(t, addr)
	return s
}

// healthz returns the status code of addr's /healthz.
func healthz(t *testing.T, addr string) int {
	t.Helper()
	h, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	h.Body.Close()
	return h.StatusCode
}

// checkHeap fails for the first heap sample above bound, and when there
// are fewer than min samples.
func checkHeap(t *testing.T, heap []float64, bound, min int) {
	t.Helper()
	for i, h := range heap {
		if h > float64(bound) {
			t.Errorf("heap in use %.1f MiB at sample %d of %d after warm-up (up to %.1f MiB), bound %d MiB",
				h/(1<<20), i, len(heap), slices.Max(heap)/(1<<20), bound>>20)
			break
		}
	}
	if len(heap) < min {
		t.Fatalf("only %d heap samples after warm-up", len(heap))
	}
}

var summaryRow = regexp.MustCompile(`^(\S+/\d+) +\S+ +(\d+) +`)

// summaryReceived reads the RECEIVED column of a demo's final summary:
// every channel's last offset, once its notifier caught up.
func summaryReceived(t *testing.T, log string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if m := summaryRow.FindStringSubmatch(line); m != nil {
			out[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	return out
}

// waitListening waits for something to accept connections at addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens at %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
