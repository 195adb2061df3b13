package cmdutil

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/pflag"
)

// TaskFlags are --tasks and --app, the per-task gates of a Parsley
// process (docs/tasks.md): one gate per task, task p receiving partition p
// of every topic in scope; --app takes the topics, tasks and scope from a
// process and seeds each task's gate from its ordering state.
type TaskFlags struct {
	Tasks bool
	// App is --app ("" when not given): it implies Tasks.
	App     string
	TxnWait time.Duration
}

// AddTaskFlags registers --tasks on fs and, when app, --app and
// --txn-wait: the one registration of every command that shadows a
// Parsley process.
func AddTaskFlags(fs *pflag.FlagSet, t *TaskFlags, app bool) {
	fs.BoolVar(&t.Tasks, "tasks", false, "one gate per Parsley task: task p receives partition p of every topic in scope, reported per task")
	if !app {
		return
	}
	fs.StringVar(&t.App, "app", "", "shadow Parsley process `APP`: its topics and tasks, each task's gate seeded from its ordering state and read on from the group's committed offsets (implies --tasks)")
	fs.DurationVar(&t.TxnWait, "txn-wait", kafka.DefaultTxnWait, "with --app, how long to wait for an open transaction in the ordering changelog")
}

// On reports whether per-task gates were asked for.
func (t *TaskFlags) On() bool { return t.Tasks || t.App != "" }

// Check refuses --app with a source of its own (--input, --topic, --scope,
// --start, --from-group, --offsets): the process says what is read and
// from where.
func (t *TaskFlags) Check(fs *pflag.FlagSet) error {
	if t.App == "" {
		if f := fs.Lookup("txn-wait"); f != nil && f.Changed {
			return Usagef("--txn-wait reads a Parsley process's state: give --app too")
		}
		return nil
	}
	if t.TxnWait < 0 {
		return Usagef("--txn-wait must not be negative")
	}
	for _, name := range []string{"input", "topic", "scope", "start", "from-group", "offsets"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return Usagef("--app takes its topics, scope and offsets from the process: drop --%s", name)
		}
	}
	return nil
}

// Attach is a Parsley process read for shadowing: each task's gate state
// from its store, and where each channel is read on from.
type Attach struct {
	Process *inspect.Process
	// Seeds are the tasks' states, by task; Tasks the same for the
	// replayer.
	Seeds []*inspect.TaskSeed
	Tasks []replay.TaskSeed
	// Channels are the channels to read (every task's scope that the
	// cluster has), Starts where each is read from: the group's committed
	// offset, else fed-up-to + 1.
	Channels []clock.Channel
	Starts   map[clock.Channel]int64
	// Fed is each channel's fed-up-to as the state has it.
	Fed map[clock.Channel]int64
	// Warnings say where the committed offsets do not match the state.
	Warnings []string
}

// ReadAttach reads process app (ReadProcess) and seeds its tasks. A
// committed offset ahead of fed-up-to + 1 is a warning: the records
// between were consumed and never fed to the state, and the shadow reads
// on from the committed offset, as the process will. One behind is
// reported once the read shows records missing from the state
// (MissingWarnings).
func ReadAttach(ctx context.Context, cl *kafka.Client, app string, txnWait time.Duration, names *clock.Names) (*Attach, error) {
	if _, err := cl.Topics(ctx); err != nil {
		return nil, err
	}
	if err := mergeNames(names, cl.Names()); err != nil {
		return nil, err
	}
	p, err := ReadProcess(ctx, cl, app, "", txnWait, names)
	if err != nil {
		return nil, err
	}
	a := &Attach{Process: p, Starts: map[clock.Channel]int64{}, Fed: map[clock.Channel]int64{}}
	for _, part := range p.Changelog.Partitions() {
		seed, err := inspect.SeedTask(p, part)
		if err != nil {
			return nil, err
		}
		a.Seeds = append(a.Seeds, seed)
		// A task's gate holds partition part only (SPEC §6); a store
		// naming another partition's channel is not this task's scope.
		var state = seed.Channels[:0:0]
		for _, cs := range seed.Channels {
			if cs.Channel.Partition == part {
				state = append(state, cs)
			}
		}
		a.Tasks = append(a.Tasks, replay.TaskSeed{Task: part, State: state})
		for _, cs := range state {
			ch := cs.Channel
			a.Fed[ch] = cs.Fed
			name, ok := p.Names.Name(ch.Topic)
			if n, exists := p.Counts[name]; !ok || !exists || p.IDs[name] != ch.Topic || ch.Partition >= n {
				continue // not in the cluster (deleted): seeded, never read
			}
			a.Channels = append(a.Channels, ch)
			start := cs.Fed + 1
			if off, ok := p.Committed[ch]; ok {
				if off > start {
					a.Warnings = append(a.Warnings, fmt.Sprintf("task %d: %s: committed offset %d is ahead of fed-up-to %s + 1: offsets %d…%d were consumed and never fed to the state; reading on from %d, as the process will",
						part, p.Names.Channel(ch), off, fedText(cs.Fed), start, off-1, off))
				}
				start = off
			}
			a.Starts[ch] = max(start, 0)
		}
	}
	if len(a.Tasks) == 0 {
		return nil, fmt.Errorf("%s: the changelog %s has no partition: no task to shadow", app, p.Changelog.Topic)
	}
	return a, nil
}

func fedText(fed int64) string {
	if fed < 0 {
		return "none"
	}
	return fmt.Sprint(fed)
}

