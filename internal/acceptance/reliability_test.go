package acceptance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/testutil"
)

// The captures several packages read (testdata/captures at the module root).
var (
	basicCapture  = testutil.Testdata("captures", "basic.ndjson")
	faultsCapture = testutil.Testdata("captures", "faults.ndjson")
)

// runCtx runs causalctl in-process under ctx, with stdout a buffer, and
// fails the test when it does not return within limit: a hang is a bug.
func runCtx(t *testing.T, ctx context.Context, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	out := &testutil.SyncBuffer{}
	ios.Out = out
	f := cmdutiltest.Factory(ios, "")
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, f, args) }()
	select {
	case code = <-done:
	case <-time.After(limit):
		t.Fatalf("causalctl %s did not return within %v", strings.Join(args, " "), limit)
	}
	return code, out.String(), errOut.String()
}

// TestCaptureReadOnce: a capture given as a path that yields its bytes
// once — process substitution's /dev/fd/N (a pipe) or a FIFO — is read
// once and spooled, so the replay, decode and the first reading that
// learns the channels all see every record.
func TestCaptureReadOnce(t *testing.T) {
	data, err := os.ReadFile(basicCapture)
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := run(t, false, "", "replay", "-f", basicCapture, "-o", "json")
	_, wantDecode, _ := run(t, false, "", "decode", "-f", basicCapture)
	if !strings.Contains(want, `"received":7`) || strings.Count(wantDecode, "\n") != 7 {
		t.Fatalf("the regular file's results are not the reference they should be:\n%s\n%s", want, wantDecode)
	}
	sources := map[string]func(t *testing.T) string{
		"process substitution": func(t *testing.T) string {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			go func() { w.Write(data); w.Close() }()
			return fmt.Sprintf("/dev/fd/%d", r.Fd())
		},
		"fifo with a writer": func(t *testing.T) string {
			path := filepath.Join(t.TempDir(), "capture.fifo")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			go func() {
				w, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				// In two parts, a pause between: the reader waits for the rest.
				w.Write(data[:len(data)/2])
				time.Sleep(50 * time.Millisecond)
				w.Write(data[len(data)/2:])
				w.Close()
			}()
			return path
		},
	}
	for name, source := range sources {
		t.Run(name+"/replay", func(t *testing.T) {
			code, out, stderr := runCtx(t, context.Background(), 10*time.Second, "replay", "-f", source(t), "-o", "json")
			if code != 0 || out != want {
				t.Errorf("exit %d (%s), output\n%s\nwant\n%s", code, stderr, out, want)
			}
		})
		t.Run(name+"/decode", func(t *testing.T) {
			code, out, stderr := runCtx(t, context.Background(), 10*time.Second, "decode", "-f", source(t))
			if code != 0 || out != wantDecode {
				t.Errorf("exit %d (%s), output\n%s\nwant\n%s", code, stderr, out, wantDecode)
			}
		})
	}
}

// TestFIFOWithoutWriterInterrupted: a FIFO nobody writes blocks open(2);
// Ctrl-C (the context) still ends the command at once, exit 130, and
// leaves no goroutine behind.
func TestFIFOWithoutWriterInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nobody.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"replay", "-f", path},
		{"decode", "-f", path},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			code, out, stderr := runCtx(t, ctx, 5*time.Second, cmd...)
			if code != cmdutil.ExitInterrupted || !strings.Contains(stderr, "interrupted") || strings.Contains(stderr, "context canceled") {
				t.Errorf("exit %d, stderr %q, stdout %q; want 130 and a word that it was interrupted", code, stderr, out)
			}
			testutil.WaitGoroutines(t, before)
		})
	}
	// With a writer that never writes nor closes, the same.
	w, err := os.OpenFile(path, os.O_RDWR, 0) // RDWR: a FIFO opened so never blocks
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if code, _, stderr := runCtx(t, ctx, 5*time.Second, "replay", "-f", path); code != cmdutil.ExitInterrupted {
		t.Errorf("a silent writer: exit %d (%s), want 130", code, stderr)
	}
}

var brokerCommands = [][]string{
	{"topics"},
	{"capture", "-t", "orders"},
	{"decode", "-t", "orders"},
	{"replay", "-t", "orders"},
	{"watch", "-t", "orders"},
}

// TestSilentBroker: a listener that accepts TCP and never answers fails
// every broker command within the dial timeout, naming the address.
func TestSilentBroker(t *testing.T) {
	addr := kafkatest.SilentListener(t)
	for _, args := range brokerCommands {
		t.Run(args[0], func(t *testing.T) {
			args := append(args, "--brokers", addr, "--dial-timeout", "1s")
			code, _, stderr := runCtx(t, context.Background(), 10*time.Second, args...)
			if code != cmdutil.ExitFailure || !strings.Contains(stderr, "no Kafka response from "+addr+" within 1s") {
				t.Errorf("exit %d, stderr %q; want 1 and no Kafka response from %s", code, stderr, addr)
			}
		})
	}
}

