package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
)

// The end-to-end tests run the built binary the way a person does: in a
// terminal (tmux), typing keys and reading the screen.

var binary string

// What the test binary is stamped with.
const (
	e2eVersion = "v0.0.0-e2e"
	e2eCommit  = "0123456789abcdef0123456789abcdef01234567"
	e2eDate    = "2026-12-01T09:30:00Z"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "causalctl-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "causalctl")
	// Stamped the way the release build stamps (see .goreleaser.yaml).
	ldflags := "-X main.version=" + e2eVersion + " -X main.commit=" + e2eCommit + " -X main.date=" + e2eDate
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needTool skips without the tool on a developer's machine; CI installs it,
// so there its absence fails.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: .ci/run must install it", name)
		}
		t.Skipf("%s not installed", name)
	}
}

// tmux is one tmux session running a command in a fixed-size terminal.
type tmux struct {
	t       *testing.T
	session string
	socket  string
}

func startTmux(t *testing.T, width, height int, env []string, args ...string) *tmux {
	t.Helper()
	return startTmuxShell(t, width, height, env, append(append([]string{binary}, args...), "; sleep 30")...)
}

func (tm *tmux) keys(keys ...string) {
	tm.t.Helper()
	args := append([]string{"-S", tm.socket, "send-keys", "-t", tm.session}, keys...)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		tm.t.Fatalf("send-keys: %v: %s", err, out)
	}
}

func (tm *tmux) screen() string {
	tm.t.Helper()
	out, err := exec.Command("tmux", "-S", tm.socket, "capture-pane", "-p", "-t", tm.session).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("capture-pane: %v: %s", err, out)
	}
	return string(out)
}

// waitFor polls the screen until every want is on it.
func (tm *tmux) waitFor(timeout time.Duration, want ...string) string {
	tm.t.Helper()
	return tm.waitUntil(timeout, func(s string) string {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return strconv.Quote(w)
			}
		}
		return ""
	})
}

