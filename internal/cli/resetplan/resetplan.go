// Package resetplan implements `causalctl reset-plan`: the runbook's reset
// of one Parsley process, checked and written out — its preconditions
// (no member, none for the session timeout, a refusal that asks for a
// reset, the rights to delete), the boundary to keep, each channel's
// choice of initial position with its cost, and the commands in their
// order with every name filled in. It runs none of them: read-only like
// every command.
package resetplan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/spf13/cobra"
)

// DefaultSessionTimeout is Kafka Streams' session.timeout.ms: how long a
// closed instance keeps its membership.
const DefaultSessionTimeout = 45 * time.Second

// DefaultStateDir is Kafka Streams' state.dir on most systems.
const DefaultStateDir = "/tmp/kafka-streams"

// Options are the parsed flags and dependencies of reset-plan.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all
	Output string               // text or json

	App            string
	StateDir       string
	SessionTimeout time.Duration
	TxnWait        time.Duration

	// Now reads the clock ages and the session timeout are measured to.
	Now func() time.Time
	// Dial connects to the cluster (Factory.Dial).
	Dial func(context.Context) (*kafka.Client, error)
}

// NewCmdResetPlan returns the reset-plan command. runF replaces the work
// in tests of flag parsing; nil runs Run.
func NewCmdResetPlan(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Now: time.Now, Dial: f.Dial}
	if f.Now != nil {
		opts.Now = f.Now
	}
	cmd := &cobra.Command{
		Use:   "reset-plan --app APP [--state-dir DIR] [flags]",
		Short: "Check that a Parsley process may be reset, and write out the reset: boundary, costs, commands",
		Long: `Check what Parsley's runbook requires before a process is reset, then
write the reset out; run nothing (read-only: the group is described,
never joined; nothing is deleted, committed or written).

The preconditions, each ok, FAIL or not checked:

  no-member                  the group APP has no member: no instance runs
  quiet-for-session-timeout  and has had none for --session-timeout (Kafka
                             Streams keeps a member 45s after its close):
                             the ordering changelog was last written at
                             least that long ago
  reset-asked                the next start's refusal on record asks for a
                             reset (docs/refusals.md)
  delete-rights              the ACLs allow Delete on the group and the
                             changelogs, where ACLs can be described

Then the boundary record, to keep (-o json): per received partition the
committed offset, the log start and end, the records the store holds and
the oldest one's age; the choice of each channel's initial position with
its cost — EARLIEST reads everything retained and delivers again, sending
their effects again, what was delivered before; LATEST skips what was not
read, never delivered —; and the runbook's commands in their order with
every name filled in: the group, the ordering changelog, each store
changelog of the process found on the cluster, and the local state under
--state-dir on every instance. Another order gives a different refusal,
not a reset (docs/reset.md).

Exit codes: 0 every precondition holds; 4 one fails (named, after the
plan); 1 the process cannot be read or the cluster reached; 2 usage; 130
interrupted.`,
		Example: `  causalctl reset-plan --app notifier --brokers localhost:9092
  causalctl reset-plan --app notifier --state-dir /var/lib/kafka-streams -o json > boundary.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			if err := clock.CheckTopicName(parsley.ChangelogTopic(opts.App)); opts.App == "" || err != nil {
				return cmdutil.Usagef("--app %q: not an application id (its changelog would be no topic name)", opts.App)
			}
			switch {
			case opts.SessionTimeout < 0:
				return cmdutil.Usagef("--session-timeout must not be negative")
			case opts.TxnWait < 0:
				return cmdutil.Usagef("--txn-wait must not be negative")
			case opts.StateDir == "":
				return cmdutil.Usagef("--state-dir: give the instances' state.dir")
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.App, "app", "", "the process to reset: its application id `APP` (required)")
	fs.StringVar(&opts.StateDir, "state-dir", DefaultStateDir, "the instances' Kafka Streams state.dir `DIR`, whose APP directory the reset removes on every instance")
	_ = cmd.MarkFlagDirname("state-dir")
	fs.DurationVar(&opts.SessionTimeout, "session-timeout", DefaultSessionTimeout, "how long a closed instance keeps its membership (session.timeout.ms): the group must have been quiet `D`")
	fs.DurationVar(&opts.TxnWait, "txn-wait", kafka.DefaultTxnWait, "how long to wait for an open transaction in the changelog before reporting what was read below it")
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run reads the process and what the checks need, and writes the plan.
func Run(ctx context.Context, opts *Options) error {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	noPlan := "interrupted before the process was read: no plan"
	p, err := process.Read(ctx, cl, opts.App, "", opts.TxnWait, &clock.Names{})
	if err != nil {
		return cmdutil.WhenInterrupted(fmt.Errorf("%s: %w", opts.App, err), noPlan)
	}
	listing, err := cl.TopicPartitions(ctx)
	if err != nil {
		return cmdutil.WhenInterrupted(err, noPlan)
	}
	in := Input{Process: p, Now: opts.Now(), SessionTimeout: opts.SessionTimeout, Brokers: cl.Config().Brokers, StateDir: opts.StateDir}
	var topics []string
	for name := range listing {
		topics = append(topics, name)
	}
	in.StoreChangelogs = StoreChangelogs(opts.App, topics)
	if !p.ChangelogMissing {
		if in.LastWritten, in.Written, err = cl.LastWritten(ctx, parsley.ChangelogTopic(opts.App)); err != nil {
			return cmdutil.WhenInterrupted(err, noPlan)
		}
	}
	deletable := in.StoreChangelogs
	if !p.ChangelogMissing {
		deletable = append([]string{parsley.ChangelogTopic(opts.App)}, deletable...)
	}
	if in.Rights, err = cl.DeleteRights(ctx, opts.App, deletable); err != nil {
		return cmdutil.WhenInterrupted(fmt.Errorf("describing the ACLs: %w", err), noPlan)
	}
	pl := Build(in)
	if err := opts.Final.Do(func() error { return write(opts.IO.Out, opts.Output, pl) }); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if failed := pl.Failed(); len(failed) > 0 {
		var names []string
		for _, c := range failed {
			names = append(names, c.Name)
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitFound, Err: fmt.Errorf("not ready to reset %s: precondition %s fails (%s): %s",
			opts.App, strings.Join(names, ", "), failed[0].Name, failed[0].Detail)}
	}
	return nil
}
