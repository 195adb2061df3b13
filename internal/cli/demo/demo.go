// Package demo implements `causalctl demo`: an embedded Kafka broker, a
// causal pipeline writing into it, and a node watched live as its hold
// queues fill and drain.
package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/causalctl/causalctl/internal/web"
)

// Options are the parsed flags and dependencies of demo.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string               // text or json: the final summary's format

	Listen   string
	DataDir  string
	Duration time.Duration // 0: until interrupted
	Fault    demo.Fault
	Seed     uint64
	NoTUI    bool
	// MetricsAddr, when set, is where the watched notifier's /metrics and
	// /healthz are served.
	MetricsAddr string
	// StopNotifierAfter, when positive, stops the notifier process that
	// long after the start: its ordering state and committed offsets stay,
	// as a stopped process leaves them.
	StopNotifierAfter time.Duration

	// RunTUI shows the live view of the watched node until ctx is done or
	// the user quits, reading snapshots from the channel (closed when the
	// node stops); an error it returns after ctx is done is not one. It is
	// used when set, stdout is a terminal in whose foreground the demo runs,
	// the output is text and --no-tui is not given; otherwise a status line is printed every second.
	// intro is what the introduction printed before the view suggests
	// trying, for the view's help: its alternate screen hides the
	// introduction. NewCmdDemo sets it to tui.Run; a runF may replace it,
	// nil means none.
	RunTUI func(ctx context.Context, snapshots <-chan view.Snapshot, intro []string) error

	// Self is the command line that runs this causalctl, as the user can
	// type it: the demo's hints start with it (selfCommand).
	Self string

	// Now reads the wall clock (time.Now).
	Now func() time.Time
	// Tick is the pipeline's step (--tick, demo.DefaultTick; 0 runs steps
	// back to back) and StatusEvery the time between status lines (one
	// second); tests shorten them.
	Tick, StatusEvery time.Duration
}

