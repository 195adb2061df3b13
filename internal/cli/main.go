// Package cli runs causalctl: it builds the command tree over the process's
// streams, executes it, reports the error and returns the exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// InterruptGrace is how long a command may take, after Ctrl-C or
// SIGTERM, to stop and print what it did (cmdutil.InterruptGrace).
const InterruptGrace = cmdutil.InterruptGrace

// Build describes the binary: what the release build stamps into package
// main with -ldflags (-X main.version=… -X main.commit=… -X main.date=…).
// Empty fields are filled from the module's build information.
type Build struct {
	Version string
	Commit  string
	Date    string // RFC 3339
}

// Main runs causalctl with args and returns the process exit code.
func Main(args []string, getenv func(string) string, build Build) int {
	info, _ := debug.ReadBuildInfo()
	build = build.withDefaults(info)
	f := cmdutil.NewFactory(iostreams.System(getenv), getenv)
	f.Version, f.Commit, f.BuildDate = build.Version, build.Commit, build.Date
	// The first Ctrl-C or SIGTERM cancels the context; commands stop,
	// report what they did and exit 130. A second one, or InterruptGrace
	// without the command returning, exits 130 at once — but never in the
	// middle of the final document the command is writing (f.Final),
	// unless it is the second.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return cmdutil.Interruptible(sigs, time.After, f.Final, f.IOStreams.ErrOut, func(ctx context.Context) int {
		return Run(ctx, f, args)
	})
}

// Run executes the command tree for args over f's streams and returns the
// exit code, printing any error as one line on stderr. When ctx ends
// (Ctrl-C) before the command returns, the exit code is 130 whatever the
// command was doing. A failed write to stdout that the command did not
// report (a full disk) is exit 1 with its cause.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	var out *checkedWriter
	if !f.IOStreams.OutTTY {
		// Only a pipe or file: a terminal's *os.File is what the live
		// view needs to see, and a terminal does not fill up.
		out = &checkedWriter{w: f.IOStreams.Out}
		f.IOStreams.Out = out
	}
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// The shell reads completions from stdout; cobra's trailer line
		// on stderr would only clutter a terminal when a script does not
		// discard it. A failed lookup prints nothing at all.
		cmd.SetErr(io.Discard)
	}
	executed, err := cmd.ExecuteContextC(ctx)
	if out != nil && out.err != nil && !errors.Is(err, out.err) {
		// The command's own error may be what the failed write caused;
		// the write error is the cause worth reporting.
		err = fmt.Errorf("writing output: %w", out.err)
	}
	if ctx.Err() != nil && !interruptedAlready(err) && !errors.Is(err, cmdutil.ErrStopped) && cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		// Whatever the command was waiting on when it was stopped, and
		// however it said so ("context canceled"), it was interrupted.
		err = &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: errors.New("interrupted")}
	}
	if err == nil {
		return cmdutil.ExitOK
	}
	if errors.Is(err, cmdutil.ErrStopped) {
		return cmdutil.ExitCode(err) // stopped as asked: its account is printed
	}
	code := cmdutil.ExitCode(err)
	if errors.Is(err, cmdutil.ErrSilent) {
		return code
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return code
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "causalctl: %s\n", oneLine(sanitize(err.Error())))
	if code == cmdutil.ExitUsage || isCobraUsage(err) {
		if executed == nil {
			executed = cmd
		}
		fmt.Fprintf(f.IOStreams.ErrOut, "Run '%s --help' for usage.\n", executed.CommandPath())
		return cmdutil.ExitUsage
	}
	return code
}

// interruptedAlready reports whether the command itself returned exit 130,
// with its own account of what it did.
func interruptedAlready(err error) bool {
	var ee *cmdutil.ExitError
	return errors.As(err, &ee) && ee.Code == cmdutil.ExitInterrupted
}

// checkedWriter keeps the first write error of stdout, so that a command
// whose output was lost (ENOSPC, EIO) cannot exit 0, even where its last
// flush went unchecked. A broken pipe never gets here: the runtime ends
// the process with SIGPIPE, silently, as a pipeline expects.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
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

// sanitize makes text safe for a terminal: control bytes (an escape
// sequence in a flag value, a topic name read from a file) and invalid
// UTF-8 are shown as Go escapes (escape.Text, the rule of every text
// output) instead of being sent to the terminal; a newline is a space.
func sanitize(s string) string { return escape.Text(strings.ReplaceAll(s, "\n", " ")) }

// oneLine keeps an error on one line so that logs stay greppable.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// withDefaults fills what -ldflags did not set from the module's build
// information: the module version (a tag for `go install …@vX`, a
// pseudo-version for a build in a checkout, "(devel)" without VCS
// information), and the VCS revision and commit time that `go build`
// stamps in a checkout (-buildvcs).
func (b Build) withDefaults(info *debug.BuildInfo) Build {
	if info == nil {
		if b.Version == "" {
			b.Version = "(devel)"
		}
		return b
	}
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && b.Commit == "":
			b.Commit = s.Value
		case s.Key == "vcs.time" && b.Date == "":
			b.Date = s.Value
		}
	}
	return b
}
