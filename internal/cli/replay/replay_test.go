package replay

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine/enginetest"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// basicCapture is one of the captures several packages read.
var basicCapture = testutil.Testdata("captures", "basic.ndjson")

// exec runs the replay command in-process, as root would, and returns its
// error, stdout and stderr.
func exec(t *testing.T, ctx context.Context, tty bool, stdin string, args ...string) (error, string, string) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	ios.SetTTY(tty)
	in.WriteString(stdin)
	f := cmdutiltest.Factory(ios, "")
	cmd := cmdutiltest.AsRoot(NewCmdReplay(f, nil))
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	err := cmd.ExecuteContext(ctx)
	return err, out.String(), errOut.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, *update, name, got)
}

func TestGolden(t *testing.T) {
	dir := testutil.Testdata("captures")
	captures, _ := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	if len(captures) == 0 {
		t.Fatal("no captures in testdata/captures")
	}
	for _, c := range captures {
		base := strings.TrimSuffix(filepath.Base(c), ".ndjson")
		for _, tc := range []struct {
			suffix string
			tty    bool
			args   []string
		}{
			{"text", true, nil},
			{"json", false, []string{"-o", "json"}},
			{"ndjson", false, nil}, // the default in a pipe
			{"hold.ndjson", false, []string{"--undecodable", "hold"}},
			{"timestamp.ndjson", false, []string{"--interleave", "timestamp"}},
		} {
			t.Run(base+"."+tc.suffix, func(t *testing.T) {
				err, out, stderr := exec(t, context.Background(), tc.tty, "", append([]string{"-f", c}, tc.args...)...)
				if err != nil {
					// Failures are part of the golden output.
					out += "error: " + err.Error() + "\n"
				}
				// The goldens name the capture by its path in the module.
				out = strings.ReplaceAll(out, dir, "testdata/captures")
				if stderr != "" {
					t.Errorf("stderr: %q", stderr)
				}
				golden(t, base+"."+tc.suffix+".golden", out)
			})
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, il := range []string{"file", "timestamp", "channel", "round-robin", "random:9"} {
		_, a, _ := exec(t, context.Background(), false, "", "-f", basicCapture, "--interleave", il)
		_, b, _ := exec(t, context.Background(), false, "", "-f", basicCapture, "--interleave", il)
		if a != b || a == "" {
			t.Errorf("%s: two runs differ", il)
		}
	}
}

func TestStdinMatchesFile(t *testing.T) {
	data, err := os.ReadFile(basicCapture)
	if err != nil {
		t.Fatal(err)
	}
	_, fromFile, _ := exec(t, context.Background(), false, "", "-f", basicCapture)
	err, fromStdin, _ := exec(t, context.Background(), false, string(data), "-f", "-")
	if err != nil || fromStdin != fromFile {
		t.Errorf("stdin replay differs from the file's (%v)", err)
	}
}

func TestExitCodes(t *testing.T) {
	err, out, _ := exec(t, context.Background(), false, "", "-f", basicCapture, "--fail-on-held", "-o", "json")
	if cmdutil.ExitCode(err) != cmdutil.ExitHeld || !strings.Contains(err.Error(), "3 records still held") {
		t.Errorf("--fail-on-held with holds: %v", err)
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("summary not printed before exit 3: %q", out)
	}
	// One held record is one, not "1 records" (its first three lines: a
	// payment waiting on an order not in the capture).
	data, rerr := os.ReadFile(basicCapture)
	if rerr != nil {
		t.Fatal(rerr)
	}
	first3 := strings.Join(strings.SplitN(string(data), "\n", 4)[:3], "\n") + "\n"
	if err, _, _ := exec(t, context.Background(), false, first3, "-f", "-", "--fail-on-held", "-o", "json"); cmdutil.ExitCode(err) != cmdutil.ExitHeld || !strings.HasPrefix(err.Error(), "1 record still held") {
		t.Errorf("--fail-on-held with one hold: %v", err)
	}
	// With the cause of every hold in scope removed, nothing is held.
	err, _, _ = exec(t, context.Background(), false, "", "-f", basicCapture, "--fail-on-held", "--scope", "orders")
	if err != nil {
		t.Errorf("--fail-on-held without holds: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err, out, _ = exec(t, ctx, false, "", "-f", basicCapture, "-o", "json")
	if cmdutil.ExitCode(err) != cmdutil.ExitInterrupted {
		t.Errorf("interrupted: %v", err)
	}
	var s struct{ Interrupted bool }
	if json.Unmarshal([]byte(out), &s) != nil || !s.Interrupted {
		t.Errorf("interrupted summary: %q", out)
	}
}

// TestScopeAndStart covers scope resolution, the ignore branch and starts.
func TestScopeAndStart(t *testing.T) {
	summary := func(args ...string) (s struct {
		Received, Delivered, Dropped, Held, Skipped int64
		Channels                                    []struct {
			Channel string
			Settled *int64
		}
	}) {
		t.Helper()
		err, out, stderr := exec(t, context.Background(), false, "", append([]string{"-f", basicCapture, "-o", "json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v %s", args, err, stderr)
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Without orders in scope its claims are ignored: payments delivers.
	s := summary("--scope", "payments,shipments/0")
	if s.Held != 0 || s.Skipped != 3 || len(s.Channels) != 2 {
		t.Errorf("ignore branch: %+v", s)
	}
	// A start above a record makes it a replay: dropped.
	s = summary("--start", "orders/0=1")
	if s.Dropped != 2 || *s.Channels[0].Settled != 2 {
		t.Errorf("start: %+v", s)
	}
	// A scope channel absent from the input gates nothing it is not named in.
	s = summary("--scope", "orders/0,orders/7")
	if len(s.Channels) != 2 || s.Channels[1].Settled != nil || s.Held != 0 {
		t.Errorf("absent channel: %+v", s)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(basicCapture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	undecodable := strings.Replace(lines[2], `"value":"AQEAAAAAAAAAAAAAAAAAAAAKAQAAAAAAAAAAAQ=="`, `"value":"AgA="`, 1)
	for _, tc := range []struct {
		name    string
		content string
		args    []string
		code    int
		msg     string
	}{
		{"truncated last line", strings.Join(lines[:3], "\n") + "\n" + lines[3][:40], nil, 1, "line 4: "},
		{"not JSON", lines[0] + "\nhello\n", nil, 1, "line 2: "},
		{"wrong type", strings.Replace(lines[1], `"offset":0`, `"offset":"0"`, 1) + "\n", nil, 1, `line 1: `},
		{"bad base64", strings.Replace(lines[1], `"aGVsbG8="`, `"aGVsbG8"`, 1) + "\n", nil, 1, "line 1: "},
		{"empty file", "", nil, 1, "an empty capture is an error"},
		{"out of order feed", strings.Join(lines[:8], "\n") + "\n" + lines[6] + "\n", nil, 1,
			"line 9: payments/0 offset 2: offset 2 after offset 3 (line 8): a channel's offsets must not decrease"},
		{"name without UUID", `{"topic":"x","partition":0,"offset":1}` + "\n", nil, 1, `line 1: x/0: topic "x" has no topic_id`},
		{"unknown scope topic", string(good), []string{"--scope", "refunds"}, 2, `unknown topic "refunds"`},
		{"malformed scope channel", string(good), []string{"--scope", "orders/x"}, 2, "--scope"},
		{"mistyped scope UUID", string(good), []string{"--scope", "0d000000-0000-0000-0000-000000000000/0"}, 2, "topic UUID 0d000000-0000-0000-0000-000000000000 is not in the input"},
		{"start outside scope", string(good), []string{"--scope", "orders", "--start", "payments/0=3"}, 2, "not in the scope"},
		{"start not a number", string(good), []string{"--start", "orders/0=x"}, 2, "--start"},
		{"bad interleave", string(good), []string{"--interleave", "sideways"}, 2, "--interleave"},
		{"bad undecodable mode", string(good), []string{"--undecodable", "skip"}, 2, "--undecodable"},
		{"group without a broker range", string(good), []string{"--from-group", "g"}, 2, "--from-group reads from the brokers"},
		{"offsets without a broker range", string(good), []string{"--offsets", "-5"}, 2, "--offsets reads from the brokers"},
		{"line too long", string(good), []string{"--max-line-size", "100"}, 1, "line 2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tc.name, " ", "-")+".ndjson", tc.content)
			err, _, _ := exec(t, context.Background(), false, "", append([]string{"-f", p}, tc.args...)...)
			if err == nil {
				t.Fatal("accepted")
			}
			if got := cmdutil.ExitCode(err); got != tc.code {
				t.Errorf("exit code %d, want %d (%v)", got, tc.code, err)
			}
			if !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q lacks %q or is not one line", err, tc.msg)
			}
		})
	}
	// The gate fails closed: exit 1, and the error is the failure, at its
	// line.
	for _, tc := range []struct {
		name, content string
		line          int64
		channel       string
		offset        int64
		code          gate.Code
	}{
		{"undecodable", strings.Join(lines[:2], "\n") + "\n" + undecodable + "\n" + strings.Join(lines[3:], "\n") + "\n",
			3, "payments/0", 0, gate.Code(clock.CodeUnknownVersion)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, _, _ := exec(t, context.Background(), false, "", "-f", write(strings.ReplaceAll(tc.name, " ", "-")+".ndjson", tc.content))
			if cmdutil.ExitCode(err) != 1 {
				t.Errorf("exit code %d, want 1 (%v)", cmdutil.ExitCode(err), err)
			}
			if ie := enginetest.FailedClosed(t, err, tc.channel, tc.offset, tc.code); ie != nil && ie.Line != tc.line {
				t.Errorf("failed closed at line %d, want %d", ie.Line, tc.line)
			}
		})
	}
	err, _, _ = exec(t, context.Background(), false, "", "-f", filepath.Join(dir, "missing.ndjson"))
	if cmdutil.ExitCode(err) != 1 || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	err, _, _ = exec(t, context.Background(), false, "")
	if cmdutil.ExitCode(err) != 2 {
		t.Errorf("no input: %v", err)
	}
}

// TestFailClosedKeepsEvents: events before the failure stay on stdout, the
// summary says where the gate failed, and so does the error — whose text,
// the one line the CLI prints after "causalctl: ", is checked here and
// nowhere else; every other test asserts a failure from the typed error
// or summary (enginetest).
func TestFailClosedKeepsEvents(t *testing.T) {
	good, _ := os.ReadFile(basicCapture)
	lines := strings.Split(string(good), "\n")
	lines[3] = strings.Replace(lines[3], `"value":"AQA="`, `"value":null`, 1)
	p := filepath.Join(t.TempDir(), "c.ndjson")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
	err, out, _ := exec(t, context.Background(), false, "", "-f", p)
	if cmdutil.ExitCode(err) != 1 || err.Error() != p+": line 4: orders/0 offset 1: failed closed: null-value: header value is null" {
		t.Fatalf("error: %v", err)
	}
	enginetest.FailedClosed(t, err, "orders/0", 1, gate.Code(clock.CodeNullValue))
	outLines := strings.Split(strings.TrimSpace(out), "\n")
	if len(outLines) != 3 || !strings.HasPrefix(outLines[0], `{"type":"deliver","seq":1`) {
		t.Fatalf("stdout:\n%s", out)
	}
	var sum inspect.Summary
	if err := json.Unmarshal([]byte(outLines[2]), &sum); err != nil {
		t.Fatal(err)
	}
	enginetest.SummaryFailed(t, sum.Failed, "orders/0", 1, gate.Code(clock.CodeNullValue))
	if sum.Failed != nil && sum.Failed.Line != 4 {
		t.Errorf("summary: failed at line %d, want 4", sum.Failed.Line)
	}
}

// TestMixedSpellings: lines may name one channel by topic, by UUID or by
// both; every interleaving keeps the channel's order and loses nothing.
func TestMixedSpellings(t *testing.T) {
	const id = "00000000-0000-0000-0000-00000000000a"
	lines := []string{
		`{"topic":"orders","topic_id":"` + id + `","partition":0,"offset":0,"timestamp":9}`,
		`{"topic":"orders","partition":0,"offset":1,"timestamp":3}`,
		`{"topic_id":"` + id + `","partition":0,"offset":2,"timestamp":1}`,
		`{"topic":"orders","partition":0,"offset":3}`,
	}
	p := filepath.Join(t.TempDir(), "mixed.ndjson")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	for _, il := range []string{"file", "timestamp", "channel", "round-robin", "random:3"} {
		err, out, _ := exec(t, context.Background(), false, "", "-f", p, "--interleave", il, "-o", "json")
		var s struct{ Delivered, Dropped int }
		if err != nil || json.Unmarshal([]byte(out), &s) != nil || s.Delivered != 4 || s.Dropped != 0 {
			t.Errorf("%s: %v %s", il, err, out)
		}
	}
}

// TestEmptyHeaderValue: a zero-length parsley.causes value is truncated,
// not null, through the whole replay path.
func TestEmptyHeaderValue(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.ndjson")
	os.WriteFile(p, []byte(`{"topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"offset":0,"headers":[{"key":"parsley.causes","value":""}]}`+"\n"), 0o644)
	err, _, _ := exec(t, context.Background(), false, "", "-f", p)
	enginetest.FailedClosed(t, err, "00000000-0000-0000-0000-00000000000a/0", 0, gate.Code(clock.CodeTruncated))
}

// TestInterruptWhileReading: Ctrl-C stops a replay whose stdin is still
// open and still being read for the first pass.
func TestInterruptWhileReading(t *testing.T) {
	good, _ := os.ReadFile(basicCapture)
	pr, pw := io.Pipe()
	defer pw.Close()
	// A producer that keeps the pipe open: it writes the capture and never
	// closes. Its write returns once the replay has read all of it.
	wrote := make(chan struct{})
	go func() { pw.Write(good); close(wrote) }()
	ios, _, out, _ := iostreams.Test()
	ios.In = pr
	f := cmdutiltest.Factory(ios, "")
	cmd := NewCmdReplay(f, nil)
	cmd.SetArgs([]string{"-f", "-"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	select {
	case <-wrote: // the first pass has the whole capture and waits for more
	case err := <-done:
		t.Fatalf("the replay ended before reading the open pipe: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the replay did not read its stdin")
	}
	cancel()
	select {
	case err := <-done:
		if cmdutil.ExitCode(err) != cmdutil.ExitInterrupted {
			t.Errorf("exit %d (%v), want 130", cmdutil.ExitCode(err), err)
		}
		if out.Len() != 0 {
			t.Errorf("output before the replay began: %q", out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not stop a replay reading an open pipe")
	}
}

// TestTUIInBackground: --tui from a job in the background of its terminal
// replays as without it, and says so, instead of taking the screen.
func TestTUIInBackground(t *testing.T) {
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(true)
	ios.Foreground = false
	cmd := cmdutiltest.AsRoot(NewCmdReplay(cmdutiltest.Factory(ios, ""), nil))
	cmd.SetArgs([]string{"-f", basicCapture, "--tui"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if want := "causalctl: not in the terminal's foreground: the replay's text output instead of the live view\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if !strings.Contains(out.String(), "Replay complete") || strings.Contains(out.String(), "\x1b[?1049h") {
		t.Errorf("not the text output:\n%q", out)
	}
}

// manyRecords is a capture of n records on one partition, none waiting
// for another: n deliver events.
func manyRecords(n int) string {
	var b strings.Builder
	b.WriteString(`{"topic":"orders","topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"position":0}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"topic":"orders","topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"offset":%d,"timestamp":1000,"headers":[]}`+"\n", i)
	}
	return b.String()
}

// TestEventsGoThroughFinalOutput: the ndjson events are streamed in whole
// lines under the FinalOutput (cmdutil.LineWriter): once the process is
// exiting after an interrupt's grace, no more of them are written, so
// stdout cannot be cut mid-line by the exit.
func TestEventsGoThroughFinalOutput(t *testing.T) {
	for _, args := range [][]string{{"-o", "ndjson"}, {"-o", "ndjson", "--tasks"}} {
		ios, in, out, _ := iostreams.Test()
		in.WriteString(manyRecords(5000))
		f := cmdutiltest.Factory(ios, "")
		f.Final.Stop()
		cmd := cmdutiltest.AsRoot(NewCmdReplay(f, nil))
		cmd.SetArgs(append([]string{"-f", "-"}, args...))
		err := cmd.ExecuteContext(context.Background())
		if err == nil || out.Len() != 0 {
			t.Errorf("%v: error %v, %d bytes on stdout: want an error and nothing written", args, err, out.Len())
		}
	}
}
