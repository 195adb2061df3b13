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
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of watch.
type Options struct {
	IO          *iostreams.IOStreams
	Range       cmdutil.RangeFlags
	Scope       []string
	Start       []string
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
	Names              *clock.Names

	// OpenFollow opens the follower (Factory.OpenFollow).
	OpenFollow func(context.Context, cmdutil.BrokerRead) (*cmdutil.Follow, error)
	Now        func() time.Time
	// RunTUI shows the live view; tui.Run by default.
	RunTUI func(ctx context.Context, in io.Reader, out io.Writer, opts tui.Options) error
}

// NewCmdWatch returns the watch command.
func NewCmdWatch(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, OpenFollow: f.OpenFollow, Now: time.Now, RunTUI: tui.Run}
	names := &cmdutil.NamesFlag{}
	var undecodable cmdutil.UndecodableFlag
	var positionAdvance bool
	cmd := &cobra.Command{
		Use:   "watch --topic NAME[/P]… [--offsets START | --from-group GROUP]",
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
and stays until q.

Where to start: --from-group GROUP starts every partition at the watched
node's committed offsets, so the holds it has now appear; --offsets takes
rpk's start expressions (start, end, -N, @TIME; default end: only what is
written from now on).

Partitions added to a watched topic while it runs are followed from their
first offset (looked for every 2s), and said on stderr in a pipe; with
--scope they are read but stay outside the scope.`,
		Example: `  causalctl watch --brokers localhost:9092 -t orders,payments,shipments --from-group notifier
  causalctl watch -t orders -t payments --offsets -1000
  causalctl watch -t orders,payments --interval 5s | tee watch.log`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !opts.Range.Given() {
				return cmdutil.Usagef("name the topics to watch with --topic")
			}
			opts.Undecodable = undecodable.Mode
			opts.ReceiptOnly = !positionAdvance
			if opts.Interval <= 0 {
				return cmdutil.Usagef("--interval must be positive")
			}
			opts.Names = names.Names
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
	cmdutil.AddRangeFlags(cmd, f, &opts.Range)
	opts.Range.Offsets = "end"
	fs.Lookup("offsets").DefValue = "end"
	fs.Lookup("offsets").Usage = "where to start, rpk's -o grammar without an end: start, end, N, +N, -N, @TIME"
	cmdutil.AddScopeFlag(cmd, f, &opts.Scope, "channels the shadow node consumes, `CH[,CH...]` (default: every watched channel)")
	cmdutil.AddStartFlag(cmd, f, &opts.Start, "start positions, `CH=OFFSET[,...]`")
	cmdutil.AddUndecodableFlag(cmd, &undecodable)
	cmdutil.AddPositionAdvanceFlag(fs, &positionAdvance)
	fs.DurationVar(&opts.Interval, "interval", time.Second, "how often a status line is printed without the live view")
	fs.BoolVar(&opts.NoTUI, "no-tui", false, "print status lines even on a terminal")
	cmdutil.AddMetricsAddrFlag(fs, &opts.MetricsAddr)
	cmdutil.AddMetricsMaxChannelsFlag(fs, &opts.MetricsMaxChannels, "per-channel series")
	cmdutil.AddTopicIDFlag(fs, names)
	return cmd
}

// Run watches until ctx is cancelled or the user quits the view.
func Run(ctx context.Context, opts *Options) error {
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
	fol, err := opts.OpenFollow(ctx, cmdutil.BrokerRead{Flags: opts.Range, Start: opts.Start, Names: opts.Names, Options: read})
	if err != nil {
		return err
	}
	defer fol.Close()
	// The follower itself starts each channel at its start position: the
	// gate needs the scope only.
	scope, err := cmdutil.ResolveScope(opts.Scope, opts.Start, fol.Channels, opts.Names)
	if err != nil {
		return err
	}
	brokers := strings.Join(fol.Client.Config().Brokers, ",")
	drv, err := live.New(fol.Follower, live.Config{
		Replay: replay.Config{Scope: scope.Channels, Undecodable: opts.Undecodable, ReceiptOnly: opts.ReceiptOnly, Names: opts.Names,
			Grow: len(opts.Scope) == 0}, // the default scope is every watched channel, new ones too
		Title:  "causalctl watch",
		Source: brokers,
		Now:    opts.Now,
	})
	if err != nil {
		return err
	}
	var srv *metrics.Server
	if opts.MetricsAddr != "" {
		if srv, err = metrics.Listen(opts.MetricsAddr, drv, metrics.Options{MaxChannels: opts.MetricsMaxChannels}); err != nil {
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
		err := opts.RunTUI(ctx, opts.IO.In, opts.IO.Out, tui.Options{Title: "causalctl watch", Snapshots: drv.Snapshots(), Color: opts.IO.Color})
		if errors.Is(err, context.Canceled) {
			return nil // Ctrl-C from outside the view: the view was the output
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
			return nil // q while the feed was running
		}
	}
	return statusLines(ctx, opts, drv, srv != nil)
}

// statusLines prints the latest snapshot as one plain line per interval
// until ctx is done (exit 130) or the gate stops (its error, exit 1). While
// metrics are served, a stopped gate does not end it: the error is said on
// stderr at once, and the endpoint goes on reporting the failure (and the
// holds ageing) until ctx is done.
func statusLines(ctx context.Context, opts *Options, drv *live.Driver, serving bool) error {
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	var last inspect.Snapshot
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
			// Take the final state, print it, and say why it stopped.
			select {
			case s, ok := <-drv.Snapshots():
				if ok {
					last, have = s, true
				}
			case <-time.After(2 * opts.Interval):
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
			return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted}
		}
	}
}