// NewCmdDemo returns the demo command. runF replaces the work in tests of
// flag parsing, and is where a caller sets Options.RunTUI before calling
// Run; nil runs Run.
func NewCmdDemo(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Now: time.Now, Tick: demo.DefaultTick, StatusEvery: time.Second,
		Self: selfCommand()}
	opts.RunTUI = func(ctx context.Context, snapshots <-chan view.Snapshot, intro []string) error {
		// The explanation stays on screen until a key closes it; ? shows
		// it again.
		return tui.Run(ctx, opts.IO.In, opts.IO.Out, tui.Options{Title: "causalctl demo", Snapshots: snapshots, Color: opts.IO.Color,
			Intro: intro, ShowIntro: true})
	}
	var fault string
	cmd := &cobra.Command{
		Use:   "demo [flags]",
		Short: "Run an embedded Kafka with a live causal pipeline, and watch a node's hold queues",
		Long: `Start a Kafka-protocol broker inside this process (kfake, from franz-go)
and a small pipeline of services writing into it, every record stamped with
a parsley.causes header naming the records that happened before it:

  shop      writes orders (3 partitions)
  payments  reads orders, writes payments (2 partitions)
  shipping  reads orders and payments, writes shipments (2 partitions)

Some writes are transactions and some of those abort, so offsets have gaps.
A fourth service, a notifier reading all three topics, is watched: it reads
orders late, so payments and shipments often reach it before the orders
they depend on, and its delivery gate holds them until their causes are
delivered. Nothing needs to be installed; the broker's address is printed,
and every other causalctl command (and kcat, rpk, any Kafka client) can be
pointed at it with --brokers while the demo runs.

The notifier is a Parsley process as a real one runs: application id and
consumer group "notifier", one gate per task (task p receives partition p
of every topic that has one), its ordering state kept in the compacted
topic notifier-__parsley.ordering-changelog and its offsets committed to
group notifier, both in its transactions; so holds --app notifier, state
--app notifier and --from-group notifier read it.
The live view shows its shadow: a node reading the same topics with the
same lags through one gate. --stop-notifier-after stops the notifier (its
state and offsets stay, its group loses its member) while the pipeline and
the view go on, so its state can be read as a stopped process's.

On a terminal the watched node is shown live when the live view is
available; otherwise, in a pipe, in the background of its terminal
(demo … &) or with --no-tui, one status line a second:
records produced, received and delivered, held now, the oldest hold's age.
--duration stops after that long and prints the node's final summary, the
one replay prints (-o text or -o json); without it Ctrl-C stops.

--fault injects one failure for the diagnosis features to reveal:
  undecodable  one shipment's header is cut short: the node fails closed
  dangling     one shipment claims a payments position never written: it
               stays held, beyond-log-end (causalctl holds --app notifier
               names it)
  slow         the node's feed of payments stalls for 4s, then recovers:
               holds grow, then drain
  cycle        a payment and a shipment are forged to claim each other:
               the node reports a wait cycle
  unfolded     the shipping service stamps without folding the clocks it
               received: nothing shows here; causalctl check finds the holes
  open-txn     a late producer leaves a transaction open on payments/1 for
               5s, then commits: shipments behind it are held,
               open-transaction, naming the producer
  marker-claim one shipment claims the commit marker ending payments/1: a
               node settling on receipt only (--position-advance=false)
               holds it for good, not-a-record

--seed fixes every record, header and offset the pipeline writes (timing
aside). --data-dir keeps the broker's topics (with their UUIDs), records and
transactions in a directory across runs; a later run appends to them, and
its watched node starts where the earlier run ended. Without it everything
is in memory and gone when the demo stops.`,
		Example: `  causalctl demo
  causalctl demo --no-tui --duration 10s
  causalctl demo --fault dangling --duration 10s -o json | jq .channels
  causalctl demo --no-tui --metrics-addr 127.0.0.1:9464
  causalctl demo --fault dangling --stop-notifier-after 5s
  causalctl demo --listen 127.0.0.1:9092 --data-dir ~/.cache/causalctl-demo`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			if opts.Fault, err = demo.ParseFault(fault); err != nil {
				return cmdutil.Usagef("--fault: %v", err)
			}
			if opts.Duration < 0 {
				return cmdutil.Usagef("--duration must not be negative")
			}
			if opts.Tick < 0 {
				return cmdutil.Usagef("--tick must not be negative")
			}
			if opts.StopNotifierAfter < 0 {
				return cmdutil.Usagef("--stop-notifier-after must not be negative")
			}
			if err := cmdutil.CheckListenAddr("--metrics-addr", opts.MetricsAddr); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Listen, "listen", demo.DefaultListen, "the embedded broker's `ADDRESS` (port 0: a free port)")
	fs.StringVar(&opts.DataDir, "data-dir", "", "keep the broker's topics and records in `DIR` across runs (default: in memory)")
	fs.DurationVar(&opts.Duration, "duration", 0, "stop after this long and print the summary (default: until Ctrl-C)")
	fs.StringVar(&fault, "fault", "", "inject a failure: "+faultUsage())
	cmdutil.CompleteFlagValues(cmd, "fault", faults()...)
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed of the pipeline's choices")
	fs.BoolVar(&opts.NoTUI, "no-tui", false, "print a status line every second instead of the live view")
	cmdutil.AddMetricsAddrFlag(fs, &opts.MetricsAddr)
	fs.DurationVar(&opts.StopNotifierAfter, "stop-notifier-after", 0, "stop the notifier process after this long; its ordering state and offsets stay (default: it runs to the end)")
	fs.DurationVar(&opts.Tick, "tick", demo.DefaultTick, "wall time of one pipeline step (0: steps back to back, the highest rate)")
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run starts the broker and the pipeline, watches the notifier until the
// duration is over or ctx is done, and prints its summary. Both ways of
// stopping exit 0.
func Run(ctx context.Context, opts *Options) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StatusEvery <= 0 {
		opts.StatusEvery = time.Second
	}
	d, err := demo.New(ctx, demo.Config{Listen: opts.Listen, DataDir: opts.DataDir, Seed: opts.Seed, Fault: opts.Fault, Tick: opts.Tick})
	if err != nil {
		return err
	}
	defer d.Close()
	// What must finish after Ctrl-C (stopping, the summary) runs under a
	// context that Ctrl-C does not cancel.
	bg := context.WithoutCancel(ctx)

	notifier, err := d.StartNotifier(ctx)
	if err != nil {
		return err
	}
	defer notifier.Stop()
	notifierStopped := make(chan struct{})
	if opts.StopNotifierAfter > 0 {
		t := time.AfterFunc(opts.StopNotifierAfter, func() {
			notifier.Stop()
			close(notifierStopped)
		})
		defer t.Stop()
	}

	cl, fol, err := d.Follow(ctx, kafka.FetchWait(100*time.Millisecond), kafka.WithLogFacts())
	if err != nil {
		return err
	}
	defer cl.Close()
	feed := d.Watch(fol)
	defer feed.Close()
	// The view is the notifier as the one process model reads it: its
	// tasks (task p receives partition p of every topic), each gate seeded
	// from its ordering state (process.ReadAttach, as watch --app and
	// holds --app read a process), fed what the notifier is fed.
	att, err := process.ReadAttach(ctx, cl, demo.NotifierApp, kafka.DefaultTxnWait, cl.Names())
	if err != nil {
		return fmt.Errorf("reading the notifier's ordering state: %w", err)
	}
	drv, err := live.New(feed, live.Config{
		Replay:      engine.Config{Names: cl.Names()}, // scopes and starts are the seeds'
		Title:       "causalctl demo",
		Source:      d.Addr(),
		Now:         opts.Now,
		Tasks:       true,
		Seeds:       att.Tasks,
		SeedWritten: att.SeedWritten,
		SeedDeleted: att.Process.TopicDeleted,
	})
	if err != nil {
		return err
	}
	if opts.MetricsAddr != "" {
		// The pages of the exporter, for the notifier alone, beside the
		// live driver's metrics.
		m := metrics.NewEndpoint(metrics.LiveSource(drv, metrics.Options{MaxChannels: metrics.DefaultMaxChannels}, opts.Now), "causalctl", opts.Now)
		pages := web.Handler(&web.Cluster{Client: cl, Select: process.Selection{App: demo.NotifierApp}, TxnWait: kafka.DefaultTxnWait,
			Concurrency: 1, RetentionWarn: inspect.DefaultRetentionWarn, MaxAge: time.Second, Now: opts.Now}, m, web.Options{Title: "causalctl demo", Now: opts.Now})
		srv, err := metrics.Serve(opts.MetricsAddr, pages)
		if err != nil {
			return err
		}
		defer srv.Close()
		cmdutil.AnnounceMetrics(opts.IO.ErrOut, srv.Addr())
	}

	info := opts.IO.Out
	if opts.Output == "json" {
		info = opts.IO.ErrOut // stdout carries the JSON summary only
	}
	useTUI := opts.RunTUI != nil && opts.IO.OutTTY && !opts.NoTUI && opts.Output == "text" &&
		cmdutil.TakeScreen(opts.IO, "a status line every second")
	intro := writeIntro(info, d, opts, useTUI)

	pctx, stopPipeline := context.WithCancel(bg)
	dctx, stopDriver := context.WithCancel(bg)
	var wg sync.WaitGroup
	pipeDone := make(chan error, 1)
	drvDone := make(chan error, 1)
	wg.Go(func() { pipeDone <- d.Run(pctx) })
	wg.Go(func() { drvDone <- drv.Run(dctx) })
	defer wg.Wait()
	defer stopDriver()
	defer stopPipeline()

	began := opts.Now()
	var pipeErr error
	pipeStopped := false
	interrupted := false
	if useTUI {
		tctx, cancel := context.WithCancel(ctx)
		if opts.Duration > 0 {
			cancel()
			tctx, cancel = context.WithTimeout(ctx, opts.Duration)
		}
		// A pipeline that fails ends the view.
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case pipeErr = <-pipeDone:
				pipeStopped = true
				cancel()
			case <-tctx.Done():
			}
		}()
		err := opts.RunTUI(tctx, drv.Snapshots(), intro)
		timedOut := opts.Duration > 0 && errors.Is(tctx.Err(), context.DeadlineExceeded)
		cancel()
		<-watched
		if err != nil && tctx.Err() == nil && pipeErr == nil {
			return err // the view failed; not a stop we asked for
		}
		interrupted = !timedOut // the user quit, or Ctrl-C
	} else {
		var werr error
		pipeErr, pipeStopped, interrupted, werr = headless(ctx, opts, d, drv, pipeDone, notifierStopped, info, began)
		if werr != nil {
			return werr
		}
	}

	stopPipeline()
	if !pipeStopped {
		pipeErr = <-pipeDone
	}
	if pipeErr != nil {
		return pipeErr
	}
	if !interrupted {
		notifier.Flush()
		if drv.Err() == nil {
			catchUp(bg, cl, feed, drv)
		}
		// The notifier catches up too, so that its state is the
		// summary's; a stopped or failed one does not wait.
		nctx, cancel := context.WithTimeout(bg, 5*time.Second)
		_ = notifier.WaitRecords(nctx, d.Produced())
		cancel()
	}
	stopDriver()
	if err := <-drvDone; err != nil {
		if _, ok := engine.FailureOf(err); !ok {
			return fmt.Errorf("the watched node: %w", err) // not the gate's: a broker error
		}
	}
	if err := writeSummary(opts, info, drv.Summary(), opts.Now().Sub(began), interrupted); err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Ctrl-C or SIGTERM, the way to end a demo that runs until
		// stopped: a clean stop, its summary written, exit 0.
		return cmdutil.ErrStopped
	}
	return nil
}

