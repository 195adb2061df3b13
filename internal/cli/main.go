// Package cli runs causalctl: it builds the command tree over the process's
// streams, executes it, reports the error and returns the exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// Main runs causalctl with args and returns the process exit code.
func Main(args []string, getenv func(string) string) int {
	f := &cmdutil.Factory{
		IOStreams: iostreams.System(getenv),
		Getenv:    getenv,
		Version:   version(),
	}
	// Ctrl-C cancels the context; commands stop reading, report what
	// they did and return cmdutil.ExitInterrupted.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return Run(ctx, f, args)
}

// Run executes the command tree for args over f's streams and returns the
// exit code, printing any error as one line on stderr.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	executed, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitCode(err)
	if errors.Is(err, cmdutil.ErrSilent) {
		return code
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return code
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "causalctl: %s\n", oneLine(err.Error()))
	if code == cmdutil.ExitUsage || isCobraUsage(err) {
		if executed == nil {
			executed = cmd
		}
		fmt.Fprintf(f.IOStreams.ErrOut, "Run '%s --help' for usage.\n", executed.CommandPath())
		return cmdutil.ExitUsage
	}
	return code
}

// isCobraUsage recognises the argument errors cobra returns unwrapped.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "accepts ") ||
		strings.HasPrefix(msg, "requires ") ||
		strings.HasPrefix(msg, "unknown flag") ||
		strings.Contains(msg, "flag needs an argument") ||
		strings.HasPrefix(msg, "if any flags in the group")
}

// oneLine keeps an error on one line so that logs stay greppable.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
