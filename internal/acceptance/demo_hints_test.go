package acceptance

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// TestDemoHintsRunAsPrinted runs every causalctl command line the demo
// suggests — the "Try" lines and each fault's hint — exactly as printed,
// against the running demo, with no connection setting in the
// environment: each must resolve its brokers and run (exit 0, or 4 for
// the holds and findings it is there to show), never a usage error.
func TestDemoHintsRunAsPrinted(t *testing.T) {
	// The hints name causalctl as it runs: under go test, as go run
	// builds it (demo's invocation).
	hintRE := regexp.MustCompile(`(?m)^  (?:go run \./cmd/)?(causalctl .*)$`)
	for _, fault := range []string{"dangling", "unfolded", "open-txn", "marker-claim"} {
		t.Run(fault, func(t *testing.T) {
			stdout, _, stop := startAsync(t, false, "demo", "--no-tui", "--listen", "127.0.0.1:0", "--fault", fault, "--tick", "20ms")
			stdout.Wait(t, 20*time.Second, "the introduction", func(s string) bool { return strings.Contains(s, "Ctrl-C stops it") })
			hints := hintRE.FindAllStringSubmatch(stdout.String(), -1)
			var faultHint bool
			for _, h := range hints {
				line := h[1]
				args := strings.Fields(line)[1:]
				if strings.ContainsAny(line, `'"\`) {
					t.Fatalf("a hint needs a shell to split it: %s", line)
				}
				faultHint = faultHint || args[0] == "holds" || args[0] == "check"
				code, stderr := runHint(t, args)
				if code != cmdutil.ExitOK && code != cmdutil.ExitFound {
					t.Errorf("%s: exit %d: %s", line, code, stderr)
				}
			}
			if !faultHint {
				t.Errorf("no holds or check hint for %s among %q", fault, hints)
			}
			stop()
		})
	}
}

// runHint runs one suggested command with an empty environment.
func runHint(t *testing.T, args []string) (int, string) {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
	// A bound that only ends a hung hint: under load, state waits out the
	// notifier's open transactions and holds reads a growing log.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return cli.Run(ctx, f, args), errOut.String()
}