// headless prints a status line every StatusEvery until the duration is
// over, ctx is done, the pipeline fails or a line cannot be written (werr).
func headless(ctx context.Context, opts *Options, d *demo.Demo, drv *live.Driver, pipeDone <-chan error, notifierStopped <-chan struct{}, w io.Writer, began time.Time) (pipeErr error, pipeStopped, interrupted bool, werr error) {
	tick := time.NewTicker(opts.StatusEvery)
	defer tick.Stop()
	var deadline <-chan time.Time
	if opts.Duration > 0 {
		t := time.NewTimer(opts.Duration)
		defer t.Stop()
		deadline = t.C
	}
	stopped, taskStopped := drv.Stopped(), drv.TaskStopped()
	faulted := d.Faulted()
	for {
		var line string
		select {
		case <-ctx.Done():
			return nil, false, true, nil
		case <-deadline:
			return nil, false, false, nil
		case err := <-pipeDone:
			return err, true, false, nil
		case <-faulted:
			faulted = nil
			line = "fault injected: " + string(d.Config().Fault)
		case <-stopped:
			stopped = nil
			line = stopText(drv.Err())
		case <-taskStopped:
			// A task failed closed; the notifier's other tasks read on,
			// as Parsley's do.
			taskStopped = nil
			line = stopText(drv.TaskFailed())
		case <-notifierStopped:
			notifierStopped = nil
			line = fmt.Sprintf("the notifier process stopped (--stop-notifier-after): its state stays in %s, its offsets in group %s; the live view goes on as its shadow",
				demo.NotifierChangelog, demo.NotifierApp)
		case <-tick.C:
			line = statusLine(d, drv.Status())
		}
		if _, err := fmt.Fprintf(w, "[%s] %s\n", elapsed(opts.Now().Sub(began)), line); err != nil {
			return nil, false, false, fmt.Errorf("writing output: %w", err)
		}
	}
}

