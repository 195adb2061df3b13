// Package cmdutiltest holds what the tests of command packages share: a
// Factory over test streams that dials a given broker, and a way to run a
// command with arguments. Only tests import it.
package cmdutiltest

import (
	"bytes"
	"context"

	"github.com/spf13/cobra"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// Factory returns cmdutil.NewFactory over ios, its build version "test",
// in an environment that holds only CAUSALCTL_BROKERS=brokers ("" for
// none). It is the one way tests build a Factory; a test that needs more
// sets the fields (Getenv, Now, Version) on what it returns.
func Factory(ios *iostreams.IOStreams, brokers string) *cmdutil.Factory {
	f := cmdutil.NewFactory(ios, func(k string) string {
		if k == conn.EnvBrokers {
			return brokers
		}
		return ""
	})
	f.Version = "test"
	return f
}

// AsRoot wires a command as the root command does — errors and usage left
// to the caller, flag errors as usage errors (exit 2) — and returns it, for
// tests that run one command without the whole tree.
func AsRoot(cmd *cobra.Command) *cobra.Command {
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
