// Package watch implements `causalctl watch`: the gate run as a read-only
// shadow node over a live cluster, shown as it goes.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of watch.
type Options struct {
	IO *iostreams.IOStreams
	// InputFlags name what is followed: --topic, --offsets, --from-group,
	// --allow-gaps, --scope, --start, --topic-id, and --tasks/--app (one
	// gate per Parsley task, seeded from the process with --app).
	cmdutil.InputFlags
	Undecodable gate.UndecodableMode
	// ReceiptOnly settles channels only on receipt
	// (--position-advance=false).
	ReceiptOnly bool
	Interval    time.Duration
	NoTUI       bool
	// MetricsAddr, when set, is where /metrics and /healthz are served.
	MetricsAddr string
	// MetricsMaxChannels bounds the channels with per-channel series
	// (--metrics-max-channels; 0 none).
	MetricsMaxChannels int

	// OpenFollow opens the follower (Factory.OpenFollow).
	OpenFollow func(context.Context, input.BrokerRead) (*input.Follow, error)
	// Dial connects to the cluster (Factory.Dial), for --app.
	Dial func(context.Context) (*kafka.Client, error)
	Now  func() time.Time
	// RunTUI shows the live view; tui.Run by default.
	RunTUI func(ctx context.Context, in io.Reader, out io.Writer, opts tui.Options) error
	// Pick is set when neither topics nor --app were given: the process
	// list is shown first, and the process picked is watched as --app.
	Pick bool
	// ChooseProcess shows the process list; tui.ChooseProcess by default.
	ChooseProcess func(ctx context.Context, in io.Reader, out io.Writer, title string, rows []inspect.ProcessSummary, roots map[string]upstream.Root, color bool) (string, error)
}

// NewCmdWatch returns the watch command.
func NewCmdWatch(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, OpenFollow: f.OpenFollow, Dial: f.Dial, Now: time.Now, RunTUI: tui.Run, ChooseProcess: tui.ChooseProcess}
	var undecodable cmdutil.UndecodableFlag
	var positionAdvance bool
	cmd := &cobra.Command{
		Use:   "watch [--topic NAME[/P]… [--offsets START | --from-group GROUP] | --app APP]",
		Short: "Run the gate live over a cluster and show hold queues as they fill and drain",
		Long: `Follow topics on a live cluster and run the delivery gate over them as a
read-only shadow of a consuming node — no group joined, no offset committed —
to see what consumer lag cannot show: records held in hold queues, on what
they wait, since when, and whether they move.

On a terminal it shows the live view (? lists the keys). In a pipe, or run
in the background of its terminal (watch … &), it prints one plain status
line per --interval instead, never an escape sequence. Either way a feed
that fails (the cluster gone for --request-timeout, the gate failed closed)
ends it with exit 1 and a one-line error; the view shows the failure first
and stays until q. With --tasks or --app a task that fails closed stops
alone, as Parsley's does, and the others read on: watch goes on, and ends
with exit 1 and that task's error when stopped.

Where to start: --from-group GROUP starts every partition at the watched
node's committed offsets, so the holds it has now appear; --offsets takes
rpk's start expressions (start, end, -N, @TIME; default end: only what is
written from now on).

Partitions added to a watched topic while it runs are followed from their
first offset (looked for every 2s), and said on stderr in a pipe; with
--scope they are read but stay outside the scope.

--tasks runs one gate per Parsley task, as the process does: task p
receives partition p of every watched topic, and a claim on a channel of
another partition is ignored; the view gains a TASK column, the status
line each task's held heads and records. --app APP shadows a Parsley
process: its topics and tasks, each task's gate seeded from its ordering
state and fed from the group's committed offsets (docs/tasks.md).

On a terminal, watch with neither --topic nor --app lists the cluster's
Parsley processes (the processes table); enter watches the one under the
cursor as --app would.`,
		Example: `  causalctl watch --brokers localhost:9092 -t orders,payments,shipments --from-group notifier
  causalctl watch -t orders -t payments --offsets -1000
  causalctl watch -t orders,payments --interval 5s | tee watch.log
  causalctl watch -t orders,payments,shipments --tasks --from-group notifier
  causalctl watch --brokers localhost:9092 --app notifier`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := cmdutil.CheckTasks(c.Flags(), &opts.Tasks); err != nil {
				return err
			}
			if !opts.Range.Given() && opts.Tasks.App == "" {
				if !opts.IO.OutTTY || opts.NoTUI {
					return cmdutil.Usagef("name the topics to watch with --topic, or a Parsley process with --app (on a terminal, watch alone lists the processes)")
				}
				opts.Pick = true
			}
			opts.Undecodable = undecodable.Mode
			opts.ReceiptOnly = !positionAdvance
			if opts.Interval <= 0 {
				return cmdutil.Usagef("--interval must be positive")
			}
			if err := cmdutil.CheckListenAddr("--metrics-addr", opts.MetricsAddr); err != nil {
				return err
			}
			if err := cmdutil.CheckMaxChannels(opts.MetricsMaxChannels); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	// A follow's input: a capture, and the sizes of reading one, are
	// not watch's (it reads clocks with the default limit).
	cmdutil.AddInputFlags(cmd, f, &opts.InputFlags, cmdutil.InputSpec{
		NoCapture: true, NoSizes: true, Tasks: true, App: true,
		ScopeUsage: "channels the shadow node consumes, `CH[,CH...]` (default: every watched channel)",
		StartUsage: "start positions, `CH=OFFSET[,...]`",
	})
	opts.Range.Offsets = "end"
	fs.Lookup("offsets").DefValue = "end"
	fs.Lookup("offsets").Usage = "where to start, rpk's -o grammar without an end: start, end, N, +N, -N, @TIME"
	cmdutil.AddUndecodableFlag(cmd, &undecodable)
	cmdutil.AddPositionAdvanceFlag(fs, &positionAdvance)
	fs.DurationVar(&opts.Interval, "interval", time.Second, "how often a status line is printed without the live view")
	fs.BoolVar(&opts.NoTUI, "no-tui", false, "print status lines even on a terminal")
	cmdutil.AddMetricsAddrFlag(fs, &opts.MetricsAddr)
	cmdutil.AddMetricsMaxChannelsFlag(fs, &opts.MetricsMaxChannels, "per-channel series")
	return cmd
}