func elapsed(d time.Duration) string {
	return fmt.Sprintf("%3ds", int(d.Round(time.Second)/time.Second))
}

func statusLine(d *demo.Demo, st live.Status) string {
	return fmt.Sprintf("produced=%d %s", d.Produced(), st)
}

func stopText(err error) string {
	ie, ok := engine.FailureOf(err)
	switch {
	case !ok:
		return fmt.Sprintf("the notifier stopped: %v", err)
	case ie.Code.Header():
		return fmt.Sprintf("the notifier FAILED CLOSED at %s offset %d: its parsley.causes header is undecodable (%s). "+
			"Like Parsley, it delivers nothing more rather than guess what the header claimed.", ie.Channel, ie.Offset, ie.Code)
	}
	return fmt.Sprintf("the notifier FAILED CLOSED at %s offset %d: %s. It delivers nothing more.", ie.Channel, ie.Offset, ie.Code)
}

// catchUp lets the notifier read to the end of the log once the pipeline
// has stopped writing — its lags ended — so that the summary tells what
// it holds for good, not what it had yet to read. It gives up after a few
// seconds.
func catchUp(ctx context.Context, cl *kafka.Client, feed *demo.Feed, drv *live.Driver) {
	feed.Flush()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names := make([]string, 0, len(demo.Topics))
	for _, t := range demo.Topics {
		names = append(names, t.Name)
	}
	infos, err := cl.Topics(ctx, names...)
	if err != nil {
		return
	}
	ends := map[string]int64{} // "TOPIC/P" → last stable offset
	for _, ti := range infos {
		for _, p := range ti.Partitions {
			ends[fmt.Sprintf("%s/%d", ti.Name, p.Partition)] = kafka.StableEnd(p.LastStable, p.HighWatermark)
		}
	}
	for {
		select {
		case s, ok := <-drv.Snapshots():
			if !ok || caughtUp(&s, ends) {
				return
			}
		case <-drv.Stopped():
			return
		case <-ctx.Done():
			return
		}
	}
}