// Sels are the topic selections that read a's channels.
func (a *Attach) Sels() []kafka.TopicSel {
	sels := make([]kafka.TopicSel, 0, len(a.Channels))
	for _, ch := range a.Channels {
		name, _ := a.Process.Names.Name(ch.Topic)
		sels = append(sels, kafka.TopicSel{Topic: name, Partition: ch.Partition})
	}
	return sels
}

// OpenRange opens the range from a's starts to the log end, with log
// facts, on cl (which the Range's Close closes).
func (a *Attach) OpenRange(ctx context.Context, cl *kafka.Client) (*Range, error) {
	spec := kafka.OffsetSpec{Start: kafka.Bound{Kind: kafka.BoundLogStart}, End: kafka.Bound{Kind: kafka.BoundLogEnd}}
	rng, err := cl.OpenRange(ctx, a.Sels(), spec, kafka.WithStarts(a.Starts), kafka.WithLogFacts())
	if err != nil {
		return nil, err
	}
	return newRange(ctx, cl, rng, nil), nil // an attach allows no gaps: none to tell
}

// MissingWarnings says, per channel, which records the read found below
// fed-up-to that the state should hold and does not: the committed
// offset was behind fed-up-to + 1 and the state lost them. They were not
// fed.
func (a *Attach) MissingWarnings(ts *replay.Tasks) []string {
	var out []string
	for _, task := range ts.Tasks {
		by := map[clock.Channel][]int64{}
		var order []clock.Channel
		for _, m := range task.Missing() {
			if _, ok := by[m.Channel]; !ok {
				order = append(order, m.Channel)
			}
			by[m.Channel] = append(by[m.Channel], m.Offset)
		}
		for _, ch := range order {
			offs := by[ch]
			list := make([]string, 0, min(len(offs), 5))
			for _, o := range offs[:min(len(offs), 5)] {
				list = append(list, fmt.Sprint(o))
			}
			if len(offs) > 5 {
				list = append(list, "…")
			}
			out = append(out, fmt.Sprintf("task %d: %s: committed offset %d is behind fed-up-to %d + 1 and the state lacks %d %s read below it (%s): not fed",
				task.Task, a.Process.Names.Channel(ch), a.Starts[ch], a.Fed[ch], len(offs), plural(len(offs), "record", "records"), strings.Join(list, ", ")))
		}
	}
	slices.Sort(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Attached is a process being shadowed: read, its tasks seeded, and the
// range from its committed offsets to the log end open.
type Attached struct {
	*Attach
	Range *Range
	Tasks *replay.Tasks
}

// Close closes the range and its client.
func (a *Attached) Close() { a.Range.Close() }

// OpenAttach is --app for a command that reads to the log end: dial, read
// the process (ReadAttach), print its warnings on warn, open the range
// and seed the tasks' gates with cfg's options.
func OpenAttach(ctx context.Context, dial func(context.Context) (*kafka.Client, error), t TaskFlags, cfg replay.Config, warn io.Writer) (*Attached, error) {
	cl, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	att, err := ReadAttach(ctx, cl, t.App, t.TxnWait, cfg.Names)
	if err == nil {
		for _, w := range att.Warnings {
			fmt.Fprintln(warn, "warning: "+w)
		}
	}
	var out *Attached
	if err == nil {
		out = &Attached{Attach: att}
		out.Range, err = att.OpenRange(ctx, cl)
	}
	if err == nil {
		out.Tasks, err = replay.NewTasks(cfg, att.Tasks)
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	return out, nil
}

// Warn prints the warnings of the read (MissingWarnings) on w.
func (a *Attached) Warn(w io.Writer) {
	for _, m := range a.MissingWarnings(a.Tasks) {
		fmt.Fprintln(w, "warning: "+m)
	}
}

// OpenFollow follows a's channels live from its starts, with opts (log
// facts, retries), on cl (which the Follow's Close closes).
func (a *Attach) OpenFollow(ctx context.Context, cl *kafka.Client, opts ...kafka.ReadOption) (*Follow, error) {
	spec := kafka.OffsetSpec{Start: kafka.Bound{Kind: kafka.BoundLogStart}, End: kafka.Bound{Kind: kafka.BoundLogEnd}}
	fol, err := cl.Follow(ctx, a.Sels(), spec, append(opts, kafka.WithStarts(a.Starts))...)
	if err != nil {
		return nil, err
	}
	out := &Follow{Client: cl, Follower: fol}
	for _, pc := range fol.Channels() {
		out.Channels = append(out.Channels, pc.Channel())
	}
	return out, nil
}

// SeedWritten returns a seeded held record's timestamp, from the store of
// its task.
func (a *Attach) SeedWritten(ch clock.Channel, offset int64) (time.Time, bool) {
	for _, s := range a.Seeds {
		if s.State != nil && s.State.Task == ch.Partition {
			return inspect.HeldTimestamp(s.State, ch, offset)
		}
	}
	return time.Time{}, false
}

// FollowAttach is --app for a command that follows live (watch): dial,
// read the process (ReadAttach), print its warnings on warn, and follow
// its channels from where it resumes.
func FollowAttach(ctx context.Context, dial func(context.Context) (*kafka.Client, error), t TaskFlags, names *clock.Names, warn io.Writer, opts ...kafka.ReadOption) (*Attach, *Follow, error) {
	cl, err := dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	att, err := ReadAttach(ctx, cl, t.App, t.TxnWait, names)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	for _, w := range att.Warnings {
		fmt.Fprintln(warn, "warning: "+w)
	}
	fol, err := att.OpenFollow(ctx, cl, opts...)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return att, fol, nil
}
