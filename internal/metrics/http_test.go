package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
)

func get(t *testing.T, url, accept string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestServer serves a snapshot on a free port: /metrics in both formats,
// /healthz following the gate's state.
func TestServer(t *testing.T) {
	src := &fixed{}
	srv, err := Serve("127.0.0.1:0", liveEndpoint(src))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + srv.Addr()

	resp, body := get(t, base+"/healthz", "")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "no snapshot yet") {
		t.Errorf("healthz before the first snapshot: %d %q", resp.StatusCode, body)
	}
	src.set(twoChannels())
	resp, body = get(t, base+"/healthz", "")
	if resp.StatusCode != http.StatusOK || body != "ok\n" {
		t.Errorf("healthz while running: %d %q", resp.StatusCode, body)
	}

	// What Prometheus asks for gets OpenMetrics; anything else the text format.
	resp, body = get(t, base+"/metrics", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("content type %q, want OpenMetrics", ct)
	}
	for _, want := range []string{"# TYPE causalctl_records_received counter\n", "causalctl_records_received_total 120", "causalctl_held_records 3", "\n# EOF\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("OpenMetrics scrape lacks %q", want)
		}
	}
	resp, body = get(t, base+"/metrics", "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q, want the text format", ct)
	}
	for _, want := range []string{"# TYPE causalctl_records_received_total counter\n", "causalctl_oldest_hold_age_seconds 90\n", "go_goroutines ", "process_cpu_seconds_total ", "promhttp_metric_handler_requests_total{code=\"200\"} "} {
		if !strings.Contains(body, want) {
			t.Errorf("text scrape lacks %q", want)
		}
	}
	if strings.Contains(body, "# EOF") {
		t.Error("text scrape ends with OpenMetrics' # EOF")
	}

	s := twoChannels()
	s.State = engine.StateFailedClosed
	s.Failure = &inspect.Failure{Channel: "orders/1", Offset: 44, Code: "truncated"}
	src.set(s)
	resp, body = get(t, base+"/healthz", "")
	if resp.StatusCode != http.StatusServiceUnavailable || body != "failed closed at orders/1@44: truncated\n" {
		t.Errorf("healthz once failed closed: %d %q", resp.StatusCode, body)
	}
	s = twoChannels()
	s.State, s.RetryingFor = engine.StateDisconnected, 7*time.Second
	src.set(s)
	if resp, body = get(t, base+"/healthz", ""); resp.StatusCode != http.StatusOK || body != "ok: disconnected (retrying, 7s)\n" {
		t.Errorf("healthz while retrying the brokers: %d %q", resp.StatusCode, body)
	}
	if _, body = get(t, base+"/metrics", ""); !strings.Contains(body, "causalctl_disconnected_seconds 7\n") {
		t.Errorf("no disconnected time while retrying")
	}
	s = twoChannels()
	s.State, s.Err = engine.StateError, "no progress for 30s"
	src.set(s)
	if resp, body = get(t, base+"/healthz", ""); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "no progress") {
		t.Errorf("healthz once the feed stopped: %d %q", resp.StatusCode, body)
	}
	if resp, _ = get(t, base+"/nothing", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown path: %d", resp.StatusCode)
	}

	if err := srv.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after Close")
	}
}

// liveEndpoint is watch's endpoint over src.
func liveEndpoint(src Snapshots) *Endpoint {
	return NewEndpoint(LiveSource(src, Options{}, nil), "causalctl", nil)
}

func TestServeErrors(t *testing.T) {
	if _, err := Serve("9464", liveEndpoint(&fixed{})); err == nil || !strings.Contains(err.Error(), `metrics address "9464"`) {
		t.Errorf("an address without a port: %v", err)
	}
	srv, err := Serve("127.0.0.1:0", liveEndpoint(&fixed{}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := Serve(srv.Addr(), liveEndpoint(&fixed{})); err == nil || !strings.Contains(err.Error(), "metrics endpoint") {
		t.Errorf("an address in use: %v", err)
	}
}
