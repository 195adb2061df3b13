package input

import (
	"context"
	"fmt"
	"io"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/process"
)

// Attached is a process being shadowed: read, its tasks seeded, and the
// range from its committed offsets to the log end open.
type Attached struct {
	*process.Attach
	Range *Range
	Tasks *engine.Tasks
}

// Close closes the range and its client.
func (a *Attached) Close() { a.Range.Close() }

// OpenAttach is --app for a command that reads to the log end: dial, read
// the process (ReadAttach), print its warnings on warn, open the range
// and seed the tasks' gates with cfg's options.
func OpenAttach(ctx context.Context, dial func(context.Context) (*kafka.Client, error), t Tasks, cfg engine.Config, warn io.Writer) (*Attached, error) {
	cl, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	att, err := process.ReadAttach(ctx, cl, t.App, t.TxnWait, cfg.Names)
	if err == nil {
		for _, w := range att.Warnings {
			fmt.Fprintln(warn, "warning: "+w)
		}
	}
	var out *Attached
	if err == nil {
		out = &Attached{Attach: att}
		var rng *kafka.Range
		if rng, err = att.OpenRange(ctx, cl); err == nil {
			out.Range = newRange(ctx, cl, rng, nil) // an attach allows no gaps: none to tell
		}
	}
	if err == nil {
		out.Tasks, err = engine.NewTasks(cfg, att.Tasks)
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

// openAttachFollow follows a's channels live from its starts, with opts (log
// facts, retries), on cl (which the Follow's Close closes).
func openAttachFollow(ctx context.Context, a *process.Attach, cl *kafka.Client, opts ...kafka.ReadOption) (*Follow, error) {
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

// FollowAttach is --app for a command that follows live (watch): dial,
// read the process (ReadAttach), print its warnings on warn, and follow
// its channels from where it resumes.
func FollowAttach(ctx context.Context, dial func(context.Context) (*kafka.Client, error), t Tasks, names *clock.Names, warn io.Writer, opts ...kafka.ReadOption) (*process.Attach, *Follow, error) {
	cl, err := dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	att, err := process.ReadAttach(ctx, cl, t.App, t.TxnWait, names)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	for _, w := range att.Warnings {
		fmt.Fprintln(warn, "warning: "+w)
	}
	fol, err := openAttachFollow(ctx, att, cl, opts...)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return att, fol, nil
}

// AttachGroup makes --from-group GROUP read a Parsley process as --app
// GROUP does, when GROUP is one (its ordering changelog
// GROUP-__parsley.ordering-changelog exists) and --offsets-only was not
// given: its committed offsets move past the records it holds, so a range
// read from them alone shows none of what the process holds. It says so in
// one line on warn; the topics given (--topic) are then the process's.
// Nothing is read when --from-group was not given or --app was.
func (in *Spec) AttachGroup(ctx context.Context, dial func(context.Context) (*kafka.Client, error), warn io.Writer) error {
	group := in.Range.FromGroup
	if group == "" || in.Tasks.App != "" || in.Tasks.OffsetsOnly {
		return nil
	}
	cl, err := dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	topics, err := cl.TopicPartitions(ctx)
	if err != nil {
		return err
	}
	if _, ok := topics[parsley.ChangelogTopic(group)]; !ok {
		return nil
	}
	in.Tasks.App = group
	if in.Tasks.TxnWait <= 0 {
		in.Tasks.TxnWait = kafka.DefaultTxnWait
	}
	fmt.Fprintf(warn, "%s is a Parsley process: reading it as --app %s does (its ordering state, then on from its committed offsets; its topics, not --topic's); --offsets-only reads from the committed offsets alone\n",
		escape.Text(group), escape.Text(group))
	return nil
}