// Run watches until ctx is cancelled or the user quits the view.
func Run(ctx context.Context, opts *Options) error {
	if opts.Pick {
		app, err := pick(ctx, opts)
		if err != nil || app == "" {
			return err
		}
		opts.Tasks.App = app
	}
	if err := opts.InputFlags.AttachGroup(ctx, opts.Dial, opts.IO.ErrOut); err != nil {
		return err
	}
	// The log facts (log start, retention, open transactions) let the view
	// name a hold's cause as `holds` does.
	read := []kafka.ReadOption{kafka.WithLogFacts()}
	// Partitions added to a watched topic are followed from their start
	// and said; in the view, the scope count grows.
	inView := opts.IO.OutTTY && !opts.NoTUI && cmdutil.TakeScreen(opts.IO, "a status line every --interval")
	read = append(read, kafka.OnNewChannel(func(ch kafka.ChannelProgress) {
		if !inView {
			fmt.Fprintf(opts.IO.ErrOut, "watch: new partition %s/%d: following it from offset %d\n", ch.Topic, ch.Partition, ch.Start)
		}
	}))
	if opts.MetricsAddr != "" {
		// A sidecar outlives broker outages: it says it is disconnected
		// (causalctl_disconnected_seconds, the view, the status line) and
		// goes on retrying until stopped, instead of ending after
		// --request-timeout as an interactive watch does.
		read = append(read, kafka.RetryForever())
	}
	fol, cfg, err := follow(ctx, opts, read)
	if err != nil {
		return err
	}
	defer fol.Close()
	// --allow-gaps: each gap said once, as the range commands say it (in
	// the view, its events list it instead).
	cfg.OnGap = func(it *record.Item) {
		if !inView {
			fmt.Fprintln(opts.IO.ErrOut, input.GapWarning(it))
		}
	}
	drv, err := live.New(fol.Follower, cfg)
	if err != nil {
		return err
	}
	var srv *metrics.Server
	if opts.MetricsAddr != "" {
		mo := metrics.Options{MaxChannels: opts.MetricsMaxChannels, Tasks: cfg.Tasks || cfg.Seeds != nil}
		if srv, err = metrics.Serve(opts.MetricsAddr, metrics.NewEndpoint(metrics.LiveSource(drv, mo, nil), "causalctl", nil)); err != nil {
			return err
		}
		defer srv.Close()
		cmdutil.AnnounceMetrics(opts.IO.ErrOut, srv.Addr())
	}
	dctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- drv.Run(dctx) }()
	defer func() { stop(); <-done }()

	if inView {
		err := opts.RunTUI(ctx, opts.IO.In, opts.IO.Out, tui.Options{Title: cfg.Title, Snapshots: drv.Snapshots(), Color: opts.IO.Color})
		if errors.Is(err, context.Canceled) {
			// SIGTERM or Ctrl-C from outside the view, the view being the
			// output: a clean stop, as q is.
			return cmdutil.ErrStopped
		}
		if err != nil {
			return err
		}
		// A feed that failed while shown (the cluster gone for
		// --request-timeout, the gate failed closed) stays on screen until
		// q; then watch ends as in a pipe: exit 1, the one line on stderr
		// after the screen is restored.
		select {
		case <-drv.Stopped():
			return drv.Err()
		default:
			// q while the feed was running: exit 1 still when a task
			// failed closed while the others read on.
			return drv.TaskFailed()
		}
	}
	return statusLines(ctx, opts, drv, srv != nil)
}