func caughtUp(s *view.Snapshot, ends map[string]int64) bool {
	for _, row := range s.Channels {
		if end, ok := ends[row.Channel]; ok && row.ReceivedUpTo+1 < end {
			return false
		}
	}
	return true
}

func writeSummary(opts *Options, info io.Writer, sum *inspect.Summary, took time.Duration, interrupted bool) error {
	if sum == nil {
		return errors.New("the watched node left no summary")
	}
	// Stopped by Ctrl-C or q before --duration ended: the headline says
	// "stopped", not "complete", and the JSON "interrupted".
	sum.Interrupted = interrupted
	if opts.Output == "json" {
		return opts.Final.Do(func() error { return render.StoppedSummary(opts.IO.Out, "json", sum) })
	}
	how := "after " + took.Round(100*time.Millisecond).String()
	if interrupted {
		how = "when stopped, " + how
	} else {
		// The pipeline stopped first and the notifier caught up: holds
		// seen live have drained, which the last status line may not say.
		how += ", once it caught up with the log ends after the pipeline stopped"
	}
	return opts.Final.Do(func() error {
		fmt.Fprintf(info, "\nThe notifier %s (the summary `causalctl replay` prints):\n\n", how)
		return render.StoppedSummary(opts.IO.Out, "text", sum)
	})
}

