package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/testutil"
)

// The tests of Run's own promises: a lost write is exit 1 with its cause
// (checkedWriter), and a cancelled context is exit 130 saying interrupted,
// whatever the command was waiting on. The suites that run the command
// tree end to end are in internal/acceptance.

// TestFullDevice: every command writing to a full device (/dev/full)
// exits 1 naming the cause, including output that only the last flush
// writes.
func TestFullDevice(t *testing.T) {
	capture := testutil.Testdata("captures", "basic.ndjson")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"decode", "-f", capture},
		{"decode", "-f", capture, "-o", "json"},
		{"decode", "--hex", "0100"},
		{"encode", "{}"},
		{"replay", "-f", capture},
		{"replay", "-f", capture, "-o", "json"},
		{"replay", "-f", capture, "-o", "text"},
		{"help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			ios.Out = full
			f := cmdutiltest.Factory(ios, "")
			code := Run(context.Background(), f, args)
			if code != cmdutil.ExitFailure || !strings.Contains(errOut.String(), "no space left on device") {
				t.Errorf("exit %d, stderr %q; want 1 and the cause", code, errOut.String())
			}
		})
	}
}

// TestInterruptAgainstSilentBroker: Ctrl-C while a broker command waits on
// a broker that never answers exits 130 at once, saying interrupted, not
// "context canceled".
func TestInterruptAgainstSilentBroker(t *testing.T) {
	addr := kafkatest.SilentListener(t)
	for _, args := range [][]string{
		{"topics"},
		{"capture", "-t", "orders"},
		{"decode", "-t", "orders"},
		{"replay", "-t", "orders"},
		{"watch", "-t", "orders"},
	} {
		t.Run(args[0], func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			ios.Out = &testutil.SyncBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			done := make(chan int, 1)
			go func() { done <- Run(ctx, cmdutiltest.Factory(ios, ""), append(args, "--brokers", addr)) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("causalctl %s did not return within 5s of Ctrl-C", strings.Join(args, " "))
			}
			if stderr := errOut.String(); code != cmdutil.ExitInterrupted || !strings.Contains(stderr, "interrupted") || strings.Contains(stderr, "context canceled") {
				t.Errorf("exit %d, stderr %q; want 130, interrupted", code, stderr)
			}
		})
	}
}
