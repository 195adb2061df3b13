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

// bashCompletion is the bash-completion package's entry point, which the
// bash script needs (_get_comp_words_by_ref): Debian's and Fedora's path.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// TestBashCompletesInATerminal: in a real interactive bash with the
// bash-completion package and `causalctl completion bash` loaded, Tab
// completes the element of a comma-separated list after the comma, and
// --app offers the demo's Parsley process. Each completed line is then
// run as `printf '<%s>\n' …`, so the test reads each word as the shell
// has it, whatever escaping the completion inserted.
func TestBashCompletesInATerminal(t *testing.T) {
	needTool(t, "bash")
	if _, err := os.Stat(bashCompletion); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: .ci/run must install bash-completion", bashCompletion)
		}
		t.Skipf("bash-completion is not installed: %v", err)
	}
	addr := startDemoUntil(t, "fault injected", "--fault", "dangling", "--listen", "127.0.0.1:0")
	home := t.TempDir()
	env := []string{
		"HOME=" + home, "PS1=$", "TERM=xterm", "INPUTRC=/dev/null",
		"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CAUSALCTL_BROKERS=" + addr,
	}
	tm := startTmuxShell(t, 200, 40, nil, append(append([]string{"env"}, env...), "bash", "--norc", "--noprofile", "-i")...)
	tm.keys("source "+bashCompletion+"; source <(causalctl completion bash); echo loaded-$BASH_VERSION", "Enter")
	tm.waitFor(10*time.Second, "loaded-5.")

	for _, c := range []struct {
		typed, want string
	}{
		{"causalctl replay -t orders,pay", "<orders,payments>"},
		{"causalctl holds --scope orders/0,shipm", "<orders/0,shipments>"},
		{"causalctl holds --app ", "<notifier>"},
		{"causalctl watch --app notif", "<notifier>"},
	} {
		tm.keys("C-u", c.typed, "Tab")
		// The completion has run once the line changed; then run the
		// line's words through printf.
		tm.waitUntil(10*time.Second, func(s string) string {
			if lastLine(s) == strings.TrimRight("$"+c.typed, " ") {
				return "the completion of " + c.typed
			}
			return ""
		})
		tm.keys("C-a", `printf '<%s>\n' `, "Enter")
		tm.waitFor(10*time.Second, c.want)
		tm.keys("clear", "Enter")
		tm.waitUntil(10*time.Second, func(s string) string {
			if strings.Contains(s, c.want) {
				return "a cleared screen"
			}
			return ""
		})
	}
}

// lastLine is the last non-blank line of a screen.
func lastLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

// startTmuxShell runs args (a shell) in a tmux session of its own, with env.
func startTmuxShell(t *testing.T, width, height int, env []string, args ...string) *tmux {
	t.Helper()
	needTool(t, "tmux")
	tm := &tmux{t: t, session: "e2e", socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmdline := []string{"-S", tm.socket, "-f", "/dev/null", "new-session", "-d", "-s", tm.session,
		"-x", strconv.Itoa(width), "-y", strconv.Itoa(height)}
	for _, e := range env {
		cmdline = append(cmdline, "-e", e)
	}
	cmdline = append(cmdline, strings.Join(args, " "))
	if out, err := exec.Command("tmux", cmdline...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}
