//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
)

// The pseudo-terminal tests run the binary on a terminal of their own that
// never answers anything it is asked, as script(1) and some ssh and CI
// terminals do, and read every byte the program writes to it. tmux cannot
// stand in for it: inside tmux, TERM says screen or tmux, and the terminal
// libraries ask nothing there.

// Escape sequences that ask the terminal something and wait for the answer.
var terminalQueries = map[string]string{
	"OSC 11 (background colour)": "\x1b]11;?",
	"OSC 10 (foreground colour)": "\x1b]10;?",
	"DSR (cursor position)":      "\x1b[6n",
}

// ptySession is one program running in a new session whose controlling
// terminal is a fresh pseudo-terminal.
type ptySession struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd

	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{} // closed and replaced on every read
	eof     chan struct{} // closed when the terminal has no writer left
}

// startPTY runs name with args as the leader of a new session on a new
// 100×30 pseudo-terminal, with env as its whole environment.
func startPTY(t *testing.T, env []string, name string, args ...string) *ptySession {
	t.Helper()
	master, slave := testutil.PTY(t, 100, 30)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A new session whose controlling terminal is the pseudo-terminal
	// (the child's fd 0): the child's group is its foreground.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child holds the only writers: EOF when it is gone
	s := &ptySession{t: t, master: master, cmd: cmd, changed: make(chan struct{}), eof: make(chan struct{})}
	go s.read()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return s
}

func (s *ptySession) read() {
	defer close(s.eof)
	buf := make([]byte, 4096)
	for {
		n, err := s.master.Read(buf)
		s.mu.Lock()
		s.out.Write(buf[:n])
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		if err != nil {
			return // EIO once no process has the terminal open
		}
	}
}

// output is every byte written to the terminal so far.
func (s *ptySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// waitFor waits until the terminal has received want.
func (s *ptySession) waitFor(timeout time.Duration, want string) {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, changed := strings.Contains(s.out.String(), want), s.changed
		s.mu.Unlock()
		if got {
			return
		}
		select {
		case <-changed:
		case <-s.eof:
			if !strings.Contains(s.output(), want) {
				s.t.Fatalf("the program ended without writing %q:\n%q", want, s.output())
			}
			return
		case <-deadline:
			s.t.Fatalf("no %q after %v:\n%q", want, timeout, s.output())
		}
	}
}

// wait waits for the program to exit and for the terminal to have received
// everything, and returns the exit code.
func (s *ptySession) wait() int {
	s.t.Helper()
	err := s.cmd.Wait()
	<-s.eof
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0
}

func ptyEnv(t *testing.T, extra ...string) []string {
	return append([]string{"TERM=xterm-256color", "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, extra...)
}

func assertNoQueries(t *testing.T, out string) {
	t.Helper()
	for what, seq := range terminalQueries {
		if strings.Contains(out, seq) {
			t.Errorf("the program asked the terminal for its %s:\n%q", what, out)
		}
	}
}

// TestNoTerminalQueries: no command asks the terminal anything — not a
// text command, not with NO_COLOR, not the live view — so none waits on a
// terminal that does not answer.
func TestNoTerminalQueries(t *testing.T) {
	for _, env := range [][]string{nil, {"NO_COLOR=1"}} {
		s := startPTY(t, ptyEnv(t, env...), binary, "decode", "--hex", "0100")
		if code := s.wait(); code != 0 {
			t.Fatalf("decode %v: exit %d:\n%q", env, code, s.output())
		}
		out := s.output()
		if !strings.Contains(out, "parsley.causes") {
			t.Fatalf("decode %v printed no table:\n%q", env, out)
		}
		assertNoQueries(t, out)
	}

	capturePath := testutil.Testdata("captures", "basic.ndjson")
	s := startPTY(t, ptyEnv(t), binary, "replay", "-f", capturePath, "--tui")
	s.waitFor(10*time.Second, "item 0 of 9")
	if _, err := s.master.WriteString("q"); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(); code != 0 {
		t.Fatalf("replay --tui: exit %d:\n%q", code, s.output())
	}
	assertNoQueries(t, s.output())
}

// TestDemoInBackground: `causalctl demo &` from an interactive shell runs
// to its end instead of being stopped by the terminal (the live view's raw
// mode would raise SIGTTOU): it prints its status lines as with --no-tui
// and says why on stderr.
func TestDemoInBackground(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for job control")
	}
	// set -m: job control, as in an interactive shell, so the job gets a
	// process group of its own that is not the terminal's foreground.
	// bash reports a stopped job as 128+SIGTTOU.
	script := `set -m; "$0" demo --duration 2s --listen 127.0.0.1:0 --tick 20ms & wait $!; echo "job exit=$?"`
	s := startPTY(t, ptyEnv(t, "NO_COLOR=1"), "bash", "-c", script, binary)
	s.waitFor(30*time.Second, "job exit=")
	out := s.output()
	if !strings.Contains(out, "job exit=0") {
		t.Fatalf("the background demo did not end well:\n%q", out)
	}
	for _, want := range []string{"not in the terminal's foreground: a status line every second instead of the live view", "] produced=", "Replay complete"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "\x1b[?1049h") {
		t.Errorf("the background demo took the screen:\n%q", out)
	}
}
