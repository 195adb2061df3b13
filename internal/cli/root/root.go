// Package root assembles the causalctl command tree.
package root

import (
	"github.com/causalctl/causalctl/internal/cli/capture"
	"github.com/causalctl/causalctl/internal/cli/check"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/completion"
	"github.com/causalctl/causalctl/internal/cli/decode"
	"github.com/causalctl/causalctl/internal/cli/demo"
	"github.com/causalctl/causalctl/internal/cli/docs"
	"github.com/causalctl/causalctl/internal/cli/encode"
	"github.com/causalctl/causalctl/internal/cli/exporter"
	"github.com/causalctl/causalctl/internal/cli/holds"
	"github.com/causalctl/causalctl/internal/cli/processes"
	"github.com/causalctl/causalctl/internal/cli/replay"
	"github.com/causalctl/causalctl/internal/cli/resetplan"
	"github.com/causalctl/causalctl/internal/cli/state"
	"github.com/causalctl/causalctl/internal/cli/topics"
	"github.com/causalctl/causalctl/internal/cli/version"
	"github.com/causalctl/causalctl/internal/cli/watch"
	"github.com/spf13/cobra"
)

// NewCmdRoot returns the causalctl root command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "causalctl <command> [flags]",
		Short: "Inspect causally ordered Kafka pipelines",
		Long: `causalctl reads the dependency clocks that causal Kafka pipelines (Parsley)
carry in the parsley.causes header, and replays records through a faithful
re-implementation of the delivery gate to show what a consuming node would
deliver, hold and drop — and why.

Every command that talks to a broker is read-only: it joins no group,
commits no offset and produces nothing.`,
		Example: `  causalctl demo
  causalctl decode --hex 0100
  causalctl replay -f capture.ndjson
  causalctl replay --brokers localhost:9092 -t orders -t payments --offsets -1000
  man causalctl-replay`,
		Version:       version.FromFactory(f).Text(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints what `causalctl version` prints.
	cmd.SetVersionTemplate("{{.Version}}")
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &cmdutil.UsageError{Err: err}
	})
	// Size limits are refused when not positive for every command that has
	// them, in one place, so that no command can forget to.
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		return cmdutil.CheckPositive(c.Flags(), "max-header-size", "max-line-size")
	}
	cmdutil.AddConnFlags(cmd, f)

	cmd.AddCommand(decode.NewCmdDecode(f, nil))
	cmd.AddCommand(encode.NewCmdEncode(f, nil))
	cmd.AddCommand(replay.NewCmdReplay(f, nil))
	cmd.AddCommand(topics.NewCmdTopics(f, nil))
	cmd.AddCommand(capture.NewCmdCapture(f, nil))
	cmd.AddCommand(check.NewCmdCheck(f, nil))
	cmd.AddCommand(holds.NewCmdHolds(f, nil))
	cmd.AddCommand(state.NewCmdState(f, nil))
	cmd.AddCommand(processes.NewCmdProcesses(f, nil))
	cmd.AddCommand(resetplan.NewCmdResetPlan(f, nil))
	cmd.AddCommand(demo.NewCmdDemo(f, nil))
	cmd.AddCommand(watch.NewCmdWatch(f, nil))
	cmd.AddCommand(exporter.NewCmdExporter(f, nil))
	cmd.AddCommand(version.NewCmdVersion(f, nil))
	cmd.AddCommand(completion.NewCmdCompletion(f, nil))
	cmd.AddCommand(docs.NewCmdGenDocs(func() *cobra.Command { return NewCmdRoot(f) }))
	// --app names a Parsley process and --task one of its tasks on every
	// command that has them: both complete from the cluster.
	cmdutil.CompleteProcessFlags(cmd, f)
	return cmd
}
