// Package state implements `causalctl state`: read what a Parsley process
// really holds from its ordering changelog (SPEC §6), running or stopped —
// per task its channels' positions, its held heads, and why each is held,
// diagnosed by the one classifier over a gate seeded from the store.
package state

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of state.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string               // text or json

	App       string
	Changelog string
	Input     string
	Task      int32 // −1: every task
	// Receives is a declaration about to be deployed, checked instead of
	// today's; nil checks today's.
	Receives []string
	TxnWait  time.Duration
	// StoreOnly reports the store alone, not read on (--store-only).
	StoreOnly bool

	MaxHeaderSize int
	MaxLineSize   int
	Names         *clock.Names

	// Now reads the clock ages are measured to.
	Now func() time.Time
	// ReadProcess reads the process (Factory.ReadProcessInput).
	ReadProcess func(context.Context, input.ProcessInput) (*inspect.Process, error)
	// Fleet is --fleet's writers (nil: none); Dial connects to read the
	// other processes for the upstream root (nil: not resolved).
	Fleet upstream.Writers
	Dial  func(context.Context) (*kafka.Client, error)
}

// NewCmdState returns the state command. runF replaces the work in tests
// of flag parsing; nil runs Run.
func NewCmdState(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Now: time.Now, ReadProcess: f.ReadProcessInput, Dial: f.Dial}
	if f.Now != nil {
		opts.Now = f.Now
	}
	names := &cmdutil.NamesFlag{}
	task := -1
	cmd := &cobra.Command{
		Use:   "state (--app APP | --changelog TOPIC | --input FILE) [--task N] [flags]",
		Short: "Read what a Parsley process holds, from its ordering changelog, running or stopped",
		Long: `Read a Parsley process's ordering state — the changelog topic
APP-__parsley.ordering-changelog, one partition per task — and report, per
task, every channel's fed-up-to, settled, frontier and delivered-past
positions, what it holds, and for each held head its record's time and
sizes, its causes, every blocker and its cause, the root its wait chain
ends at and the next step. Causes are those of holds (lagging,
open-transaction, beyond-log-end, not-a-record, truncated, out-of-scope,
held, cycle), classified against the business topics' log facts, plus
ready: a head nothing blocks any more, which the process has not run since
(stopped, or its task unassigned).

Each task is then read on from the group's committed offsets to the log
end through its gate seeded from the store, as the process will read it
(read_committed; nothing joined): its held heads are those that stay held
however far it reads now, each with its true root; a store head the read
delivers is catching up, no held head (it delivers once the process reads
what is already in the log); and a task whose next record's
parsley.causes header is undecodable is failed closed there (the record
by topic, partition and offset, its reason code, and the next start's
UNDECODABLE_METADATA). holds --app, processes and the exporter read a
process the same way.

The changelog is read read_committed from its log start to the high
watermark taken when the read begins; an open transaction below that end
is waited for --txn-wait, then the task is reported as read so far and said
to be behind it. Nothing is joined, committed or written.

A task's scope is partition N of every topic the process receives: from the
group's member subscriptions while it runs (scope_source subscription),
else from the topic bindings in its state (scope_source state, an upper
bound). The group's state, members, assignments and committed offsets are
shown beside the tasks. --input reads a capture of the changelog topic
(causalctl capture -t APP-__parsley.ordering-changelog, with the business
topics for their log facts) instead of the cluster.

The report begins with the next start's prediction: whether Parsley would
refuse to start the process now, and why (ORDERING_STATE_LOST,
UNKNOWN_ORDERING_STATE_FORMAT, TASK_WIDTH_CHANGED, CHANNEL_IDENTITY_CHANGED,
CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES, CHANNEL_REMOVED_WITH_HELD_MESSAGES,
POSITIONS_DISCARDED_UNREAD, UNDECODABLE_METADATA), from the store, the group's committed offsets
and the cluster's topics, each refusal with its next step
(docs/refusals.md). It checks today's declaration (the members'
subscriptions, else the store's bindings); --receives checks one about to be
deployed instead: may this process stop receiving a topic now? With
--receives each task also answers the deploy question by the history rules
(docs/histories.md): the held records a dropped channel would strand, the
channels that join and the offset each is read from, the held records that
deliver at once and those that stay held. A changelog
that no longer exists while the group keeps its offsets is reported as
ORDERING_STATE_LOST, not as an unknown topic. From a capture the group is
unknown and a topic without log facts in it is not known to be deleted.

Read from the cluster, the process's upstream root is named too: the
stuck process (stopped, failing closed, refusing its start, or holding
because of its own upstream) that writes a topic its held heads wait on,
or the cycle of processes waiting on each other — the processes on the
way upstream are read to know it (the writers of what it waits on,
theirs, and so on); --fleet FILE names writers the cluster cannot
tell (docs/fleet.md).

Output (--output): text (the next start, then one block per task, held heads
grouped by root) or json (see docs/state.md for the schema).

Exit codes: 0 no held head and the next start not refused (records held
only until the process reads what is already in the log do not count); 4 a
held head, a ready head (waiting for its task to run) or a refusal predicted; 1 corrupt state (after
printing what could be read, the corrupt entries named by partition, offset
and key) or a broker or input error; 2 usage; 130 interrupted.`,
		Example: `  causalctl state --brokers localhost:9092 --app notifier
  causalctl state --app notifier --receives orders,payments
  causalctl state --app notifier --task 1 -o json
  causalctl state -f changelog.ndjson --changelog notifier-__parsley.ordering-changelog`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			given := 0
			for _, s := range []string{opts.App, opts.Changelog, opts.Input} {
				if s != "" {
					given++
				}
			}
			switch {
			case given == 0:
				return cmdutil.Usagef("give --app, --changelog or --input")
			case opts.Input == "" && given > 1:
				return cmdutil.Usagef("give --app or --changelog, not both")
			case task < -1 || task > math.MaxInt32: // a partition is an int32: 2^32 would be task 0
				return cmdutil.Usagef("--task %d: a task is a changelog partition, 0 to %d", task, math.MaxInt32)
			case opts.TxnWait < 0:
				return cmdutil.Usagef("--txn-wait must not be negative")
			}
			if opts.Changelog != "" {
				if _, ok := parsley.AppOf(opts.Changelog); !ok {
					return cmdutil.Usagef("--changelog %s: not an ordering changelog (its name ends in %s)", opts.Changelog, parsley.ChangelogSuffix)
				}
			}
			if c.Flags().Changed("receives") {
				if len(opts.Receives) == 0 {
					return cmdutil.Usagef("--receives: name at least one topic")
				}
				for _, name := range opts.Receives {
					if err := clock.CheckTopicName(name); err != nil {
						return cmdutil.Usagef("--receives %q: %v", name, err)
					}
				}
			}
			opts.Task = int32(task)
			opts.Names = names.Names
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.App, "app", "", "the process's application id `APP`: its changelog APP-__parsley.ordering-changelog and its group APP")
	fs.StringVar(&opts.Changelog, "changelog", "", "the ordering changelog `TOPIC` (its group is the name before -__parsley.ordering-changelog)")
	fs.StringVarP(&opts.Input, "input", "f", "", "capture file holding the changelog topic (- for stdin) instead of the cluster")
	fs.IntVar(&task, "task", -1, "report only task `N` (changelog partition N)")
	fs.StringSliceVar(&opts.Receives, "receives", nil, "check the next start against the declaration about to be deployed, the `TOPICS` it receives (comma-separated), instead of today's: may I drop a topic now?")
	fs.BoolVar(&opts.StoreOnly, "store-only", false, "report the store alone, as from a capture: no task read on from the committed offsets (no catching up, no failed closed task; lagging heads stay heads)")
	fs.DurationVar(&opts.TxnWait, "txn-wait", kafka.DefaultTxnWait, "how long to wait for an open transaction in the changelog before reporting what was read below it")
	cmdutil.AddSizeFlags(fs, &opts.MaxHeaderSize, &opts.MaxLineSize)
	cmdutil.AddTopicIDFlag(fs, names)
	cmdutil.AddFleetFlag(cmd, &opts.Fleet)
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run reads the state and reports it.
func Run(ctx context.Context, opts *Options) error {
	if opts.Names == nil {
		opts.Names = &clock.Names{}
	}
	w, err := opts.ReadProcess(ctx, input.ProcessInput{App: opts.App, Changelog: opts.Changelog, Input: opts.Input,
		MaxLineSize: opts.MaxLineSize, TxnWait: opts.TxnWait, Names: opts.Names, Receives: opts.Receives, StoreOnly: opts.StoreOnly})
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Interrupted("interrupted before the state was read: no report")
		}
		return err
	}
	now := opts.Now()
	parts := w.Changelog.Partitions()
	if opts.Task >= 0 {
		if !w.Changelog.Has(opts.Task) {
			return fmt.Errorf("--task %d: the changelog %s has no partition %d (it has %d)", opts.Task, w.Changelog.Topic, opts.Task, len(parts))
		}
		parts = []int32{opts.Task}
	}
	var tasks []*inspect.Task
	var corrupt []*parsley.CorruptError
	ready := 0 // heads nothing blocks, waiting for their task to run: found
	for _, p := range parts {
		t, err := inspect.DiagnoseTask(w, p, now)
		if err != nil {
			return err
		}
		tasks = append(tasks, t)
		corrupt = append(corrupt, t.State.Corrupt...)
		ready += len(t.Ready)
	}
	if warn := w.ReadOnPartialWarning(); warn != "" {
		fmt.Fprintln(opts.IO.ErrOut, "warning: "+warn)
	}
	refusals := w.NextStart(opts.Receives)
	rep := build(w, tasks, corrupt, now)
	rep.NextStart = render.NextStartOf(w, refusals)
	rep.RetentionClock = render.RetentionClocks(w.RetentionClocks(now), w.Names.Channel)
	if opts.Receives != nil {
		if rep.Deploy, err = deployPlans(w, parts, opts.Receives); err != nil {
			return err
		}
	}
	if opts.Input == "" && opts.Dial != nil && w.App != "" {
		var self *inspect.ProcessSummary
		if opts.Receives == nil && !opts.StoreOnly { // read as the others are
			s := summaryOf(w, tasks, now)
			self = &s
		}
		root, err := rootOf(ctx, opts, w.App, self, now)
		switch {
		case ctx.Err() != nil:
			return cmdutil.Interrupted("interrupted before the other processes were read: no report")
		case err != nil:
			// The state stands without it: said, not fatal.
			fmt.Fprintf(opts.IO.ErrOut, "warning: no upstream root: %v\n", err)
		}
		rep.Upstream = render.UpstreamOf(root)
	}
	if err := opts.Final.Do(func() error { return write(opts.IO.Out, render.Width(opts.IO), opts.Output, rep) }); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	switch {
	case len(corrupt) > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%v (and %d more corrupt entries)", corrupt[0], len(corrupt)-1)}
	case rep.HeldHeads > 0 || ready > 0 || len(refusals) > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// summaryOf is w's summary (inspect.SummarizeDiagnosed) from the tasks
// diagnosed, when they are every task of w (no --task).
func summaryOf(w *inspect.Process, tasks []*inspect.Task, now time.Time) inspect.ProcessSummary {
	parts := w.Changelog.Partitions()
	if len(tasks) != len(parts) {
		return inspect.SummarizeProcess(w.Changelog.Topic, int32(len(parts)), w, nil, now)
	}
	return inspect.SummarizeDiagnosed(w.Changelog.Topic, int32(len(parts)), w, tasks, now)
}

// rootOf is app's upstream root: the processes on the way upstream are
// read to know who waits on whom (process.RootOf).
func rootOf(ctx context.Context, opts *Options, app string, self *inspect.ProcessSummary, now time.Time) (*upstream.Root, error) {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return process.RootOf(ctx, cl, app, self, opts.Fleet, opts.TxnWait, process.DefaultConcurrency, now)
}
