// Package input opens what causalctl's commands read — a capture file, a
// broker range, a live follow, a Parsley process's ordering state, a
// process attached from its committed offsets — as one Source, over a
// dialer and the terminal's streams it is given. The command line's flags
// that name an input are parsed elsewhere (internal/cli/cmdutil) into a
// Spec; nothing here knows a flag set.
package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
)

// Env is what opening an input needs of the program: a dialer of the
// cluster (the connection settings resolved), the streams (stderr for
// warnings, stdin for a capture named "-") and the clock that --offsets
// @TIME is read against (nil: time.Now).
type Env struct {
	Dial func(context.Context) (*kafka.Client, error)
	IO   *iostreams.IOStreams
	Now  func() time.Time
}

func (e Env) errOut() io.Writer {
	if e.IO == nil {
		return nil
	}
	return e.IO.ErrOut
}

func (e Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Spec names an input and how it is read: what the command line's input
// flags say (cmdutil.AddInputFlags fills one).
type Spec struct {
	// Input is --input/-f: a capture file, "-" for stdin.
	Input string
	// Range is --topic, --offsets, --from-group and --allow-gaps.
	Range Selection
	// Scope and Start are --scope and --start, resolved over the input's
	// channels by ResolveScope.
	Scope []string
	Start []string
	// Interleave is --interleave (default: file for a capture, timestamp
	// for a broker range).
	Interleave replay.Interleave
	// MaxHeaderSize and MaxLineSize are --max-header-size and
	// --max-line-size.
	MaxHeaderSize int
	MaxLineSize   int
	// Names are the command's topic names: --topic-id, and whatever the
	// input names as it is opened.
	Names *clock.Names
	// Tasks are --tasks and --app.
	Tasks Tasks
}

// Selection names a broker range: --topic (repeatable), --offsets and
// --from-group, the way rpk and kcl name them.
type Selection struct {
	Topics    []string
	Offsets   string
	FromGroup string
	// AllowGaps reads on past offsets deleted before they were read
	// (kafka.AllowGaps), recording each gap, instead of failing.
	AllowGaps bool
}

// Given reports whether a broker range was asked for.
func (r *Selection) Given() bool { return len(r.Topics) > 0 }

// Tasks are --tasks and --app, the per-task gates of a Parsley process
// (docs/tasks.md): one gate per task, task p receiving partition p of
// every topic in scope; --app takes the topics, tasks and scope from a
// process and seeds each task's gate from its ordering state.
type Tasks struct {
	Tasks bool
	// App is --app ("" when not given): it implies Tasks.
	App     string
	TxnWait time.Duration
	// OffsetsOnly is --offsets-only: --from-group on a Parsley process
	// reads from the group's committed offsets alone, not as --app.
	OffsetsOnly bool
}

// On reports whether per-task gates were asked for.
func (t *Tasks) On() bool { return t.Tasks || t.App != "" }

// SpecError is a value of a Spec that cannot be read — a bad --topic,
// --offsets, --start or --scope, a capture holding several changelogs
// with none chosen: the command line's mistake, not the cluster's or the
// file's (the CLI exits 2).
type SpecError struct{ Err error }

func (e *SpecError) Error() string { return e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

func specErrorf(format string, args ...any) error {
	return &SpecError{Err: fmt.Errorf(format, args...)}
}

// Read is what a command asks of its input beyond its Spec.
type Read struct {
	// LogFacts reads each broker channel's log facts with the range
	// (kafka.WithLogFacts): the diagnosis classifies holds with them.
	LogFacts bool
	// Reread is for a command that reads its input more than once, from
	// its first line each time, through Source.Capture: a broker range is
	// spooled to a temporary capture first (removed by Close), and no
	// stream of items is opened (Source.Next is not to be called).
	Reread bool
	// Observe sees every item of a capture's first reading (see the
	// option Observe): a command that needs that reading too.
	Observe func(*record.Item) error
	// ObserveClocks makes that reading decode headers too (the option
	// ObserveClocks): Observe then sees every record's headers.
	ObserveClocks bool
	// OnRange is called once a broker range is open, before any of it is
	// read: check learns the cluster's high watermarks there.
	OnRange func(context.Context, *Range) error
	// Partitions, when set, makes a broker range fetch only the
	// partitions it keeps (kafka.OnlyPartitions): replay --shard's tasks.
	Partitions func(int32) bool
	// Gate is the configuration of the tasks' gates that --app seeds
	// (scope and starts come from the process).
	Gate engine.Config
}

// Source is an open input, a engine.Source of its items.
type Source struct {
	// Name names the input in messages: the capture's file name,
	// "stdin", "broker range", or the process's application id.
	Name string
	// Channels are the input's channels: a capture's, sorted; a broker
	// range's or a process's, in selection order.
	Channels []clock.Channel
	// Names are InputFlags.Names with every topic name the input told
	// (a capture's lines, the cluster's topics) added.
	Names *clock.Names
	// Interleaved reports that the items already come in the order
	// InputFlags.Interleave asks (a broker range merged by timestamp as it
	// streams, or a process read in its range's order): the command does
	// not reorder them.
	Interleaved bool
	// Range is the broker range being read, nil for a capture, a spooled
	// range or a process.
	Range *Range
	// Capture is the capture read, or the spool of a broker range
	// (Reread): Capture.Open reads it again from its first line. Nil for
	// a range read as it streams and for a process.
	Capture *Capture
	// Attached is the process of --app, its tasks seeded; nil otherwise.
	Attached *Attached

	items   engine.Source
	closers []func()
}

// Next yields the input's next item, io.EOF at its end, and
// engine.ErrInterrupted once the context OpenInput was given is done.
func (s *Source) Next() (*record.Item, error) {
	if s.items == nil {
		return nil, errors.New("the input was opened to be read again (Read.Reread): read it through its Capture")
	}
	return s.items.Next()
}

// Close closes what the input holds open (the reader, the broker client)
// and removes its spools.
func (s *Source) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Open opens the input spec names — the process of --app, the broker
// range of --topic, or the capture of --input — as read asks, over env,
// and returns it with its name and channels; the caller closes it. A capture is read
// once first, channels only, for its channels and names; a range and a
// process know their channels when they open. Errors are the open's:
// usage errors for bad flag values, an interruption (IsInterruption) when
// ctx ends while the input is still being opened.
func Open(ctx context.Context, env Env, in *Spec, read Read) (*Source, error) {
	if in.Names == nil {
		in.Names = &clock.Names{}
	}
	var src *Source
	var err error
	switch {
	case in.Tasks.App != "":
		src, err = openProcess(ctx, env, in, read)
	case in.Range.Given():
		src, err = openRange(ctx, env, in, read)
	default:
		src, err = openCapture(ctx, in, read, func(opts ...CaptureOption) (*Capture, error) {
			return OpenCapture(ctx, env.IO, in.Input, in.MaxLineSize, in.Names, opts...)
		})
	}
	if err != nil {
		return nil, err
	}
	src.Names = in.Names
	return src, nil
}

// openCapture opens the capture that open opens (OpenCapture, OpenSpool):
// its first reading now, its stream (parsed on a goroutine of its own)
// unless read.Reread.
func openCapture(ctx context.Context, in *Spec, read Read, open func(...CaptureOption) (*Capture, error)) (*Source, error) {
	var opts []CaptureOption
	if read.Observe != nil {
		opts = append(opts, Observe(read.Observe))
	}
	if read.ObserveClocks {
		opts = append(opts, ObserveClocks())
	}
	c, err := open(opts...)
	if err != nil {
		return nil, err
	}
	s := &Source{Name: c.Name, Channels: c.Channels, Capture: c, closers: []func(){func() { c.Close() }}}
	if read.Reread {
		return s, nil
	}
	rd, err := c.Open(capture.SkipPayloads())
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	// Parse on one core, work on the other.
	pf := replay.Prefetch(engine.WithContext(ctx, rd))
	s.items, s.closers = c.Verified(pf), append(s.closers, func() { pf.Close() })
	return s, nil
}

// openRange opens the broker range of in: read as it streams, or spooled
// to a temporary capture first (read.Reread).
func openRange(ctx context.Context, env Env, in *Spec, read Read) (*Source, error) {
	br := BrokerRead{Selection: in.Range, Start: in.Start, Names: in.Names}
	if read.LogFacts {
		br.Options = append(br.Options, kafka.WithLogFacts())
	}
	if read.Partitions != nil {
		br.Options = append(br.Options, kafka.OnlyPartitions(read.Partitions))
	}
	rng, err := OpenRange(ctx, env, br)
	if err != nil {
		return nil, err
	}
	if read.OnRange != nil {
		if err := read.OnRange(ctx, rng); err != nil {
			rng.Close()
			return nil, err
		}
	}
	const name = "broker range"
	if read.Reread {
		// Read the cluster once: a second reading, or a jump back,
		// re-reads a file.
		spool, err := rng.Spool()
		rng.Close()
		if err != nil {
			return nil, err
		}
		// The capture closes the spool, on an error too.
		return openCapture(ctx, in, read, func(opts ...CaptureOption) (*Capture, error) {
			return OpenSpool(ctx, env.IO, name, spool, in.MaxLineSize, in.Names, opts...)
		})
	}
	s := &Source{Name: name, Channels: rng.Channels, Range: rng, closers: []func(){rng.Close}}
	var items engine.Source = rng
	if in.Interleave.Mode == replay.Timestamp {
		// Merge as it streams, reading each channel as the merge needs
		// it: a range's channels are known when it opens.
		items, s.Interleaved = replay.MergeByTimestamp(rng, len(rng.Channels)), true
	}
	s.items = engine.WithContext(ctx, items)
	return s, nil
}

// openProcess opens the process of --app (OpenAttach): read, its tasks
// seeded with read.Gate, and its range from the committed offsets to the
// log end open; its warnings are printed on stderr.
func openProcess(ctx context.Context, env Env, in *Spec, read Read) (*Source, error) {
	if read.Reread {
		return nil, errors.New("a Parsley process (--app) is read once: it cannot be read again")
	}
	cfg := read.Gate
	if cfg.Names == nil {
		cfg.Names = in.Names
	}
	att, err := OpenAttach(ctx, env.Dial, in.Tasks, cfg, env.errOut())
	if err != nil {
		return nil, err
	}
	return &Source{
		Name:        in.Tasks.App,
		Channels:    att.Range.Channels,
		Interleaved: true, // in the range's order: the process reads no other
		Attached:    att,
		items:       engine.WithContext(ctx, att.Range),
		closers:     []func(){att.Close},
	}, nil
}

// ResolveScope resolves --scope and --start over the channels of src
// (ResolveScope) and refuses an empty scope: an input with no channel
// holds nothing to replay.
func (in *Spec) ResolveScope(src *Source) (Scope, error) {
	scope, err := ResolveScope(in.Scope, in.Start, src.Channels, in.Names)
	if err != nil {
		return Scope{}, err
	}
	if len(scope.Channels) == 0 {
		return Scope{}, fmt.Errorf("%s holds no records or positions: nothing to replay", src.Name)
	}
	return scope, nil
}
