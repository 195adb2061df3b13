package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The end-to-end tests run the built binary the way a person does: in a
// terminal (tmux), typing keys and reading the screen.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "causalctl-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "causalctl")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
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
	needTool(t, "tmux")
	tm := &tmux{t: t, session: "e2e", socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmdline := []string{"-S", tm.socket, "new-session", "-d", "-s", tm.session,
		"-x", strconv.Itoa(width), "-y", strconv.Itoa(height)}
	for _, e := range env {
		cmdline = append(cmdline, "-e", e)
	}
	cmdline = append(cmdline, strings.Join(append([]string{binary}, args...), " ")+"; sleep 30")
	if out, err := exec.Command("tmux", cmdline...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
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
	deadline := time.Now().Add(timeout)
	var s string
	for {
		s = tm.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("screen lacks %q after %v:\n%s", missing, timeout, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReplayStepperInTmux(t *testing.T) {
	capturePath, err := filepath.Abs("../../internal/cli/replay/testdata/basic.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	tm := startTmux(t, 100, 30, []string{"NO_COLOR=1"}, "replay", "-f", capturePath, "--tui")
	tm.waitFor(5*time.Second, "item 0 of 9", "orders/0", "payments/0", "shipments/0")
	tm.keys("Space")
	tm.waitFor(2*time.Second, "item 1 of 9")
	tm.keys("h") // to the next hold: payments/0@0 waits on orders/0
	s := tm.waitFor(2*time.Second, "item 3 of 9", "waits orders/0 ≥ 1, settled 0")
	if !strings.Contains(s, "▲ payments/0") {
		t.Errorf("the held channel is not marked by its glyph:\n%s", s)
	}
	tm.keys("G") // to the end
	tm.waitFor(3*time.Second, "item 9 of 9", "held 3")
	tm.keys("?")
	tm.waitFor(2*time.Second, "step one receive", "quit")
	tm.keys("Escape")
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
	capturePath, _ := filepath.Abs("../../internal/cli/replay/testdata/basic.ndjson")
	tm := startTmux(t, 60, 15, nil, "replay", "-f", capturePath, "--tui")
	tm.waitFor(5*time.Second, "too small")
}
