// Package holds implements `causalctl holds`: replay a capture or a broker
// range to its end, then diagnose every held head — why it is held (its
// cause, followed to the root of its wait chain), since when, how long
// until retention deletes it, and what to do.
package holds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of holds.
type Options struct {
	IO     *iostreams.IOStreams
	Output string // text or json

	Input       string
	Range       cmdutil.RangeFlags
	Scope       []string
	Start       []string
	Undecodable gate.UndecodableMode
	// ReceiptOnly settles channels only on receipt
	// (--position-advance=false).
	ReceiptOnly   bool
	OlderThan     time.Duration
	RetentionWarn time.Duration
	MaxHeaderSize int
	MaxLineSize   int
	Names         *clock.Names
	// Tasks are --tasks and --app: one gate per Parsley task.
	Tasks cmdutil.TaskFlags

	// Now reads the clock hold ages and headroom are measured to.
	Now func() time.Time
	// OpenRange opens a broker range (Factory.OpenRange).
	OpenRange func(context.Context, cmdutil.BrokerRead) (*cmdutil.Range, error)
	// Dial connects to the cluster (Factory.Dial), for --app.
	Dial func(context.Context) (*kafka.Client, error)
}

// NewCmdHolds returns the holds command. runF replaces the work in tests of
// flag parsing; nil runs Run.
func NewCmdHolds(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Now: time.Now, OpenRange: f.OpenRange, Dial: f.Dial}
	if f.Now != nil {
		opts.Now = f.Now
	}
	names := &cmdutil.NamesFlag{}
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

Output (--output): text (heads grouped by root, chains drawn as trees, the
next step under each root) or json (see docs/holds.md for the schema).

Exit codes: 0 nothing held; 4 holds reported; 1 bad input or a broker error;
2 usage; 130 interrupted.`,
		Example: `  causalctl holds --brokers localhost:9092 -t orders,payments,shipments --from-group notifier
  causalctl holds --brokers localhost:9092 --app notifier   # per task, from its ordering state on
  causalctl holds -t orders -t payments --older-than 10m -o json   # for cron and alerting
  causalctl holds -f capture.ndjson --position-advance=false`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			if err := opts.Tasks.Check(c.Flags()); err != nil {
				return err
			}
			if opts.Tasks.App == "" {
				if err := opts.Range.CheckSource(c.Flags(), opts.Input); err != nil {
					return err
				}
			}
			if opts.OlderThan < 0 || opts.RetentionWarn < 0 {
				return cmdutil.Usagef("--older-than and --retention-warn must not be negative")
			}
			opts.Undecodable = undecodable.Mode
			opts.ReceiptOnly = !positionAdvance
			opts.Names = names.Names
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.Input, "input", "f", "", "capture file to diagnose (- for stdin)")
	cmdutil.AddRangeFlags(cmd, f, &opts.Range)
	cmdutil.AddScopeFlag(cmd, f, &opts.Scope, "channels the node consumes, `CH[,CH...]` (default: every channel read)")
	cmdutil.AddStartFlag(cmd, f, &opts.Start, "start positions, `CH=OFFSET[,...]`")
	cmdutil.AddUndecodableFlag(cmd, &undecodable)
	cmdutil.AddPositionAdvanceFlag(fs, &positionAdvance)
	fs.DurationVar(&opts.OlderThan, "older-than", 0, "report only holds at least `D` old (for cron and alerting)")
	fs.DurationVar(&opts.RetentionWarn, "retention-warn", inspect.DefaultRetentionWarn, "flag a held record that retention deletes within `D` (0: flag none)")
	cmdutil.AddSizeFlags(fs, &opts.MaxHeaderSize, &opts.MaxLineSize)
	cmdutil.AddTopicIDFlag(fs, names)
	cmdutil.AddTaskFlags(fs, &opts.Tasks, true)
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run replays the input to its end and reports what is held.
func Run(ctx context.Context, opts *Options) error {
	if opts.Tasks.On() {
		return runTasks(ctx, opts)
	}
	src, name, channels, scope, closeSrc, err := openScoped(ctx, opts)
	if err != nil {
		return err
	}
	defer closeSrc()
	r, err := replay.New(replay.Config{
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
	tr := inspect.NewTracker(0)
	observe := func(ev *replay.Event) error {
		var at time.Time
		if ev.HasTimestamp {
			at = time.UnixMilli(ev.Timestamp)
		}
		tr.Observe(ev, at)
		return nil
	}
	if err := replay.Run(ctx, src, r, observe, nil, opts.Now); err != nil {
		return interrupted(fmt.Errorf("%s: %w", name, err))
	}
	rep := inspect.Diagnose(inspect.Input{
		Gate:          r.Gate(),
		Names:         opts.Names,
		Facts:         inspect.InputFacts(r, channels, true),
		Timestamp:     tr.Timestamp,
		Now:           opts.Now(),
		RetentionWarn: opts.RetentionWarn,
	}).OlderThan(opts.OlderThan)
	if err := write(opts.IO.Out, opts.Output, rep, opts); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if len(rep.Heads) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// openScoped opens the source and resolves the scope over it.
func openScoped(ctx context.Context, opts *Options) (replay.Source, string, []clock.Channel, cmdutil.Scope, func(), error) {
	src, name, channels, closeSrc, err := openSource(ctx, opts)
	if err != nil {
		return nil, "", nil, cmdutil.Scope{}, nil, interrupted(err)
	}
	scope, err := cmdutil.ResolveScope(opts.Scope, opts.Start, channels, opts.Names)
	if err == nil && len(scope.Channels) == 0 {
		err = fmt.Errorf("%s holds no records or positions: nothing to replay", name)
	}
	if err != nil {
		closeSrc()
		return nil, "", nil, cmdutil.Scope{}, nil, err
	}
	return src, name, channels, scope, closeSrc, nil
}

// openSource opens the capture or the broker range (with each channel's
// log facts) and returns it with its name and the channels it reads.
func openSource(ctx context.Context, opts *Options) (replay.Source, string, []clock.Channel, func(), error) {
	if opts.Range.Given() {
		br, err := opts.OpenRange(ctx, cmdutil.BrokerRead{Flags: opts.Range, Start: opts.Start, Names: opts.Names,
			Options: []kafka.ReadOption{kafka.WithLogFacts()}})
		if err != nil {
			return nil, "", nil, nil, err
		}
		return replay.WithContext(ctx, br), "broker range", br.Channels, br.Close, nil
	}
	in, err := cmdutil.OpenCapture(ctx, opts.IO, opts.Input, opts.MaxLineSize, opts.Names)
	if err != nil {
		return nil, "", nil, nil, err
	}
	rd, err := in.Open(capture.SkipPayloads())
	if err != nil {
		in.Close()
		return nil, "", nil, nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	return replay.WithContext(ctx, rd), in.Name, in.Channels, func() { in.Close() }, nil
}

// interrupted turns an interruption into exit 130: no report is written.
func interrupted(err error) error {
	if errors.Is(err, replay.ErrInterrupted) || errors.Is(err, context.Canceled) {
		return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: errors.New("interrupted before the replay ended: no report")}
	}
	return err
}
