package check

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// exec runs the check command in-process, as root would, and returns its
// exit code, stdout and stderr.
func exec(t *testing.T, tty bool, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return execContext(t, ctx, tty, stdin, args...)
}

func execContext(t *testing.T, ctx context.Context, tty bool, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	ios.SetTTY(tty)
	in.WriteString(stdin)
	f := cmdutiltest.Factory(ios, "")
	cmd := cmdutiltest.AsRoot(NewCmdCheck(f, nil))
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	err := cmd.ExecuteContext(ctx)
	if err != nil && !errors.As(err, new(*cmdutil.ExitError)) {
		errOut.WriteString(err.Error())
	}
	return cmdutil.ExitCode(err), out.String(), errOut.String()
}

// The fixture holds one finding of each offline kind but beyond-log-end:
// a hole two unconsumed hops deep (v/0 drops u/0's claim on a/0), a claim
// on a proven marker, a self-cycle and a truncated header.
func TestGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "ndjson"} {
		for _, tty := range []bool{true, false} {
			code, out, errOut := exec(t, tty, "", "-f", "testdata/fixture.ndjson", "--scope", "a,c", "-o", format)
			if code != cmdutil.ExitFound || errOut != "" {
				t.Errorf("%s: exit %d, stderr %q: want 4 and nothing", format, code, errOut)
			}
			testutil.Golden(t, *update && tty, "fixture."+format+".golden", out)
		}
	}
	// Every channel in scope: the hole cannot hide, the rest stays.
	code, out, _ := exec(t, false, "", "-f", "testdata/fixture.ndjson")
	if code != cmdutil.ExitFound || strings.Contains(out, "hole") || !strings.Contains(out, "3 findings: not-a-record (1), self-cycle (1), undecodable (1).") {
		t.Errorf("default scope: exit %d\n%s", code, out)
	}
}

// TestCountsInTheirNumber: one of a thing is said in the singular.
func TestCountsInTheirNumber(t *testing.T) {
	fixture, err := os.ReadFile("testdata/fixture.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(fixture)), "\n")
	undecodable := lines[len(lines)-1] // c/0@3, its header cut short
	code, out, errOut := exec(t, false, undecodable, "-f", "-", "-o", "text")
	want := "Audited stdin: 1 record on 1 channel, for a node consuming c/0.\n1 finding: undecodable (1).\n"
	if code != cmdutil.ExitFound || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d (stderr %q):\n%s\nwant it to start with:\n%s", code, errOut, out, want)
	}
}

func TestScopesFile(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "scopes.txt")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	code, out, _ := exec(t, false, "", "-f", "testdata/fixture.ndjson", "--max-findings", "0", "-o", "json",
		"--scopes", write("# nodes\nnotifier: a/0, c/0\n\nall: a,u,v,c\nshadow: a,v,c\n"))
	if code != cmdutil.ExitFound || !strings.Contains(out, `"scope":"notifier"`) || strings.Contains(out, `"scope":"all"`) ||
		!strings.Contains(out, `"scope":"shadow"`) || !strings.Contains(out, `{"name":"all","channels":["a/0","c/0","u/0","v/0"]}`) {
		t.Errorf("exit %d: want holes for notifier and shadow, none for all:\n%s", code, out)
	}
	for text, want := range map[string]string{
		"notifier a/0":           "line 1: want NAME: CH,CH",
		"n: a/0\nn: c/0\n":       `line 2: node "n" named twice`,
		"n: nosuch\n":            "line 1: --scope",
		"# nothing\n":            "no node in it",
		"n:\n":                   "line 1: want NAME",
		"ok: a/0\nbad: zz/0\n":   "line 2",
		"ok: a/0\nbad: a/0,,\n":  "line 2",
		"ok: a/0\nbad: c/0, x\n": "line 2",
	} {
		code, _, errOut := exec(t, false, "", "-f", "testdata/fixture.ndjson", "--scopes", write(text))
		if code != cmdutil.ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("scopes %q: exit %d, stderr %q: want 2 and %q", text, code, errOut, want)
		}
	}
}

func TestFlagsAndErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.ndjson")
	os.WriteFile(bad, []byte(`{"topic":"a","partition":0,"offset":3,"topic_id":"a0000000-0000-0000-0000-000000000001"}
{"topic":"a","partition":0,"offset":2,"topic_id":"a0000000-0000-0000-0000-000000000001"}
`), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, cmdutil.ExitUsage, "give one source"},
		{[]string{"-f", "testdata/fixture.ndjson", "--scope", "a", "--scopes", "x"}, cmdutil.ExitUsage, "not both"},
		{[]string{"-f", "testdata/fixture.ndjson", "--max-findings", "-1"}, cmdutil.ExitUsage, "--max-findings"},
		{[]string{"-f", "testdata/fixture.ndjson", "-o", "yaml"}, cmdutil.ExitUsage, "--output yaml"},
		{[]string{"-f", "testdata/fixture.ndjson", "--limit", "0"}, cmdutil.ExitUsage, "--limit 0: want 1 or more"},
		{[]string{"-f", "testdata/fixture.ndjson", "--limit", "3", "--all"}, cmdutil.ExitUsage, "give --limit or --all, not both"},
		{[]string{"-f", "testdata/fixture.ndjson", "--all", "-o", "json"}, cmdutil.ExitUsage, "-o json holds every finding"},
		{[]string{"-f", "testdata/fixture.ndjson", "--scope", "nosuch"}, cmdutil.ExitUsage, "--scope"},
		{[]string{"--offsets", "start", "-f", "testdata/fixture.ndjson"}, cmdutil.ExitUsage, "--offsets"},
		{[]string{"-f", "testdata/missing.ndjson"}, cmdutil.ExitFailure, "missing.ndjson"},
		{[]string{"-f", bad}, cmdutil.ExitFailure, "line 2: a/0 offset 2: offset 2 after offset 3 (line 1): a channel's offsets must not decrease"},
	} {
		code, _, errOut := exec(t, false, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	// --max-findings stops early; stdin works as a source.
	in, _ := os.ReadFile("testdata/fixture.ndjson")
	code, out, _ := exec(t, false, string(in), "-f", "-", "--scope", "a,c", "--max-findings", "2")
	if code != cmdutil.ExitFound || !strings.Contains(out, "2 findings") || !strings.Contains(out, "Stopped at --max-findings") {
		t.Errorf("--max-findings 2: exit %d\n%s", code, out)
	}
	// Ctrl-C: exit 130, no report.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code, out, _ := execContext(t, ctx, false, "", "-f", "testdata/fixture.ndjson"); code != cmdutil.ExitInterrupted || out != "" {
		t.Errorf("interrupted: exit %d, output %q: want 130 and nothing", code, out)
	}
	// A clean input exits 0.
	clean := filepath.Join(t.TempDir(), "clean.ndjson")
	os.WriteFile(clean, in[:strings.Index(string(in), `{"topic":"u"`)], 0o644)
	if code, out, _ := exec(t, false, "", "-f", clean); code != 0 || !strings.Contains(out, "No findings") {
		t.Errorf("clean input: exit %d\n%s", code, out)
	}
}

// TestTasks: --tasks audits each Parsley task's scope, partition p of
// every channel. c/0@0 claims u/1@0, whose own clock claims a/0@1, and
// does not carry that claim: a node consuming a/0 and c/0 but not u/1 —
// task 0 — can deliver c/0@0 before a/0@1. One scope of every channel
// consumes u/1 and waits; the tasks' audit finds the hole in task 0.
func TestTasks(t *testing.T) {
	ids := map[string]string{"a": "a0000000-0000-0000-0000-000000000001", "u": "a0000000-0000-0000-0000-000000000002", "c": "a0000000-0000-0000-0000-000000000004"}
	ch := func(topic string, p int32) clock.Channel {
		id, err := clock.ParseTopicID(ids[topic])
		if err != nil {
			t.Fatal(err)
		}
		return clock.Channel{Topic: id, Partition: p}
	}
	line := func(topic string, p int32, off int64, es ...clock.Entry) string {
		l := fmt.Sprintf(`{"topic":%q,"topic_id":%q,"partition":%d,"offset":%d`, topic, ids[topic], p, off)
		if len(es) > 0 {
			l += fmt.Sprintf(`,"headers":[{"key":%q,"value":%q}]`, clock.HeaderCauses, base64.StdEncoding.EncodeToString(clock.Encode(clock.MustNew(es...))))
		}
		return l + "}\n"
	}
	capture := line("a", 0, 0) + line("a", 0, 1) +
		line("u", 1, 0, clock.Entry{Channel: ch("a", 0), Position: 1}) +
		line("c", 0, 0, clock.Entry{Channel: ch("u", 1), Position: 0})
	code, out, errOut := exec(t, false, capture, "-f", "-", "-o", "json")
	if code != cmdutil.ExitOK || strings.Contains(out, `"hole"`) {
		t.Fatalf("one scope: exit %d (stderr %q), want no finding:\n%s", code, errOut, out)
	}
	code, out, errOut = exec(t, false, capture, "-f", "-", "-o", "json", "--tasks")
	if code != cmdutil.ExitFound || !strings.Contains(out, `"scope":"task 0"`) || strings.Contains(out, `"scope":"task 1"`) ||
		!strings.Contains(out, `{"name":"task 0","channels":["a/0","c/0"]}`) || !strings.Contains(out, `{"name":"task 1","channels":["u/1"]}`) {
		t.Errorf("--tasks: exit %d (stderr %q), want a hole in task 0's scope only:\n%s", code, errOut, out)
	}
	// --scope narrows what is split; --scopes is refused with it.
	code, out, _ = exec(t, false, capture, "-f", "-", "-o", "json", "--tasks", "--scope", "a,u")
	if code != cmdutil.ExitOK || !strings.Contains(out, `{"name":"task 0","channels":["a/0"]}`) {
		t.Errorf("--tasks --scope a,u: exit %d:\n%s", code, out)
	}
	if code, _, errOut = exec(t, false, capture, "-f", "-", "--tasks", "--scopes", "x"); code != cmdutil.ExitUsage || !strings.Contains(errOut, "--tasks") {
		t.Errorf("--tasks --scopes: exit %d, %q", code, errOut)
	}
}

