package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// scrapeResult is what the scrape scenario measured of one exporter.
type scrapeResult struct {
	Scrapes      []time.Duration // one GET of /metrics each
	Bytes        int             // size of the last scrape
	FirstRefresh time.Duration   // the exporter's own figure for its first refresh
	IdleRefresh  time.Duration   // and for a later one, nothing having changed
	IdleCPU      time.Duration   // exporter CPU time per idle refresh
	Idle         int             // idle refreshes IdleCPU was measured over
	Diagnosed    float64         // task diagnoses after the first refresh
	Rediagnosed  float64         // task diagnoses the idle refreshes added
	RSS          float64         // the exporter's peak RSS, MiB
}

// exporterRefresh is the refresh interval the scrape scenario gives the
// exporter: short, so that idle refreshes can be watched.
const exporterRefresh = time.Second

// measureScrape starts causalctl exporter against the fleet, waits for its
// first complete refresh, times runs scrapes of /metrics, then watches
// idle refreshes: their duration, the exporter's CPU time over them, and
// that they diagnose nothing again.
func measureScrape(ctx context.Context, bin, brokers string, procs, runs int) (scrapeResult, error) {
	var res scrapeResult
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "exporter", "--brokers", brokers, "--metrics-addr", "127.0.0.1:0",
		"--refresh-interval", exporterRefresh.String())
	stderr, err := c.StderrPipe()
	if err != nil {
		return res, err
	}
	if err := c.Start(); err != nil {
		return res, err
	}
	defer func() {
		c.Process.Signal(os.Interrupt)
		c.Wait()
	}()
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "metrics: "); ok {
			url, _, _ = strings.Cut(u, " ")
			break
		}
	}
	if url == "" {
		return res, fmt.Errorf("the exporter announced no metrics address")
	}
	go io.Copy(io.Discard, stderr)

	// The first complete refresh: every process's group members exported.
	var m metricsText
	for {
		if m, err = scrape(ctx, url); err != nil {
			return res, err
		}
		if _, ok := m.value("causalctl_exporter_last_refresh_success_timestamp_seconds"); ok && m.count("parsley_group_members{") == procs {
			break
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("the exporter did not export %d processes in time (%d so far)", procs, m.count("parsley_group_members{"))
		case <-time.After(100 * time.Millisecond):
		}
	}
	d, _ := m.value("causalctl_exporter_refresh_duration_seconds")
	res.FirstRefresh = time.Duration(d * float64(time.Second))
	res.Diagnosed, _ = m.value("causalctl_exporter_tasks_diagnosed_total")
	last, _ := m.value("causalctl_exporter_last_refresh_success_timestamp_seconds")

	for range runs {
		start := time.Now()
		m, err := scrape(ctx, url)
		if err != nil {
			return res, err
		}
		res.Scrapes = append(res.Scrapes, time.Since(start))
		res.Bytes = len(m)
	}

	// Idle refreshes: from the end of one, a few refresh intervals without
	// scraping (a scrape costs CPU too), then how many refreshes ran, how
	// long the last took, the exporter's CPU time over them and the
	// diagnoses they added.
	for {
		m, err := scrape(ctx, url)
		if err != nil {
			return res, err
		}
		if ts, _ := m.value("causalctl_exporter_last_refresh_success_timestamp_seconds"); ts != last {
			last = ts
			break
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("the exporter did not refresh again")
		case <-time.After(20 * time.Millisecond):
		}
	}
	cpu0, err := procCPU(c.Process.Pid)
	if err != nil {
		return res, err
	}
	// A refresh longer than the interval runs back to back with the next.
	window := max(5*exporterRefresh+exporterRefresh/2, 3*res.FirstRefresh)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(window):
	}
	cpu1, err := procCPU(c.Process.Pid)
	if err != nil {
		return res, err
	}
	if m, err = scrape(ctx, url); err != nil {
		return res, err
	}
	ts, _ := m.value("causalctl_exporter_last_refresh_success_timestamp_seconds")
	d, _ = m.value("causalctl_exporter_refresh_duration_seconds")
	res.IdleRefresh = time.Duration(d * float64(time.Second))
	refreshes := math.Round((ts - last) / max(exporterRefresh.Seconds(), d))
	if refreshes < 1 {
		return res, fmt.Errorf("the exporter did not refresh in %s", window)
	}
	res.Idle = int(refreshes)
	res.IdleCPU = (cpu1 - cpu0) / time.Duration(refreshes)
	n, _ := m.value("causalctl_exporter_tasks_diagnosed_total")
	res.Rediagnosed = n - res.Diagnosed
	res.RSS, err = procPeakRSS(c.Process.Pid)
	return res, err
}

// metricsText is a scrape in the Prometheus text format.
type metricsText []byte

func scrape(ctx context.Context, url string) (metricsText, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping the exporter: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("scraping the exporter: %s", resp.Status)
	}
	return b, err
}

// value is the value of the unlabelled sample name.
func (m metricsText) value(name string) (float64, bool) {
	for line := range bytes.Lines(m) {
		if v, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// count is the number of samples whose line starts with prefix.
func (m metricsText) count(prefix string) int {
	n := 0
	for line := range bytes.Lines(m) {
		if bytes.HasPrefix(line, []byte(prefix)) {
			n++
		}
	}
	return n
}

// procCPU is the user + system CPU time of process pid so far (Linux
// /proc; clock ticks at the usual 100 Hz).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// procPeakRSS is the peak resident set size of process pid, MiB.
func procPeakRSS(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kib / 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}