// pick reads every Parsley process of the cluster and shows the list;
// it returns the one picked, "" when the user quit.
func pick(ctx context.Context, opts *Options) (string, error) {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return "", err
	}
	brokers := strings.Join(cl.Config().Brokers, ",")
	rows, err := process.Summarize(ctx, cl, process.Selection{}, opts.Tasks.TxnWait, process.DefaultConcurrency, opts.Now())
	var roots map[string]upstream.Root
	if err == nil {
		roots, err = process.Upstream(ctx, cl, rows, nil)
	}
	cl.Close()
	if err != nil {
		return "", err
	}
	process.RootsFirst(rows, roots)
	app, err := opts.ChooseProcess(ctx, opts.IO.In, opts.IO.Out, "causalctl watch · "+brokers, rows, roots, opts.IO.Color)
	if errors.Is(err, context.Canceled) {
		return "", nil
	}
	return app, err
}

// follow opens the follower and says how the driver runs over it: one
// gate over the scope, one per task (--tasks), or the tasks of a Parsley
// process seeded from its state (--app).
func follow(ctx context.Context, opts *Options, read []kafka.ReadOption) (*input.Follow, live.Config, error) {
	rc := engine.Config{Undecodable: opts.Undecodable, ReceiptOnly: opts.ReceiptOnly, Names: opts.Names}
	cfg := live.Config{Title: "causalctl watch", Now: opts.Now, Tasks: opts.Tasks.On()}
	var fol *input.Follow
	if opts.Tasks.App != "" {
		att, f, err := input.FollowAttach(ctx, opts.Dial, opts.Tasks, opts.Names, opts.IO.ErrOut, read...)
		if err != nil {
			return nil, cfg, err
		}
		fol = f
		cfg.Title = "causalctl watch --app " + opts.Tasks.App
		cfg.Seeds, cfg.SeedWritten, cfg.SeedDeleted = att.Tasks, att.SeedWritten, att.Process.TopicDeleted
	} else {
		f, err := opts.OpenFollow(ctx, input.BrokerRead{Selection: opts.Range, Start: opts.Start, Names: opts.Names, Options: read})
		if err != nil {
			return nil, cfg, err
		}
		// The follower itself starts each channel at its start position:
		// the gate needs the scope only.
		scope, err := input.ResolveScope(opts.Scope, opts.Start, f.Channels, opts.Names)
		if err != nil {
			f.Close()
			return nil, cfg, err
		}
		fol = f
		rc.Scope = scope.Channels
		rc.Grow = len(opts.Scope) == 0 // the default scope is every watched channel, new ones too
	}
	cfg.Replay = rc
	cfg.Source = strings.Join(fol.Client.Config().Brokers, ",")
	return fol, cfg, nil
}

// statusLines prints the latest snapshot as one plain line per interval
// until ctx is done (a last line, exit 0: cmdutil.ErrStopped) or the gate
// stops (its error, exit 1). While metrics are served, a stopped gate does
// not end it: the error is said on stderr at once, and the endpoint goes
// on reporting the failure (and the holds ageing) until ctx is done (then
// exit 1).
// finalSnapshotWait bounds how long a stopped driver's last snapshot is
// waited for: it comes at once, unless the machine is starved.
const finalSnapshotWait = 5 * time.Second

func statusLines(ctx context.Context, opts *Options, drv *live.Driver, serving bool) error {
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	var last view.Snapshot
	have := false
	stopped := drv.Stopped()
	print := func() error {
		if !have {
			return nil
		}
		if _, err := fmt.Fprintln(opts.IO.Out, live.StatusOf(&last)); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	for {
		select {
		case s, ok := <-drv.Snapshots():
			if ok {
				last, have = s, true
			}
		case <-tick.C:
			if err := print(); err != nil {
				return err
			}
		case <-stopped:
			// Take the final state, print it, and say why it stopped. A
			// snapshot queued before the stop still says running: read on
			// to the one taken after it (the driver publishes it at once).
			wait := time.After(finalSnapshotWait)
		final:
			for {
				select {
				case s, ok := <-drv.Snapshots():
					if !ok {
						break final
					}
					last, have = s, true
					if s.State != engine.StateRunning && s.State != engine.StateDisconnected {
						break final
					}
				case <-wait:
					break final
				}
			}
			if err := print(); err != nil {
				return err
			}
			if !serving || drv.Err() == nil {
				return drv.Err()
			}
			fmt.Fprintf(opts.IO.ErrOut, "causalctl: %s (still serving metrics until stopped)\n", drv.Err())
			stopped = nil
		case <-ctx.Done():
			if err := print(); err != nil {
				return err
			}
			if drv.Err() != nil {
				// A gate that failed while metrics were served: its error
				// was said on stderr when it failed.
				return cmdutil.ErrStoppedFailed
			}
			if err := drv.TaskFailed(); err != nil {
				// A task failed closed while the others read on: its
				// error, exit 1.
				return err
			}
			// Stopped as asked, the last status line written: a clean stop.
			return cmdutil.ErrStopped
		}
	}
}