// TestReportGoesThroughFinalOutput: the report is the command's final
// document (cmdutil.FinalOutput): once the process is exiting after an
// interrupt's grace, none of it is written, rather than part of it.
func TestReportGoesThroughFinalOutput(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	f.Final.Stop()
	cmd := cmdutiltest.AsRoot(NewCmdCheck(f, nil))
	cmd.SetArgs([]string{"-f", "testdata/fixture.ndjson", "--scope", "a,c", "-o", "json"})
	err := cmd.ExecuteContext(context.Background())
	if err == nil || out.Len() != 0 {
		t.Errorf("error %v, %d bytes on stdout: want an error and nothing written", err, out.Len())
	}
}

// TestInterruptDuringNDJSONEndsOnAFinding: Ctrl-C, then the grace running
// out, while thousands of ndjson findings go to a slow stdout: the exit
// waits only for the batch being written (cmdutil.LineWriter), not for the
// whole report, and what was written ends on a line, every one a finding.
func TestInterruptDuringNDJSONEndsOnAFinding(t *testing.T) {
	fixture, err := os.ReadFile("testdata/fixture.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's first hole (c/0@0, line 8) at 3000 offsets: 3000
	// findings, megabytes of ndjson.
	lines := strings.Split(string(fixture), "\n")
	var in strings.Builder
	in.WriteString(strings.Join(lines[:7], "\n") + "\n")
	for i := range 3000 {
		in.WriteString(strings.Replace(lines[7], `"offset":0,`, fmt.Sprintf(`"offset":%d,`, i), 1) + "\n")
	}

	ios, stdin, _, _ := iostreams.Test()
	stdin.WriteString(in.String())
	f := cmdutiltest.Factory(ios, "")
	sigs, grace := make(chan os.Signal, 2), make(chan time.Time, 1)
	out := testutil.NewProcessStdout()
	out.OnChunk = func() {
		sigs <- syscall.SIGINT
		grace <- time.Time{}
		select {
		case <-f.Final.Stopping():
		case <-out.Exited:
		}
	}
	ios.Out = out
	cmd := cmdutiltest.AsRoot(NewCmdCheck(f, nil))
	cmd.SetArgs([]string{"-f", "-", "--scope", "a,c", "-o", "ndjson"})
	stuck := make(chan struct{}) // the command never returns by itself
	defer close(stuck)
	var errOut bytes.Buffer
	code := cmdutil.Interruptible(sigs, func(time.Duration) <-chan time.Time { return grace }, f.Final, &errOut, func(ctx context.Context) int {
		cmd.ExecuteContext(ctx)
		<-stuck
		return cmdutil.ExitOK
	})
	close(out.Exited)
	if code != cmdutil.ExitInterrupted {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitInterrupted)
	}
	got := string(out.Written())
	if !strings.HasSuffix(got, "\n") {
		t.Fatalf("stdout (%d bytes) does not end with a newline", len(got))
	}
	findings := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	for i, line := range findings {
		var v struct{ Kind string }
		if err := json.Unmarshal([]byte(line), &v); err != nil || v.Kind != "hole" {
			t.Fatalf("line %d is not a finding (%v): %.80q", i+1, err, line)
		}
	}
	if len(findings) >= 3000 {
		t.Errorf("the exit waited for all %d findings, not only the batch being written", len(findings))
	}
}

// TestRedeliveredRecord: a record repeated at the offset just read, which
// the capture format allows (docs/capture-format.md §4) and replay drops
// as a duplicate, is no error for check: audited once, no finding.
func TestRedeliveredRecord(t *testing.T) {
	f := filepath.Join(t.TempDir(), "again.ndjson")
	line := `{"topic":"a","partition":0,"offset":0,"topic_id":"a0000000-0000-0000-0000-000000000001","value":"aA=="}` + "\n"
	pos := `{"topic":"a","partition":0,"position":1,"topic_id":"a0000000-0000-0000-0000-000000000001"}` + "\n"
	if err := os.WriteFile(f, []byte(line+line+pos), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := exec(t, false, "", "-f", f); code != 0 || !strings.Contains(out, "No findings") {
		t.Errorf("a redelivered record: exit %d\n%s%s", code, out, errOut)
	}
}
