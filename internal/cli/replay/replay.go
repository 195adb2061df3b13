// Package replay implements `causalctl replay`: a capture through the gate,
// offline, with events, a summary and exit codes for scripts.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of replay.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string               // text, json or ndjson

	// InputFlags name the input: --input, the broker range, --app,
	// --scope, --start, --interleave, the sizes, --topic-id, --tasks.
	cmdutil.InputFlags
	Undecodable gate.UndecodableMode
	// ReceiptOnly settles channels only on receipt
	// (--position-advance=false).
	ReceiptOnly bool
	FailOnHeld  bool
	// MaxMemory bounds what a reordering interleaving holds (--max-memory).
	MaxMemory cmdutil.ByteSize
	// Shard is --shard K/N: with --tasks, only the tasks t with
	// t mod N = K are replayed; nil for every task.
	Shard *replay.Shard
	// Merge holds the summary files of --merge: nothing is replayed, the
	// shards' summaries are merged into the single run's.
	Merge []string
	// ParsleyExport is --parsley-export: a Parsley test export replayed
	// through its history and judged against its trace (docs/histories.md).
	ParsleyExport string

	// Now reads the clock for progress lines (time.Now).
	Now func() time.Time
	// TUI runs the replay as the interactive stepper.
	TUI bool
	// OpenTTY opens the terminal for keys when stdin carries the capture.
	OpenTTY func() (io.ReadCloser, error)
	// OpenInput opens the input (Factory.OpenInput).
	OpenInput func(context.Context, *cmdutil.InputFlags, input.Read) (*input.Source, error)
	// Dial connects to the cluster (Factory.Dial): --from-group asks it
	// whether the group is a Parsley process.
	Dial func(context.Context) (*kafka.Client, error)
}

