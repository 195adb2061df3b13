package holds

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/view"
)

// runProcess is holds --app: the process read by the one reader
// (process.ReadAttach), each task read on from the committed offsets to the
// log end (Attach.ReadOn) and diagnosed as state, processes and the
// exporter diagnose it (inspect.DiagnoseTask): one report of what the
// process holds, why, and what it does next — a task that fails closed
// included.
func runProcess(ctx context.Context, opts *Options) error {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	now := opts.Now()
	h, err := process.ReadHolds(ctx, cl, opts.Tasks.App, process.HoldsOptions{
		ReadOn:  process.ReadOnOptions{Undecodable: opts.Undecodable, ReceiptOnly: opts.ReceiptOnly, MaxHeaderSize: opts.MaxHeaderSize},
		TxnWait: opts.Tasks.TxnWait, Fleet: opts.Fleet, RetentionWarn: opts.RetentionWarn, Names: opts.Names, Now: now})
	if err != nil {
		return cmdutil.WhenInterrupted(err, noReport)
	}
	for _, w := range h.Warnings {
		fmt.Fprintln(opts.IO.ErrOut, "warning: "+w)
	}
	if h.RootErr != nil {
		// The holds stand without it: said, not fatal.
		fmt.Fprintf(opts.IO.ErrOut, "warning: no upstream root: %v\n", h.RootErr)
	}
	p, up := h.Process, render.UpstreamOf(h.Root)
	var reps []render.TaskHolds
	for _, t := range h.Tasks {
		reps = append(reps, render.TaskHolds{Task: t.Task, Scope: t.Scope, Rep: t.Diagnosis.Report.OlderThan(opts.OlderThan),
			Failed: t.Diagnosis.FailedClosed(), BehindFrom: t.BehindFrom, Ready: t.Ready})
	}
	// The next start's refusals, as state says them: a process whose
	// every topic was deleted holds nothing to read on, and this is why.
	rs := p.NextStart(nil)
	if err := opts.Final.Do(func() error {
		if len(rs) > 0 && opts.Output != "json" {
			if _, err := io.WriteString(opts.IO.Out, render.NextStartOf(p, rs).Text()); err != nil {
				return err
			}
		}
		return writeTasks(opts.IO.Out, opts.Output, reps, up, now, opts)
	}); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	for _, r := range reps {
		if len(r.Rep.Heads) > 0 || r.Failed != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitFound}
		}
	}
	return nil
}

// runTasks is holds with one gate per task (--tasks).
func runTasks(ctx context.Context, opts *Options) error {
	cfg := engine.Config{Undecodable: opts.Undecodable, ReceiptOnly: opts.ReceiptOnly, MaxHeaderSize: opts.MaxHeaderSize, Names: opts.Names}
	src, scope, err := openScoped(ctx, opts, input.Read{LogFacts: true, Gate: cfg})
	if err != nil {
		return err
	}
	defer src.Close()
	name, channels, att := src.Name, src.Channels, src.Attached
	var ts *engine.Tasks
	if att != nil {
		ts = att.Tasks
	} else {
		cfg.Scope, cfg.Starts = scope.Channels, scope.Starts
		if ts, err = engine.NewTasks(cfg, nil); err != nil {
			return err
		}
	}
	tr := view.NewEvents(0)
	observe := func(_ *engine.Task, ev *engine.Event) error {
		var at time.Time
		if t, ok := record.TimeOf(ev.Timestamp); ev.HasTimestamp && ok { // none past 2262: no age from it
			at = t
		}
		tr.Observe(ev, at)
		return nil
	}
	if err := engine.RunTasks(ctx, src, ts, observe); err != nil {
		return cmdutil.WhenInterrupted(fmt.Errorf("%s: %w", name, err), noReport)
	}
	if att != nil {
		att.Warn(opts.IO.ErrOut)
	}
	now := opts.Now()
	var reps []render.TaskHolds
	for i, task := range ts.Tasks {
		stamp := tr.Timestamp
		if att != nil {
			// A seeded record's timestamp is in the state, not the read.
			seed := att.Seeds[i]
			stamp = func(ch clock.Channel, off int64) (time.Time, bool) {
				if t, ok := tr.Timestamp(ch, off); ok {
					return t, true
				}
				return inspect.HeldTimestamp(seed.State, ch, off)
			}
		}
		rep := inspect.Diagnose(inspect.Input{
			Gate:          task.Gate(),
			Names:         opts.Names,
			Facts:         inspect.InputFacts(task.Replayer, channels, true),
			Timestamp:     stamp,
			Now:           now,
			RetentionWarn: opts.RetentionWarn,
		}).OlderThan(opts.OlderThan)
		out := render.TaskHolds{Task: task.Task, Rep: rep}
		for _, ch := range task.Gate().Scope() {
			out.Scope = append(out.Scope, opts.Names.Channel(ch))
		}
		slices.Sort(out.Scope)
		reps = append(reps, out)
	}
	if err := opts.Final.Do(func() error { return writeTasks(opts.IO.Out, opts.Output, reps, nil, now, opts) }); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	for _, r := range reps {
		if len(r.Rep.Heads) > 0 {
			return &cmdutil.ExitError{Code: cmdutil.ExitFound}
		}
	}
	return nil
}

// writeTasks writes the per-task reports: in text a block per task, in
// JSON one report whose roots and heads say their task.
func writeTasks(w io.Writer, format string, reps []render.TaskHolds, up *render.Upstream, now time.Time, opts *Options) error {
	if format == "json" {
		return writeJSON(w, render.HoldsTasks(opts.Tasks.App, reps, up, now, opts.Names, opts.holdsOptions()))
	}
	var b strings.Builder
	b.WriteString(up.Text())
	for i, r := range reps {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "task %d (%s): ", r.Task, strings.Join(escape.Deep(r.Scope), ", "))
		if r.BehindFrom != nil {
			// SPEC §6: a read an open transaction stopped says so — what
			// follows is the state as of there, not "nothing held" for sure.
			fmt.Fprintf(&b, "PARTIAL: the changelog's read stopped at %d behind an open transaction; this is the state as of there, entries committed after it are not counted.\n  ", *r.BehindFrom)
		}
		if f := r.Failed; f != nil {
			at := opts.Names.Channel(f.Channel)
			fmt.Fprintf(&b, "FAILED CLOSED at %s@%d (%s): it reads nothing past it.\n  next step: %s\n", escape.Text(at), f.Offset, f.Code, escape.Text(inspect.FailedClosedStep(at, f)))
			if len(r.Rep.Heads) == 0 {
				continue
			}
		}
		if len(r.Ready) > 0 {
			fmt.Fprintf(&b, "ready: %s — nothing blocks these any more; delivered as soon as the task runs.\n  ", strings.Join(escape.Deep(r.Ready), ", "))
		}
		b.WriteString(reportText(r.Rep, opts))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
