package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
)

const basicCapture = "replay/testdata/basic.ndjson"

// runCtx runs causalctl in-process under ctx, with stdout a buffer, and
// fails the test when it does not return within limit: a hang is a bug.
func runCtx(t *testing.T, ctx context.Context, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	out := &testutil.SyncBuffer{}
	ios.Out = out
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, f, args) }()
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

// TestFullDevice: every command writing to a full device (/dev/full)
// exits 1 naming the cause, including output that only the last flush
// writes.
func TestFullDevice(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"decode", "-f", basicCapture},
		{"decode", "-f", basicCapture, "-o", "json"},
		{"decode", "--hex", "0100"},
		{"encode", "{}"},
		{"replay", "-f", basicCapture},
		{"replay", "-f", basicCapture, "-o", "json"},
		{"replay", "-f", basicCapture, "-o", "text"},
		{"help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			ios.Out = full
			f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
			code := Run(context.Background(), f, args)
			if code != cmdutil.ExitFailure || !strings.Contains(errOut.String(), "no space left on device") {
				t.Errorf("exit %d, stderr %q; want 1 and the cause", code, errOut.String())
			}
		})
	}
}

// silentBroker listens on a random port, accepts every connection and
// never answers: a port that is not a Kafka listener, or a hung broker.
func silentBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
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
	addr := silentBroker(t)
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

// TestInterruptAgainstSilentBroker: Ctrl-C while a broker command waits on
// a broker that never answers exits 130 at once, saying interrupted, not
// "context canceled".
func TestInterruptAgainstSilentBroker(t *testing.T) {
	addr := silentBroker(t)
	for _, args := range brokerCommands {
		t.Run(args[0], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			code, _, stderr := runCtx(t, ctx, 5*time.Second, append(args, "--brokers", addr)...)
			if code != cmdutil.ExitInterrupted || !strings.Contains(stderr, "interrupted") || strings.Contains(stderr, "context canceled") {
				t.Errorf("exit %d, stderr %q; want 130, interrupted", code, stderr)
			}
		})
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
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), f, []string{"watch", "--brokers", p.addr, "-t", "orders,payments",
			"--offsets", "start", "--interval", "200ms", "--request-timeout", "3s", "--dial-timeout", "500ms"})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "received=6") {
		if time.Now().After(deadline) {
			t.Fatalf("watch never caught up:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
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