// TestSilentSeedBesideAGoodOne: a command given a silent seed and a good
// one reads through the good one.
func TestSilentSeedBesideAGoodOne(t *testing.T) {
	p := newPipeline(t)
	silent := kafkatest.SilentListener(t)
	code, out, stderr := runCtx(t, context.Background(), 10*time.Second, "topics", "--brokers", silent+","+p.addr, "--dial-timeout", "1s")
	if code != cmdutil.ExitOK || !strings.Contains(out, "orders") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and the topics", code, out, stderr)
	}
}

// TestWatchBrokerKilled: the broker dies under watch in a pipe. The status
// lines say disconnected and for how long it has been retrying, not
// running; after the request timeout watch exits 1 naming the channel and
// its position in words (no sentinel offsets).
func TestWatchBrokerKilled(t *testing.T) {
	p := newPipeline(t)
	ios, _, _, errOut := iostreams.Test()
	out := &testutil.SyncBuffer{}
	ios.Out = out
	f := cmdutiltest.Factory(ios, "")
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(context.Background(), f, []string{"watch", "--brokers", p.addr, "-t", "orders,payments",
			"--offsets", "start", "--interval", "200ms", "--request-timeout", "3s", "--dial-timeout", "500ms"})
	}()
	out.Wait(t, 10*time.Second, "watch to catch up", func(s string) bool { return strings.Contains(s, "received=6") })
	p.c.Close()
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("watch did not end after its broker died:\n%s", out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var disconnected, runningAfter int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, `state="disconnected (retrying, `):
			disconnected++
		case disconnected > 0 && strings.HasPrefix(l, "state=running"):
			runningAfter++
		}
	}
	if disconnected < 3 || runningAfter > 0 {
		t.Errorf("%d disconnected lines, %d running after them; want several, none:\n%s", disconnected, runningAfter, out.String())
	}
	stderr := errOut.String()
	if code != cmdutil.ExitFailure || !strings.Contains(stderr, "reading ") || !strings.Contains(stderr, " at position ") ||
		strings.Contains(stderr, "9223372036854775807") || strings.Contains(stderr, "[") {
		t.Errorf("exit %d, stderr %q; want 1 naming the channel and its position in words", code, stderr)
	}
}

