package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runFor runs causalctl in-process until it returns or d passes (then its
// context is cancelled, as Ctrl-C would).
func runFor(t *testing.T, d time.Duration, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(tty)
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	code = Run(ctx, f, args)
	return code, out.String(), errOut.String()
}

// TestWatchStatusLines follows the pipeline in a pipe: plain status lines,
// the held payment counted, nothing written to the cluster, exit 130 when
// interrupted.
func TestWatchStatusLines(t *testing.T) {
	p := newPipeline(t)
	code, out, stderr := runFor(t, 3*time.Second, false,
		"watch", "--brokers", p.addr, "-t", "orders,payments", "--offsets", "start", "--interval", "200ms")
	if code != cmdutil.ExitInterrupted {
		t.Errorf("exit %d (%s), want %d", code, stderr, cmdutil.ExitInterrupted)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 {
		t.Fatalf("want a status line per interval, got %q", out)
	}
	last := lines[len(lines)-1]
	for _, want := range []string{"state=running", "scope=3", "received=6", "delivered=5", "held=1", "held_channels=1"} {
		if !strings.Contains(last, want) {
			t.Errorf("last status %q lacks %s", last, want)
		}
	}
	if strings.ContainsRune(out, '\x1b') {
		t.Errorf("escape sequence in piped output: %q", out)
	}
	p.checkReadOnly(t)
}

// TestWatchFailsClosed: an undecodable header stops the shadow node; the
// last status says so and the command exits 1 naming the record.
func TestWatchFailsClosed(t *testing.T) {
	p := newPipeline(t)
	w, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableClientMetrics(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bad := &kgo.Record{Topic: "payments", Partition: 0, Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: []byte{1}}}}
	if err := w.ProduceSync(context.Background(), bad).FirstErr(); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runFor(t, 10*time.Second, false,
		"watch", "--brokers", p.addr, "-t", "payments", "--offsets", "start", "--interval", "100ms")
	if code != 1 || !strings.Contains(stderr, "payments/0 offset 6: failed closed: truncated") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "state=failed-closed code=truncated at=payments/0@6") {
		t.Errorf("status lines:\n%s", out)
	}
}

func TestWatchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"watch"}, "--topic"},
		{[]string{"watch", "-t", "orders", "--offsets", "1:5"}, "without end"},
		{[]string{"watch", "-t", "orders", "--undecodable", "skip"}, "--undecodable"},
		{[]string{"watch", "-t", "orders", "--interval", "0s"}, "--interval"},
	} {
		code, _, stderr := runFor(t, 5*time.Second, false, append(tc.args, "--brokers", "127.0.0.1:1")...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}