// waitUntil polls the screen until lacks finds nothing missing from it (an
// empty answer), and fails the test with the screen and what is missing
// after timeout.
func (tm *tmux) waitUntil(timeout time.Duration, lacks func(screen string) string) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := tm.screen()
		missing := lacks(s)
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("screen lacks %s after %v:\n%s", missing, timeout, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReplayStepperInTmux(t *testing.T) {
	capturePath := testutil.Testdata("captures", "basic.ndjson")
	tm := startTmux(t, 100, 30, []string{"NO_COLOR=1"}, "replay", "-f", capturePath, "--tui")
	tm.waitFor(5*time.Second, "item 0 of 9", "orders/0", "payments/0", "shipments/0")
	tm.keys("Space")
	tm.waitFor(5*time.Second, "item 1 of 9")
	tm.keys("h") // to the next hold: payments/0@0 waits on orders/0
	s := tm.waitFor(5*time.Second, "item 3 of 9", "waits orders/0 ≥ 1, settled 0")
	if !strings.Contains(s, "▲ payments/0") {
		t.Errorf("the held channel is not marked by its glyph:\n%s", s)
	}
	tm.keys("G") // to the end
	tm.waitFor(5*time.Second, "item 9 of 9", "held 3")
	tm.keys("?")
	tm.waitFor(5*time.Second, "step one receive", "jump to CH@OFFSET") // the help, not only the footer
	tm.keys("Escape")
	// q right behind Escape reads as Alt-q: wait for the help to close.
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(tm.screen(), "jump to CH@OFFSET"); {
		if time.Now().After(deadline) {
			t.Fatalf("Escape did not close the help:\n%s", tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tm.keys("q")
	// The program ends and the shell's sleep remains: the view is gone.
	deadline := time.Now().Add(3 * time.Second)
	for strings.Contains(tm.screen(), "item 9 of 9") {
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTooSmallInTmux(t *testing.T) {
	capturePath := testutil.Testdata("captures", "basic.ndjson")
	tm := startTmux(t, 60, 15, nil, "replay", "-f", capturePath, "--tui")
	tm.waitFor(5*time.Second, "too small")
}

// startDemo runs `causalctl demo` headless in the background and returns the
// address of its broker.
func startDemo(t *testing.T, args ...string) string {
	t.Helper()
	return startDemoUntil(t, "", append([]string{"--duration", "60s"}, args...)...)
}

// startDemoUntil runs `causalctl demo --no-tui` with args until it is
// killed at the test's end, and returns its broker's address once it has
// printed a line containing until ("" for its address line).
func startDemoUntil(t *testing.T, until string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"demo", "--no-tui"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		defer close(found)
		sc := bufio.NewScanner(out)
		addr := ""
		for sc.Scan() {
			// "A Kafka broker is listening on 127.0.0.1:PORT. …"
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok && addr == "" {
				addr = strings.TrimRight(strings.Fields(rest)[0], ".")
			}
			if addr != "" && strings.Contains(sc.Text(), until) {
				found <- addr
				io.Copy(io.Discard, out)
				return
			}
		}
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			t.Fatalf("the demo ended before printing its address and %q", until)
		}
		return addr
	case <-time.After(60 * time.Second):
		t.Fatalf("the demo printed no address and %q within 60s", until)
	}
	return ""
}

func TestDemoWithKcat(t *testing.T) {
	needTool(t, "kcat")
	addr := startDemo(t)
	out, err := exec.Command("kcat", "-b", addr, "-L").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `topic "orders" with 3 partitions`) || !strings.Contains(string(out), `topic "shipments"`) {
		t.Fatalf("kcat -L: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// -c, not -e: the demo keeps writing, so the end keeps moving.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err = exec.CommandContext(ctx, "kcat", "-C", "-b", addr, "-t", "shipments", "-o", "beginning", "-c", "3", "-q",
			"-f", "%t/%p@%o %h\n").Output()
		cancel()
		if err == nil && strings.Count(string(out), "parsley.causes=") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kcat -C read no shipments with headers: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestWatchInTmux: watch against the demo's broker shows the live table.
func TestWatchInTmux(t *testing.T) {
	addr := startDemo(t)
	tm := startTmux(t, 120, 40, []string{"NO_COLOR=1"}, "watch", "--brokers", addr, "-t", "orders,payments,shipments", "--offsets", "start")
	s := tm.waitFor(10*time.Second, "causalctl watch", addr, "RUNNING", "orders/2", "payments/1", "shipments/1", "LOG END")
	if strings.Contains(s, "\x1b") {
		t.Errorf("NO_COLOR: escape sequences on the screen")
	}
	// Each key waits for the screen to show it was taken: keys sent while
	// the view is still starting arrive in one read, where Escape then p is
	// Alt-p, and the table's own rows would satisfy a wait for the detail.
	// Rows are ordered held first, so the cursor is put on orders/1 by
	// filtering rather than by counting rows.
	tm.keys("/")
	tm.waitFor(5*time.Second, "filter: ")
	tm.keys("orders/1", "Enter")
	tm.waitFor(5*time.Second, "filter “orders/1”: 1 of 7")
	tm.keys("Enter") // the detail of the selected channel, full screen
	tm.waitUntil(5*time.Second, func(s string) string {
		if strings.Contains(s, "orders/1  ") && strings.Contains(s, "received up to") && !strings.Contains(s, "LOG END") {
			return ""
		}
		return "the detail of orders/1 alone"
	})
	tm.keys("Escape")
	tm.waitFor(5*time.Second, "LOG END", "recent events")
	tm.keys("p")
	tm.waitFor(5*time.Second, "PAUSED")
	tm.keys("q")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Contains(tm.screen(), "causalctl watch") {
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDemoInTmux: the demo on a terminal shows its watched node live,
// once a key has closed the explanation it opens on.
func TestDemoInTmux(t *testing.T) {
	tm := startTmux(t, 120, 40, []string{"NO_COLOR=1"}, "demo", "--duration", "6s")
	tm.waitFor(10*time.Second, "what you are watching")
	tm.keys("Escape")
	tm.waitFor(10*time.Second, "causalctl demo", "orders/0", "shipments/1", "RUNNING")
	// After the duration the view ends and the summary is printed.
	tm.waitFor(15*time.Second, "Replay", "delivered")
}

// TestVersionFromLdflags: the version, commit and date stamped with
// -ldflags are what `version`, `version -o json` and `--version` report.
func TestVersionFromLdflags(t *testing.T) {
	text, err := exec.Command(binary, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"causalctl version " + e2eVersion + "\n", "commit:     " + e2eCommit + "\n", "build date: " + e2eDate + "\n", "go:         " + runtime.Version()} {
		if !strings.Contains(string(text), want) {
			t.Errorf("version lacks %q:\n%s", want, text)
		}
	}
	flag, err := exec.Command(binary, "--version").Output()
	if err != nil || string(flag) != string(text) {
		t.Errorf("--version %q (%v) differs from version %q", flag, err, text)
	}
	js, err := exec.Command(binary, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version, Commit, Date string
		GoVersion             string `json:"go_version"`
	}
	if err := json.Unmarshal(js, &got); err != nil || got.Version != e2eVersion || got.Commit != e2eCommit || got.Date != e2eDate || got.GoVersion != runtime.Version() {
		t.Errorf("version -o json: %s (%v)", js, err)
	}
}
