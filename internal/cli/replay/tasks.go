package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/replay"
)

// runTasks is replay with one gate per task (--tasks), seeded from a
// Parsley process's ordering state with --app.
func runTasks(ctx context.Context, opts *Options) error {
	read := input.Read{LogFacts: true, Gate: engine.Config{Undecodable: opts.Undecodable, ReceiptOnly: opts.ReceiptOnly, MaxHeaderSize: opts.MaxHeaderSize, Names: opts.Names}}
	if opts.Shard != nil && opts.Interleave.Mode != replay.Random {
		read.Partitions = opts.Shard.Has // a broker range fetches the shard's partitions only
	}
	in, err := opts.OpenInput(ctx, &opts.InputFlags, read)
	if err != nil {
		return cmdutil.WhenInterrupted(err, interruptedBefore)
	}
	defer in.Close()
	name, channels, att := in.Name, in.Channels, in.Attached
	var src engine.Source = in
	var ts *engine.Tasks
	var sharded *replay.Sharded // the records left to other shards
	if att != nil {
		ts = att.Tasks
	} else if opts.Shard != nil && len(in.Channels) == 0 {
		// A broker range of none of the shard's partitions (more shards
		// than partitions): nothing of its to replay, an empty summary.
		ts = &engine.Tasks{}
	} else {
		cfg, err := gateConfig(opts, in)
		if err != nil {
			return err
		}
		if ts, err = engine.NewTasks(cfg, nil); err != nil {
			return err
		}
		// A shard's items are filtered before an interleaving that holds
		// them all, but random's choices depend on every channel: it is
		// filtered after (replay.ShardSource).
		after := opts.Shard != nil && opts.Interleave.Mode == replay.Random
		if opts.Shard != nil {
			ts.Keep(opts.Shard.Has)
			if !after {
				sharded = replay.ShardSource(src, *opts.Shard)
				src = sharded
			}
		}
		if !in.Interleaved {
			if src, err = reorder(src, opts); err != nil {
				return cmdutil.WhenInterrupted(fmt.Errorf("%s: %w", name, err), interruptedBefore)
			}
		}
		if after {
			sharded = replay.ShardSource(src, *opts.Shard)
			src = sharded
		}
	}

	w := newWriter(opts.IO.Out, opts.Final, opts.Output, opts.Names)
	classify := map[int32]func(gate.Blocker) inspect.Cause{}
	for _, task := range ts.Tasks {
		during := inspect.InputFacts(task.Replayer, channels, false)
		g := task.Gate()
		classify[task.Task] = func(b gate.Blocker) inspect.Cause { c, _ := during.Classify(g, b); return c }
	}
	runErr := engine.RunTasks(ctx, src, ts, func(task *engine.Task, ev *engine.Event) error {
		w.task, w.classify = task.Task, classify[task.Task]
		return w.event(ev)
	})
	if att != nil {
		att.Warn(opts.IO.ErrOut)
	}

	var nums []int32
	var sums []*inspect.Summary
	for _, task := range ts.Tasks {
		sum := inspect.SummaryOf(task.Replayer, inspect.InputFacts(task.Replayer, channels, runErr == nil))
		sum.Interleave = opts.Interleave.String()
		if task.Gate().Failed() != nil { // the task that failed closed
			sum.SetFailure(runErr)
		}
		nums, sums = append(nums, task.Task), append(sums, sum)
	}
	merged := inspect.MergeTasks(nums, sums)
	merged.Skipped = ts.Skipped() // the tasks', and records of no task
	merged.Interleave = opts.Interleave.String()
	if opts.Shard != nil {
		sh := *opts.Shard
		if sharded != nil {
			sh.Unfed = sharded.Unfed()
		}
		merged.Shard = &sh
	}
	interrupted := errors.Is(runErr, engine.ErrInterrupted)
	merged.Interrupted = interrupted
	_, failedClosed := engine.FailureOf(runErr)
	report := runErr == nil || interrupted || failedClosed
	if err := w.finish(report, func() error { return writeTaskSummaries(w, nums, sums, merged) }); err != nil {
		return err
	}
	switch {
	case interrupted:
		return cmdutil.Interrupted("interrupted after " + render.Count(merged.Received, "record", "records"))
	case runErr != nil:
		return fmt.Errorf("%s: %w", name, runErr)
	case opts.FailOnHeld && merged.Held > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitHeld, Err: fmt.Errorf("%s still held at the end (--fail-on-held)", render.Count(merged.Held, "record", "records"))}
	}
	return nil
}

// writeTaskSummaries writes one summary per task in text, the merged one
// (every channel with its task) in JSON.
func writeTaskSummaries(w *writer, nums []int32, sums []*inspect.Summary, merged *inspect.Summary) error {
	w.task = -1
	if w.format != "text" {
		return w.summary(merged)
	}
	for i, s := range sums {
		if i > 0 {
			w.bw.WriteString("\n")
		}
		var scope []string
		for _, c := range s.Channels {
			scope = append(scope, c.Channel)
		}
		fmt.Fprintf(w.bw, "task %d (%s):\n", nums[i], strings.Join(scope, ", "))
		if err := render.Summary(w.bw, "text", s); err != nil {
			return err
		}
	}
	return nil
}