// writeIntro says, for someone who never heard of Parsley, what runs and
// what to try, and returns what to try again for the live view's help: a
// heading and the commands, one a line.
func writeIntro(w io.Writer, d *demo.Demo, opts *Options, tui bool) []string {
	addr := d.Addr()
	cfg := d.Config()
	var b strings.Builder
	b.WriteString("causalctl demo: a causally ordered Kafka pipeline, running in this process\n\n")
	fmt.Fprintf(&b, "A Kafka broker is listening on %s. It is embedded (kfake), so there\n", addr)
	b.WriteString("is no Kafka to install, and any Kafka client can connect to it.\n")
	switch {
	case opts.DataDir == "":
		b.WriteString("Its data lives in memory and is gone when the demo stops.\n")
	case d.Resumed():
		fmt.Fprintf(&b, "Its data is kept in %s. The records of earlier runs are there\ntoo; this run writes after them.\n", opts.DataDir)
	default:
		fmt.Fprintf(&b, "Its data is kept in %s for the next run.\n", opts.DataDir)
	}
	b.WriteString(`
Three services write into it. Every record carries a parsley.causes header:
the Kafka positions (topic UUID, partition, offset) of the records that
happened before it.
  shop      writes orders                                 (3 partitions)
  payments  reads orders, writes payments                 (2 partitions)
  shipping  reads orders and payments, writes shipments   (2 partitions)
Some writes are transactions and some of those abort, so offsets have gaps.

`)
	explain := fmt.Sprintf(`Watched here is a fourth service, a notifier reading all three topics. It
reads orders %s late, so payments and shipments often reach it before the
orders they depend on. Its delivery gate then holds such a record back
("held") until everything it depends on has been delivered: holds appear
and drain all the time, and nothing is ever delivered before its cause.
It runs as a Parsley process does: application id and group %[2]s, one
gate per task (partition p of every topic), its ordering state in the
compacted topic %[3]s.
Shown here is its shadow, reading the same topics with the same lags.
`, cfg.Lags[demo.TopicOrders], demo.NotifierApp, demo.NotifierChangelog)
	b.WriteString(explain)
	at := (time.Duration(cfg.FaultStep) * opts.Tick).String()
	if opts.Tick == 0 {
		at = render.Count(cfg.FaultStep, "step", "steps")
	}
	// Which process is stuck, then on what: the path that answers.
	self := cmp.Or(opts.Self, "causalctl")
	try := []string{
		self + " processes --brokers " + addr,
		self + " holds --brokers " + addr + " --app " + demo.NotifierApp,
		self + " state --brokers " + addr + " --app " + demo.NotifierApp,
		self + " topics --brokers " + addr,
		self + " decode --brokers " + addr + " -t shipments --offsets -5",
		"kcat -b " + addr + " -L",
	}
	tryText := []string{"Try, in another terminal while it runs:"}
	for _, c := range try {
		tryText = append(tryText, "  "+c)
	}
	if self != "causalctl" {
		tryText = append(tryText, "(causalctl is not on your PATH; `go install ./cmd/causalctl` from the", "checkout puts it there, in $(go env GOPATH)/bin.)")
	}
	// The live view's intro screen and ? repeat what its alternate screen
	// hides: the explanation, the fault, what to try.
	help := []string{"causalctl demo: what you are watching"}
	help = append(help, strings.Split(strings.TrimSuffix(explain, "\n"), "\n")...)
	var faultCmd string
	if cfg.Fault != demo.NoFault {
		var text string
		text, faultCmd = faultText(cfg.Fault, self, addr, at, cfg.Stall, time.Duration(demo.OpenTxnSteps)*opts.Tick)
		if faultCmd != "" {
			text += "  " + faultCmd + "\n"
		}
		b.WriteString("\n" + text)
		help = append(help, "")
		help = append(help, strings.Split(strings.TrimSuffix(text, "\n"), "\n")...)
	}
	b.WriteString("\n")
	b.WriteString(strings.Join(tryText, "\n"))
	b.WriteString("\n\n")
	help = append(help, "")
	help = append(help, tryText...)
	stop := "Ctrl-C"
	if tui {
		stop = "q or Ctrl-C"
	}
	switch {
	case opts.Duration > 0:
		fmt.Fprintf(&b, "It stops after %s (or on %s) and prints the notifier's summary.\n", opts.Duration, stop)
	default:
		fmt.Fprintf(&b, "%s stops it and prints the notifier's summary.\n", stop)
	}
	if !tui {
		every := "second"
		if opts.StatusEvery != time.Second {
			every = opts.StatusEvery.String()
		}
		fmt.Fprintf(&b, "Every %s: records produced; what the notifier received and delivered;\nhow many it holds now and the age of the oldest hold; how far it is behind\nthe log ends (lag).\n", every)
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
	return help
}

// faultText says what the fault does and returns, apart, the command that
// shows it ("" when the view shows it); every command it suggests names
// the broker at addr, so that it runs as printed.
func faultText(f demo.Fault, self, addr, at string, stall, open time.Duration) (text, cmd string) {
	switch f {
	case demo.FaultUndecodable:
		return fmt.Sprintf(`Fault "undecodable": after %s the shipping service writes one shipment whose
header is cut short. The notifier fails closed there and delivers nothing
more: it cannot know what the record depends on, so it does not guess.
No restart passes the record (UNDECODABLE_METADATA). See it with:
`, at), self + " holds --brokers " + addr + " --app " + demo.NotifierApp
	case demo.FaultDangling:
		return fmt.Sprintf(`Fault "dangling": after %s the shipping service writes one shipment claiming
a payments position that is never written. It stays held, waiting for a
record that will not come (beyond-log-end), and so does every shipment
behind it on its partition. Ask why with:
`, at), self + " holds --brokers " + addr + " --app " + demo.NotifierApp
	case demo.FaultSlow:
		return fmt.Sprintf(`Fault "slow": after %s the notifier's feed of payments stalls for %s, then
recovers. The shipments that depend on those payments pile up in the hold
queues, then drain.
`, at, stall), ""
	case demo.FaultCycle:
		return fmt.Sprintf(`Fault "cycle": after %s a payment and a shipment are forged to claim each
other. The notifier holds both, each waiting for the other, and reports a
wait cycle: proof that a stamp broke the contract.
`, at), ""
	case demo.FaultUnfolded:
		return fmt.Sprintf(`Fault "unfolded": after %s the shipping service stamps each shipment for a
payment with that payment alone, folding none of the clocks it received.
Nothing fails and nothing is held here — the notifier consumes payments too —
but a node consuming orders and shipments only could deliver a shipment
before its order. Find the holes with:
`, at), self + " check --brokers " + addr + " -t orders -t payments -t shipments --scope orders,shipments"
	case demo.FaultOpenTxn:
		return fmt.Sprintf(`Fault "open-txn": after %s a late producer (transactional id %s)
writes a payment to payments/1 in a transaction it leaves open for %s, then
commits. Until then no read_committed reader gets past it: shipments claiming
later payments on payments/1 are held. Ask why with:
`, at, demo.TxnLatePayment, open), self + " holds --brokers " + addr + " --app " + demo.NotifierApp
	case demo.FaultMarkerClaim:
		return fmt.Sprintf(`Fault "marker-claim": after %s one shipment claims the offset of the commit
marker that ends the last transaction on payments/1, and no payment follows
it there. Parsley's wire contract forbids claiming a marker: a node that
settles only on receipt holds the shipment for good. See it with:
`, at), self + " holds --brokers " + addr + " --app " + demo.NotifierApp + " --position-advance=false"
	}
	return "", ""
}