// NewCmdReplay returns the replay command. runF replaces the work in tests
// of flag parsing; nil runs Run.
func NewCmdReplay(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Now: time.Now, OpenTTY: OpenTTY, OpenInput: f.OpenInput, Dial: f.Dial}
	var undecodable cmdutil.UndecodableFlag
	var positionAdvance, merge bool
	var shard string
	cmd := &cobra.Command{
		Use:   "replay (--input FILE | --topic NAME[/P]… | --app APP | --merge FILE…) [flags]",
		Short: "Run a capture or a broker range through the delivery gate",
		Long: `Replay a capture file (SPEC §4), or a range of records read from the brokers,
through a faithful re-implementation of the delivery gate, and show what a
node consuming the scope's channels would have delivered, held and dropped.
A capture is replayed offline; a broker range is read read_committed, with no
group joined and nothing committed. The same input and flags always give the
same output.

A broker range is --topic (repeatable) with --offsets in rpk's grammar
(default start; the end is fixed when the range opens, so it always ends)
and optionally --from-group GROUP to start at a group's committed offsets.
Its interleaving defaults to timestamp; a capture's to file.

The scope defaults to every channel in the input; --scope takes channels
(NAME/PARTITION or UUID/PARTITION) and bare topic names (all of the topic's
partitions in the input). Clock entries on channels outside the scope are
ignored, as a real node ignores them. --start CH=OFFSET is a position advance
to OFFSET before anything is read: records below it are replays.

Output (--output):
  text    (default on a terminal) a headline and tables of channels and
          blocked heads
  ndjson  (default in a pipe) one event per line as it happens —
          {"type":"deliver","seq":1,"channel":"orders/0","offset":41},
          {"type":"drop",…}, {"type":"hold",…} — then one summary event
  json    the summary object only

--tasks runs one gate per Parsley task — task p receives partition p of
every topic in scope — and summarises each task; events carry their task.
--app APP replays Parsley process APP: each task's gate seeded from its
ordering changelog, then the records from the group's committed offsets to
the log end, in the order the range reads them (docs/tasks.md).

--shard K/N with --tasks replays only the tasks t with t mod N = K, and
marks its summary as shard K/N; run every K from 0 to N-1 (anywhere: on
N machines, as the N pods of an indexed job), then --merge FILE… combines
their -o json summaries into exactly the summary of the single --tasks
run (docs/scale.md).

With --tui the replay runs as an interactive stepper on the terminal:
space steps one receive, d and h go to the next delivery or hold, r runs
and pauses (+/- change the speed), g and G jump to the start and end, and :
jumps to CH@OFFSET; ? lists every key. Run in the background of its
terminal (replay … --tui &), it replays as without --tui.

Exit codes: 0 done; 1 bad input or the gate failed closed (the channel,
offset, line and reason code are on stderr; events already written stay);
2 usage; 3 with --fail-on-held when records are still held; 130 interrupted,
after the summary of what was replayed.

--parsley-export FILE.edn replays a Parsley test export (the parsley-jepsen
format) instead: every process and task through its history — declarations,
restarts, rewinds, truncation, deleted and recreated topics, refusals
(docs/histories.md) — and gives each a verdict against Parsley's trace: exact,
or the first divergence (the channel, offset, what each did and the rule that
decided it). Exit 4 when a unit diverges.`,
		Example: `  causalctl replay -f capture.ndjson
  causalctl replay -f capture.ndjson --scope orders,payments/1 -o json | jq .held
  causalctl replay -f - --interleave random:7 --fail-on-held < capture.ndjson
  causalctl replay --brokers localhost:9092 -t orders -t payments --offsets -1000 -o json
  causalctl replay -f capture.ndjson --tui
  causalctl replay -f capture.ndjson --tasks        # one gate per Parsley task, as the process runs
  causalctl replay --brokers localhost:9092 --app notifier -o json   # from its state to the log end
  causalctl replay -f capture.ndjson --tasks --shard 1/4 -o json > shard1.json   # tasks 1, 5, 9 and so on: one of 4 machines
  causalctl replay --parsley-export honest-dead-holds-scenario.edn -o json   # exit 4 when a unit diverges
  causalctl replay --merge <(causalctl replay -f capture.ndjson --tasks --shard 0/2 -o json) <(causalctl replay -f capture.ndjson --tasks --shard 1/2 -o json)`,
		Args: func(c *cobra.Command, args []string) error {
			if merge {
				if len(args) == 0 {
					return cmdutil.Usagef("--merge takes the shards' summary files: replay --merge FILE…")
				}
				return nil
			}
			return cobra.NoArgs(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			def := "ndjson"
			if opts.IO.OutTTY {
				def = "text"
			}
			if merge {
				def = "json"
			}
			if opts.Output, err = out.Resolve(def); err != nil {
				return err
			}
			if opts.ParsleyExport != "" {
				if opts.Output == "ndjson" {
					opts.Output = "text"
					if c.Flags().Changed("output") {
						return cmdutil.Usagef("--parsley-export writes text or json")
					}
				}
				if runF != nil {
					return runF(c.Context(), opts)
				}
				return runExport(c.Context(), opts)
			}
			if merge {
				if err := checkMerge(c, opts); err != nil {
					return err
				}
				opts.Merge = args
				if runF != nil {
					return runF(c.Context(), opts)
				}
				return runMerge(c.Context(), opts)
			}
			if c.Flags().Changed("shard") {
				sh, err := replay.ParseShard(shard)
				if err != nil {
					return cmdutil.Usagef("--shard: %w", err)
				}
				if !opts.Tasks.Tasks || opts.Tasks.App != "" {
					return cmdutil.Usagef("--shard splits the tasks of replay --tasks (not --app): add --tasks")
				}
				opts.Shard = &sh
			}
			if err := opts.InputFlags.Check(c.Flags()); err != nil {
				return err
			}
			if opts.Tasks.On() && opts.TUI {
				return cmdutil.Usagef("--tui steps one gate: drop --tasks and --app")
			}
			opts.Undecodable = undecodable.Mode
			opts.ReceiptOnly = !positionAdvance
			if opts.TUI && !opts.IO.OutTTY {
				return cmdutil.Usagef("--tui needs a terminal on stdout")
			}
			if opts.TUI && !cmdutil.TakeScreen(opts.IO, "the replay's text output") {
				opts.TUI = false
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			if opts.TUI {
				return runStepper(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	cmdutil.AddInputFlags(cmd, f, &opts.InputFlags, cmdutil.InputSpec{
		InputUsage: "capture file to replay (- for stdin)",
		ScopeUsage: "channels the simulated node consumes, `CH[,CH...]` (default: every channel in the input)",
		StartUsage: "start positions, `CH=OFFSET[,...]`",
		Interleave: true,
		Tasks:      true, App: true,
	})
	cmdutil.AddUndecodableFlag(cmd, &undecodable)
	cmdutil.AddPositionAdvanceFlag(fs, &positionAdvance)
	fs.BoolVar(&opts.FailOnHeld, "fail-on-held", false, "exit 3 when records are still held at the end")
	fs.StringVar(&shard, "shard", "", "with --tasks, replay only the tasks t with t mod N = K, `K/N` (0 ≤ K < N), and mark the summary as that shard's, for --merge")
	fs.BoolVar(&merge, "merge", false, "merge the -o json summaries of replay --tasks --shard K/N for every K, given as arguments, into the single run's summary")
	fs.StringVar(&opts.ParsleyExport, "parsley-export", "", "replay every process and task of a Parsley test export (EDN, `FILE`) through its history and judge each against Parsley's trace; exit 4 when one diverges")
	fs.BoolVar(&opts.TUI, "tui", false, "step through the replay in the terminal: one receive, to the next delivery or hold, run and pause, jump (? lists the keys)")
	opts.MaxMemory = DefaultMaxMemory
	fs.Var(&opts.MaxMemory, "max-memory", "most memory the interleavings other than file may hold, which keep every record's clock (≈"+strconv.FormatInt(replay.ItemBaseCost, 10)+" bytes a record plus its headers), e.g. 512MiB or 4GiB")
	cmdutil.AddOutputFlag(cmd, out, "text", "json", "ndjson")
	return cmd
}

// Run replays the capture or broker range and writes the output.
func Run(ctx context.Context, opts *Options) error {
	if err := opts.InputFlags.AttachGroup(ctx, opts.Dial, opts.IO.ErrOut); err != nil {
		return cmdutil.WhenInterrupted(err, interruptedBefore)
	}
	if opts.Shard != nil && opts.Tasks.App != "" {
		return cmdutil.Usagef("--shard: --from-group %s is a Parsley process, read as --app, which --shard does not split", opts.Tasks.App)
	}
	if opts.Tasks.On() {
		return runTasks(ctx, opts)
	}
	in, err := opts.OpenInput(ctx, &opts.InputFlags, input.Read{LogFacts: true}) // the summary classifies holds with the facts
	if err != nil {
		return cmdutil.WhenInterrupted(err, interruptedBefore)
	}
	defer in.Close()
	name, channels := in.Name, in.Channels
	cfg, err := gateConfig(opts, in)
	if err != nil {
		return err
	}
	r, err := engine.New(cfg)
	if err != nil {
		return err
	}
	var src engine.Source = in
	if !in.Interleaved {
		if src, err = reorder(in, opts); err != nil {
			return cmdutil.WhenInterrupted(fmt.Errorf("%s: %w", name, err), interruptedBefore)
		}
	}

	w := newWriter(opts.IO.Out, opts.Final, opts.Output, opts.Names)
	during := inspect.InputFacts(r, channels, false)
	w.classify = func(b gate.Blocker) inspect.Cause { c, _ := during.Classify(r.Gate(), b); return c }
	var progress func(engine.Progress)
	if opts.IO.ErrTTY {
		progress = progressLine(opts.IO.ErrOut)
	}
	runErr := engine.Run(ctx, src, r, w.event, progress, opts.Now)

	sum := inspect.SummaryOf(r, inspect.InputFacts(r, channels, runErr == nil))
	sum.Interleave = opts.Interleave.String()
	sum.SetFailure(runErr)
	interrupted := errors.Is(runErr, engine.ErrInterrupted)
	sum.Interrupted = interrupted
	_, failedClosed := engine.FailureOf(runErr)
	// What was replayed so far is reported in every case but bad input.
	report := runErr == nil || interrupted || failedClosed
	if err := w.finish(report, func() error { return w.summary(sum) }); err != nil {
		return err
	}
	switch {
	case interrupted:
		return cmdutil.Interrupted("interrupted after " + render.Count(sum.Received, "record", "records"))
	case runErr != nil:
		return fmt.Errorf("%s: %w", name, runErr)
	case opts.FailOnHeld && sum.Held > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitHeld, Err: fmt.Errorf("%s still held at the end (--fail-on-held)", render.Count(sum.Held, "record", "records"))}
	}
	return nil
}

// DefaultMaxMemory is the default of --max-memory: some 3 million
// records of small clocks.
const DefaultMaxMemory = 1 << 30

// reorder applies --interleave within --max-memory, saying what to do
// when the input is too large for it.
func reorder(src engine.Source, opts *Options) (engine.Source, error) {
	out, err := replay.Reorder(src, opts.Interleave, opts.Names, int64(opts.MaxMemory))
	if _, ok := errors.AsType[*replay.MemoryLimitError](err); ok {
		err = fmt.Errorf("%w (--max-memory): raise it, or use --interleave file, which streams", err)
	}
	return out, err
}

// interruptedBefore is the account of an interruption while the input
// was still being read, before any record reached the gate.
const interruptedBefore = "interrupted while reading the input, before the replay began"

// gateConfig resolves --scope and --start over the channels of the input
// and returns the gate's configuration: for Run and for the stepper alike.
func gateConfig(opts *Options, in *input.Source) (engine.Config, error) {
	scope, err := opts.InputFlags.ResolveScope(in)
	if err != nil {
		return engine.Config{}, err
	}
	return engine.Config{
		Scope:         scope.Channels,
		Starts:        scope.Starts,
		Undecodable:   opts.Undecodable,
		ReceiptOnly:   opts.ReceiptOnly,
		MaxHeaderSize: opts.MaxHeaderSize,
		Names:         opts.Names,
	}, nil
}

// progressLine returns a progress reporter that rewrites one stderr line.
func progressLine(w io.Writer) func(engine.Progress) {
	shown := false
	return func(p engine.Progress) {
		if p.Finished {
			if shown {
				fmt.Fprint(w, "\r\x1b[K")
			}
			return
		}
		shown = true
		rate := float64(p.Items) / p.Elapsed.Seconds()
		fmt.Fprintf(w, "\r\x1b[Kreplaying: %s read, %.0f records/s, %d held", render.Count(p.Items, "record", "records"), rate, p.Held)
	}
}
