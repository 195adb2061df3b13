// Package cmdutiltest holds what the tests of command packages share: a
// Factory over test streams that dials a given broker, and a way to run a
// command with arguments. Only tests import it.
package cmdutiltest

import (
	"bytes"
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// Factory returns a Factory over ios whose connection settings name
// brokers (as CAUSALCTL_BROKERS would; "" for none) and nothing else.
func Factory(ios *iostreams.IOStreams, brokers string) *cmdutil.Factory {
	return &cmdutil.Factory{IOStreams: ios, Conn: &conn.Options{}, Now: time.Now, Getenv: func(k string) string {
		if k == conn.EnvBrokers {
			return brokers
		}
		return ""
	}}
}

// AsRoot wires a command as the root command does — errors and usage left
// to the caller, flag errors as usage errors (exit 2) — and returns it, for
// tests that run one command without the whole tree.
func AsRoot(cmd *cobra.Command, o *cmdutil.Output) *cobra.Command {
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.UsageError{Err: err} })
	return cmd
}

// Execute runs cmd with args, cobra's own output (usage, help) discarded.
func Execute(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	return cmd.ExecuteContext(context.Background())
}