// TestSmallFlagCases: the small ways a hostile or careless command line
// used to get a silent guess; each is now a usage error (exit 2), a clear
// failure (1) or documented behaviour (0).
func TestSmallFlagCases(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const id = "01020304-0506-0708-090a-0b0c0d0e0f10"
	bound := `{"topic":"orders","topic_id":"` + id + `","partition":0,"offset":1,"headers":[]}` + "\n"
	nameOnly := `{"topic":"orders","partition":0,"offset":0,"headers":[]}` + "\n"
	empty := write("empty.ndjson", "")
	bom := write("bom.ndjson", "\ufeff"+bound)
	boundLater := write("later.ndjson", nameOnly+bound)
	unbound := write("unbound.ndjson", nameOnly)
	esc := "x\x1b]0;pwned\x07\x1b[31m"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"escape bytes in a hint", []string{"encode", esc + "/0=1"}, 2, "", `not a Kafka topic name`},
		{"escape bytes in an unknown flag", []string{"replay", "--" + esc}, 2, "", `unknown flag: --x\x1b]0;pwned\a\x1b[31m`},
		{"escape bytes in a path", []string{"replay", "-f", filepath.Join(dir, esc)}, 1, "", `\x1b]0;pwned`},
		{"zero --max-header-size", []string{"decode", "--hex", "0100", "--max-header-size", "0"}, 2, "", "--max-header-size 0: must be a positive"},
		{"negative --max-header-size", []string{"replay", "-f", basicCapture, "--max-header-size", "-1"}, 2, "", "--max-header-size -1: must be a positive"},
		{"zero --max-line-size", []string{"replay", "-f", basicCapture, "--max-line-size", "0"}, 2, "", "--max-line-size 0"},
		{"negative --max-line-size", []string{"decode", "-f", basicCapture, "--max-line-size", "-5"}, 2, "", "--max-line-size -5"},
		{"zero --max-header-size in holds", []string{"holds", "-f", basicCapture, "--max-header-size", "0"}, 2, "", "--max-header-size 0: must be a positive"},
		{"negative --max-line-size in check", []string{"check", "-f", basicCapture, "--max-line-size", "-1"}, 2, "", "--max-line-size -1: must be a positive"},
		{"a channel twice in --start", []string{"replay", "-f", basicCapture, "--start", "orders/0=1,orders/0=2"}, 2, "", "channel orders/0 given twice (1 and 2)"},
		{"a channel twice across --start flags", []string{"replay", "-f", basicCapture, "--start", "orders/0=1", "--start", "orders/0=1"}, 2, "", "given twice"},
		{"--topic-id with a slash", []string{"decode", "--hex", "0100", "--topic-id", "a/b=" + id}, 2, "", `"a/b" is not a Kafka topic name`},
		{"--topic-id with a comma", []string{"decode", "--hex", "0100", "--topic-id", "a,b=" + id}, 2, "", "not a Kafka topic name"},
		{"--topic-id dot", []string{"decode", "--hex", "0100", "--topic-id", ".=" + id}, 2, "", "not a Kafka topic name"},
		{"--topic-id too long", []string{"decode", "--hex", "0100", "--topic-id", strings.Repeat("a", 250) + "=" + id}, 2, "", "not a Kafka topic name"},
		{"--topic-id legal", []string{"decode", "--hex", "0100", "--topic-id", "a.b_c-D9=" + id}, 0, "{}", ""},
		{"decode of an empty capture", []string{"decode", "-f", empty}, 1, "", "holds no records or positions: an empty capture is an error"},
		{"replay of an empty capture", []string{"replay", "-f", empty}, 1, "", "an empty capture is an error"},
		{"a BOM before the first line", []string{"decode", "-f", bom}, 0, "orders/0@1\t-\t{}", ""},
		{"a BOM, replayed", []string{"replay", "-f", bom, "-o", "json"}, 0, `"received":1`, ""},
		{"topic bound by a later line", []string{"decode", "-f", boundLater}, 0, "orders/0@0\t-\t{}\norders/0@1", ""},
		{"topic bound by a later line, replayed", []string{"replay", "-f", boundLater, "-o", "json"}, 0, `"received":2`, ""},
		{"topic bound by --topic-id", []string{"replay", "-f", unbound, "--topic-id", "orders=" + id, "-o", "json"}, 0, `"received":1`, ""},
		{"topic bound by nothing", []string{"replay", "-f", unbound}, 1, "", `line 1: orders/0: topic "orders" has no topic_id, and neither another line of the input nor --topic-id orders=UUID binds it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, false, "", tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			if strings.ContainsAny(stderr, "\x1b\a") {
				t.Errorf("control bytes reach stderr: %q", stderr)
			}
		})
	}
}

// TestHelpColumns: every command's --help lists each flag's default once
// and starts every flag's description in the same column.
func TestHelpColumns(t *testing.T) {
	cmds := []string{""}
	code, out, _ := run(t, false, "", "--help")
	if code != 0 {
		t.Fatal("--help failed")
	}
	inCommands := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Available Commands:"):
			inCommands = true
		case inCommands && strings.HasPrefix(l, "  "):
			cmds = append(cmds, strings.Fields(l)[0])
		default:
			inCommands = false
		}
	}
	if len(cmds) < 8 {
		t.Fatalf("found only commands %v", cmds)
	}
	for _, c := range cmds {
		_, out, _ := run(t, false, "", strings.Fields(c+" --help")...)
		col := -1
		for _, l := range strings.Split(out, "\n") {
			if strings.HasSuffix(l, ":") {
				col = -1 // a new block: Flags, Global Flags
				continue
			}
			if !strings.HasPrefix(strings.TrimLeft(l, " "), "-") || !strings.HasPrefix(l, "  ") {
				continue
			}
			if strings.Count(l, "(default") > 1 {
				t.Errorf("%s --help: a default said twice: %s", c, l)
			}
			// The description starts after the first run of two or more
			// spaces that follows the flag's name.
			r := []rune(l)
			start := 0
			for start < len(r) && r[start] == ' ' {
				start++
			}
			i := start
			for i+1 < len(r) && !(r[i] == ' ' && r[i+1] == ' ') {
				i++
			}
			for i < len(r) && r[i] == ' ' {
				i++
			}
			if col < 0 {
				col = i
			} else if i != col {
				t.Errorf("%s --help: description at column %d, not %d: %s", c, i, col, l)
			}
		}
	}
}

// TestMemoryBound: the interleavings that hold every record stop with a
// clear error at a small --max-memory, naming the record that would pass
// it; file streams under the same bound; a bound that is no size is usage.
func TestMemoryBound(t *testing.T) {
	for _, il := range []string{"channel", "timestamp", "round-robin", "random:3"} {
		code, stdout, stderr := run(t, false, "", "replay", "-f", basicCapture, "--interleave", il, "--max-memory", "1KiB")
		if code != 1 || stdout != "" || !strings.Contains(stderr, "would pass the limit of 1 KiB after 2 items held (--max-memory)") ||
			!strings.Contains(stderr, "line 3 (payments/0 offset 0)") || !strings.Contains(stderr, "--interleave file") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", il, code, stdout, stderr)
		}
		if code, _, stderr := run(t, false, "", "replay", "-f", basicCapture, "--interleave", il, "--max-memory", "10KB"); code != 0 {
			t.Errorf("%s within 10KB: exit %d, %s", il, code, stderr)
		}
	}
	if code, out, stderr := run(t, false, "", "replay", "-f", basicCapture, "--max-memory", "1KiB", "-o", "json"); code != 0 || !strings.Contains(out, `"received":7`) {
		t.Errorf("file under 1KiB: exit %d, %q, %q", code, out, stderr)
	}
	for _, bad := range []string{"0", "-1", "1XB", "lots", ""} {
		if code, _, stderr := run(t, false, "", "replay", "-f", basicCapture, "--interleave", "channel", "--max-memory", bad); code != 2 || !strings.Contains(stderr, "--max-memory") {
			t.Errorf("--max-memory %q: exit %d, %q", bad, code, stderr)
		}
	}
}
