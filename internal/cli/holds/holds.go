// Package holds implements `causalctl holds`: replay a capture or a broker
// range to its end, then diagnose every held head — why it is held (its
// cause, followed to the root of its wait chain), since when, how long
// until retention deletes it, and what to do.
package holds

import (
	"context"
	"fmt"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of holds.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string               // text or json

	// InputFlags name the input: --input, the broker range, --app,
	// --scope, --start, the sizes, --topic-id, --tasks.
	cmdutil.InputFlags
	Undecodable gate.UndecodableMode
	// ReceiptOnly settles channels only on receipt
	// (--position-advance=false).
	ReceiptOnly   bool
	OlderThan     time.Duration
	RetentionWarn time.Duration

	// Now reads the clock hold ages and headroom are measured to.
	Now func() time.Time
	// OpenInput opens the input (Factory.OpenInput).
	OpenInput func(context.Context, *cmdutil.InputFlags, input.Read) (*input.Source, error)
	// Dial connects to the cluster (Factory.Dial): --app reads the
	// process through it.
	Dial func(context.Context) (*kafka.Client, error)
	// Fleet is --fleet's writers, for --app's upstream root; nil: none.
	Fleet upstream.Writers
}

// NewCmdHolds returns the holds command. runF replaces the work in tests of
// flag parsing; nil runs Run.
func NewCmdHolds(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Now: time.Now, OpenInput: f.OpenInput, Dial: f.Dial}
	if f.Now != nil {
		opts.Now = f.Now
	}
	var undecodable cmdutil.UndecodableFlag
	var positionAdvance bool
	cmd := &cobra.Command{
		Use:   "holds (--input FILE | --topic NAME[/P]… [--offsets …|--from-group G] | --app APP) [flags]",
		Short: "Diagnose every held head: why, since when, how long until loss, what to do",
		Long: `Replay a capture (--input) or a broker range (--topic …, read read_committed,
nothing joined or committed) to its end through the delivery gate, then
report every head still held: its hold age, the cause of every blocker, the
root its wait chain ends at, its retention headroom, and the next step.

Causes: held (behind another held head: see its root), lagging (in the log,
not read yet), open-transaction (inside a transaction still open; the
producer is named when the brokers tell), beyond-log-end (never written),
not-a-record (a transaction marker or aborted offset; only with
--position-advance=false), truncated (deleted before it was read),
out-of-scope (a channel in the scope that nothing reads), cycle (forged
stamps), undecodable (--undecodable=hold), and offline without log facts
not-received or beyond-input. A capture written by causalctl capture keeps
the log facts, so holds --input classifies as it would have live.

A broker range starts at the group's committed offsets with --from-group,
else at the log start (--offsets start), and ends at the current end.

--tasks runs one gate per Parsley task, as the process does: task p
receives partition p of every topic in scope, and a claim on another
partition is outside its scope. --app APP shadows Parsley process APP:
its topics and tasks from the process, each task's gate seeded from its
ordering changelog (hold queues and fed-up-to), then read on from the
group's committed offsets to the log end: what the process delivers next
and what it still holds. A committed offset that does not match the
state is a warning on stderr (docs/tasks.md).

Read from the cluster, the process's upstream root is named too: the
stuck process (stopped, failing closed, refusing its start, or holding
because of its own upstream) that writes a topic its held heads wait on,
or the cycle of processes waiting on each other — the processes on the
way upstream are read to know it (the writers of what it waits on,
theirs, and so on); --fleet FILE names writers the cluster cannot
tell (docs/fleet.md). With --app only.

Output (--output): text (heads grouped by root, chains drawn as trees, the
next step under each root) or json (see docs/holds.md for the schema).

Exit codes: 0 nothing held; 4 holds reported; 1 bad input or a broker error;
2 usage; 130 interrupted.`,
		Example: `  causalctl holds --brokers localhost:9092 --app notifier   # a Parsley process: what it holds, why, what next
  causalctl holds --brokers localhost:9092 -t orders,payments,shipments --from-group notifier   # the same: notifier is a Parsley process
  causalctl holds -t orders -t payments --older-than 10m -o json   # for cron and alerting
  causalctl holds -f capture.ndjson --position-advance=false`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			if err := opts.InputFlags.Check(c.Flags()); err != nil {
				return err
			}
			if opts.OlderThan < 0 || opts.RetentionWarn < 0 {
				return cmdutil.Usagef("--older-than and --retention-warn must not be negative")
			}
			if c.Flags().Changed("fleet") && opts.Tasks.App == "" {
				return cmdutil.Usagef("--fleet names the writers of --app's upstream: give --app")
			}
			opts.Undecodable = undecodable.Mode
			opts.ReceiptOnly = !positionAdvance
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	cmdutil.AddInputFlags(cmd, f, &opts.InputFlags, cmdutil.InputSpec{
		InputUsage: "capture file to diagnose (- for stdin)",
		ScopeUsage: "channels the node consumes, `CH[,CH...]` (default: every channel read)",
		StartUsage: "start positions, `CH=OFFSET[,...]`",
		Tasks:      true, App: true,
	})
	cmdutil.AddUndecodableFlag(cmd, &undecodable)
	cmdutil.AddPositionAdvanceFlag(fs, &positionAdvance)
	fs.DurationVar(&opts.OlderThan, "older-than", 0, "report only holds at least `D` old (for cron and alerting)")
	fs.DurationVar(&opts.RetentionWarn, "retention-warn", inspect.DefaultRetentionWarn, "flag a held record that retention deletes within `D` (0: flag none)")
	cmdutil.AddFleetFlag(cmd, &opts.Fleet)
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run replays the input to its end and reports what is held.
func Run(ctx context.Context, opts *Options) error {
	if err := opts.InputFlags.AttachGroup(ctx, opts.Dial, opts.IO.ErrOut); err != nil {
		return cmdutil.WhenInterrupted(err, noReport)
	}
	if opts.Tasks.App != "" {
		return runProcess(ctx, opts)
	}
	if opts.Tasks.On() {
		return runTasks(ctx, opts)
	}
	src, scope, err := openScoped(ctx, opts, input.Read{LogFacts: true})
	if err != nil {
		return err
	}
	defer src.Close()
	r, err := engine.New(engine.Config{
		Scope:         scope.Channels,
		Starts:        scope.Starts,
		Undecodable:   opts.Undecodable,
		ReceiptOnly:   opts.ReceiptOnly,
		MaxHeaderSize: opts.MaxHeaderSize,
		Names:         opts.Names,
	})
	if err != nil {
		return err
	}
	// Hold ages run from each record's timestamp: the node has held it
	// (or not yet read it) since it was written.
	tr := view.NewEvents(0)
	observe := func(ev *engine.Event) error {
		var at time.Time
		if t, ok := record.TimeOf(ev.Timestamp); ev.HasTimestamp && ok { // none past 2262: no age from it
			at = t
		}
		tr.Observe(ev, at)
		return nil
	}
	if err := engine.Run(ctx, src, r, observe, nil, opts.Now); err != nil {
		return cmdutil.WhenInterrupted(fmt.Errorf("%s: %w", src.Name, err), noReport)
	}
	rep := inspect.Diagnose(inspect.Input{
		Gate:          r.Gate(),
		Names:         opts.Names,
		Facts:         inspect.InputFacts(r, src.Channels, true),
		Timestamp:     tr.Timestamp,
		Now:           opts.Now(),
		RetentionWarn: opts.RetentionWarn,
	}).OlderThan(opts.OlderThan)
	if err := opts.Final.Do(func() error { return write(opts.IO.Out, opts.Output, rep, opts) }); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if len(rep.Heads) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// openScoped opens the input (with each broker channel's log facts, as
// read asks) and resolves the scope over it; a process (--app) takes its
// scope from its tasks.
func openScoped(ctx context.Context, opts *Options, read input.Read) (*input.Source, input.Scope, error) {
	src, err := opts.OpenInput(ctx, &opts.InputFlags, read)
	if err != nil {
		return nil, input.Scope{}, cmdutil.WhenInterrupted(err, noReport)
	}
	if src.Attached != nil {
		return src, input.Scope{}, nil
	}
	scope, err := opts.InputFlags.ResolveScope(src)
	if err != nil {
		src.Close()
		return nil, input.Scope{}, err
	}
	return src, scope, nil
}

// noReport is the account of an interruption: no report is written.
const noReport = "interrupted before the replay ended: no report"
