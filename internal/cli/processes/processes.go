// Package processes implements `causalctl processes` (alias ps): every
// Parsley process of the cluster at once — each ordering changelog topic
// is one (SPEC §6) — one row each: its tasks, group, received topics, what
// it holds and why, how far its committed offsets lag, and whether its
// next start would be refused.
package processes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/spf13/cobra"
)

// DefaultConcurrency is how many processes are read at once by default.
const DefaultConcurrency = process.DefaultConcurrency

// Options are the parsed flags and dependencies of processes.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string               // text or json

	AppPrefix   string
	App         string // --app: this process alone, even without a changelog
	OlderThan   time.Duration
	CheckOlder  bool // --older-than was given
	Concurrency int
	TxnWait     time.Duration
	// ReadOnMaxRecords bounds each process's read on
	// (--read-on-max-records; 0: to the log end).
	ReadOnMaxRecords int64
	// Fleet is the --fleet file's writers (upstream.ParseFleet); nil
	// when none was given.
	Fleet upstream.Writers

	// Now reads the clock ages are measured to.
	Now func() time.Time
	// Dial connects to the cluster (Factory.Dial).
	Dial func(context.Context) (*kafka.Client, error)
}

// NewCmdProcesses returns the processes command. runF replaces the work in
// tests of flag parsing; nil runs Run.
func NewCmdProcesses(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Now: time.Now, Dial: f.Dial}
	if f.Now != nil {
		opts.Now = f.Now
	}
	cmd := &cobra.Command{
		Use:     "processes [--app-prefix P | --app APP] [--older-than D] [flags]",
		Aliases: []string{"ps"},
		Short:   "List every Parsley process of the cluster: what each holds, why, and whether it can start",
		Long: `Find every Parsley process of the cluster — each topic named
APP-__parsley.ordering-changelog is one — and print one row per process:
its application id, its tasks (the changelog's partitions), its group's
state and members, the topics it receives (from the members' subscriptions
while it runs, else from the bindings in its state), the records it holds,
its held heads, the age of its oldest held record since it was written,
its heads by cause (as state classifies them, ready included), the largest
lag of its group's committed offsets behind the log ends, and what its next
start would meet: ok, or the first refusal Parsley would make; and
UPSTREAM, the stuck process upstream its holds wait on, with its reason.

UPSTREAM: a held head whose blocker is on a topic that another process
writes, when that process is stopped, fails closed, would refuse its
start or itself holds, names that process as its root — followed through
processes that only hold because of theirs, up to the one stuck for its
own reason; processes holding on each other's output are named as a
cycle. Who writes a topic is learned from the cluster (the producers of
its partitions, mapped to applications by their transactional ids, which
begin with the application id) and from --fleet FILE where the cluster
cannot tell (docs/fleet.md). The processes that are such a root are
listed first.

Each process is read as state reads it (the changelog read_committed to
the high watermark taken when its read begins, the group described, never
joined), at most --concurrency at once; only a summary of each is kept.
Its tasks are read on from the group's committed offsets at most
--read-on-max-records records (0: to the log end): a process further
behind is shown as read so far, its HELD cell N+PARTIAL (JSON
read_on_partial), not guessed. state and holds --app read on with the
same default bound.
A process that cannot be read is a row saying so, and the command goes on
— except when the credentials are refused (an ACL denying a changelog or
a group): that is exit 1 with the one line naming the topic or group and
the operation, before any output.

--app APP lists that process alone, by name, and finds it when its
changelog topic is gone but its group kept its committed offsets: a row of
no tasks whose next start is ORDERING_STATE_LOST (discovery, which goes by
changelog topics, cannot see it).

Output (--output): text (a table on a terminal, plain columns in a pipe) or
json (docs/processes.md, docs/schemas/processes.schema.json).

Exit codes: 0 listed; 4 with --older-than D when some process holds a
record written at least D ago, or one whose time is unknown (it cannot be
ruled out); 1 when some process could not be read (after the table; this
wins over 4), the credentials are refused, or the cluster cannot be
reached; 2 usage; 130 interrupted.`,
		Example: `  causalctl processes --brokers localhost:9092
  causalctl ps --app-prefix shop- -o json
  causalctl processes --app notifier -o json
  causalctl processes --fleet <(printf 'notifier: notifications\n')
  causalctl processes --older-than 10m || echo "something is held for 10 minutes or more"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			switch {
			case opts.Concurrency < 1:
				return cmdutil.Usagef("--concurrency %d: read at least one process at a time", opts.Concurrency)
			case opts.OlderThan < 0:
				return cmdutil.Usagef("--older-than must not be negative")
			case opts.TxnWait < 0:
				return cmdutil.Usagef("--txn-wait must not be negative")
			case opts.ReadOnMaxRecords < 0:
				return cmdutil.Usagef("--read-on-max-records must not be negative (0 reads to the log end)")
			case c.Flags().Changed("app") && opts.AppPrefix != "":
				return cmdutil.Usagef("--app and --app-prefix: give one")
			case c.Flags().Changed("app"):
				if err := clock.CheckTopicName(parsley.ChangelogTopic(opts.App)); opts.App == "" || err != nil {
					return cmdutil.Usagef("--app %q: not an application id (its changelog would be no topic name)", opts.App)
				}
			}
			opts.CheckOlder = c.Flags().Changed("older-than")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.AppPrefix, "app-prefix", "", "list only the processes whose application id starts with `P`")
	fs.StringVar(&opts.App, "app", "", "list only the process `APP`, found by name: also when its changelog is gone and its group remains (ORDERING_STATE_LOST)")
	fs.DurationVar(&opts.OlderThan, "older-than", 0, "exit 4 when some process holds a record written at least `D` ago (or one of unknown time)")
	fs.IntVar(&opts.Concurrency, "concurrency", DefaultConcurrency, "read at most `N` processes at once")
	cmdutil.AddFleetFlag(cmd, &opts.Fleet)
	fs.DurationVar(&opts.TxnWait, "txn-wait", kafka.DefaultTxnWait, "how long to wait for an open transaction in a changelog before reporting what was read below it")
	cmdutil.AddReadOnMaxRecordsFlag(cmd, &opts.ReadOnMaxRecords)
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run discovers the processes, reads them and reports them.
func Run(ctx context.Context, opts *Options) error {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	now := opts.Now()
	rows, err := process.Summarize(ctx, cl, process.Selection{Prefix: opts.AppPrefix, App: opts.App,
		ReadOn: process.ReadOnOptions{MaxRecords: process.ReadOnBound(opts.ReadOnMaxRecords)}}, opts.TxnWait, opts.Concurrency, now)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Interrupted("interrupted before every process was read: no report")
		}
		return err
	}
	// A refusal of the credentials is the command's, not one process's
	// state: said alone, before any output, as every broker command does.
	for _, r := range rows {
		if errors.Is(r.Err, kafka.ErrAuthorization) {
			return fmt.Errorf("process %s: %w", r.App, r.Err)
		}
	}
	roots, err := process.Upstream(ctx, cl, rows, opts.Fleet)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Interrupted("interrupted before the writers of the held topics were read: no report")
		}
		// The rows stand without it: said, not fatal.
		fmt.Fprintf(opts.IO.ErrOut, "warning: no UPSTREAM: finding who writes the topics the processes wait on: %v\n", err)
	}
	process.RootsFirst(rows, roots)
	rep := report{Now: now, Rows: rows, Roots: roots, CheckOlder: opts.CheckOlder, OlderThan: opts.OlderThan}
	if err := opts.Final.Do(func() error { return write(rep, opts.IO, opts.Output) }); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	var failed []string
	var first error
	old := false
	for _, r := range rows {
		if r.Err != nil {
			failed = append(failed, r.App)
			if first == nil {
				first = r.Err
			}
		}
		old = old || (opts.CheckOlder && r.OlderThan(opts.OlderThan))
	}
	switch {
	case len(failed) > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%d of %s could not be read (%s); the first: %w",
			len(failed), render.Count(len(rows), "process", "processes"), strings.Join(failed, ", "), first)}
	case old:
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}
