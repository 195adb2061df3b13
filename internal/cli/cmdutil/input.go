package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file is the one input pipeline of the commands that read records:
// AddInputFlags registers the flags that name the input, InputFlags.Check
// refuses the combinations that mean nothing, and Factory.OpenInput opens
// whichever kind the flags name — a capture (--input), a broker range
// (--topic …) or a Parsley process (--app) — as one Source. A command
// never opens a capture, a range or a process itself.

// InputFlags are the flags that name a command's input and how it is read,
// filled by AddInputFlags. A command embeds them in its Options.
type InputFlags struct {
	// Input is --input/-f: a capture file, "-" for stdin.
	Input string
	// Range is --topic, --offsets, --from-group and --allow-gaps.
	Range RangeFlags
	// Scope and Start are --scope and --start, resolved over the input's
	// channels by ResolveScope.
	Scope []string
	Start []string
	// Interleave is --interleave, parsed by Check (default: file for a
	// capture, timestamp for a broker range).
	Interleave replay.Interleave
	// MaxHeaderSize and MaxLineSize are --max-header-size and
	// --max-line-size.
	MaxHeaderSize int
	MaxLineSize   int
	// Names are the command's topic names: --topic-id, and whatever the
	// input names as it is opened.
	Names *clock.Names
	// Tasks are --tasks and --app.
	Tasks TaskFlags

	spec       InputSpec
	interleave string
}

// InputSpec says which of the input flags a command takes, and how its
// help describes them. The broker range is every such command's; the
// capture, the sizes and --topic-id are too unless left out.
type InputSpec struct {
	// NoCapture leaves --input out: the command reads the cluster only
	// (capture, whose -f is its output; watch, which follows it live).
	NoCapture bool
	// NoSizes leaves --max-header-size and --max-line-size out, and
	// NoTopicID --topic-id: the command reads no clock by those limits
	// (capture copies headers as they are; watch reads clocks with the
	// default limit) or names no topic UUID (capture).
	NoSizes, NoTopicID bool
	// InputUsage is the usage of --input.
	InputUsage string
	// ScopeUsage and StartUsage are the usages of --scope and --start;
	// "" leaves the flag out.
	ScopeUsage string
	StartUsage string
	// Interleave registers --interleave.
	Interleave bool
	// Tasks registers --tasks, and App --app and --txn-wait with it.
	Tasks, App bool
	// Optional: the command reads something else when no input is given
	// (decode's single value), so Check asks for none.
	Optional bool
}

// AddInputFlags registers the input flags spec names on cmd, filling in,
// each with its completion: the one registration of every command that
// reads records.
func AddInputFlags(cmd *cobra.Command, f *Factory, in *InputFlags, spec InputSpec) {
	in.spec = spec
	fs := cmd.Flags()
	if !spec.NoCapture {
		fs.StringVarP(&in.Input, "input", "f", "", spec.InputUsage)
	}
	AddRangeFlags(cmd, f, &in.Range)
	if spec.ScopeUsage != "" {
		AddScopeFlag(cmd, f, &in.Scope, spec.ScopeUsage)
	}
	if spec.StartUsage != "" {
		AddStartFlag(cmd, f, &in.Start, spec.StartUsage)
	}
	if spec.Interleave {
		fs.StringVar(&in.interleave, "interleave", "file", "receive order across channels: file, timestamp, channel, round-robin or random[:SEED] (default: file for a capture, timestamp for a broker range)")
		fs.Lookup("interleave").DefValue = "" // the usage says both defaults
		CompleteFlagValues(cmd, "interleave", interleaves()...)
	}
	if !spec.NoSizes {
		AddSizeFlags(fs, &in.MaxHeaderSize, &in.MaxLineSize)
	}
	names := &NamesFlag{Names: &clock.Names{}}
	if !spec.NoTopicID {
		AddTopicIDFlag(fs, names)
	}
	in.Names = names.Names
	if spec.Tasks {
		AddTaskFlags(fs, &in.Tasks, spec.App)
	}
}

// interleaves lists the --interleave modes by the names
// replay.ParseInterleave reads, for their completion.
func interleaves() []string {
	var out []string
	for m := replay.File; m <= replay.Random; m++ {
		name, _, _ := strings.Cut(replay.Interleave{Mode: m}.String(), ":")
		out = append(out, name)
	}
	return out
}

// Check refuses what the input flags cannot mean together (usage errors):
// --app with a source of its own, more or less than one source (none is
// allowed when the input is Optional), range flags without --topic; and it
// parses --interleave, whose default depends on the source.
func (in *InputFlags) Check(fs *pflag.FlagSet) error {
	if err := in.Tasks.Check(fs); err != nil {
		return err
	}
	if in.Tasks.App == "" {
		check := func() error { return in.Range.CheckSource(fs, in.Input) }
		if in.spec.Optional {
			check = func() error { return in.Range.Check(fs) }
		}
		if err := check(); err != nil {
			return err
		}
	}
	if in.spec.Interleave {
		text := in.interleave
		if !fs.Changed("interleave") && in.Range.Given() {
			text = "timestamp"
		}
		il, err := replay.ParseInterleave(text)
		if err != nil {
			return Usagef("--interleave: %v", err)
		}
		in.Interleave = il
	}
	return nil
}

// InputRead is what a command asks of its input beyond its flags.
type InputRead struct {
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
	Gate replay.Config
}

// Source is an open input, a replay.Source of its items.
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

	items   replay.Source
	closers []func()
}

// Next yields the input's next item, io.EOF at its end, and
// replay.ErrInterrupted once the context OpenInput was given is done.
func (s *Source) Next() (*record.Item, error) {
	if s.items == nil {
		return nil, errors.New("the input was opened to be read again (InputRead.Reread): read it through its Capture")
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

// OpenInput opens the input in names — the process of --app, the broker
// range of --topic, or the capture of --input — as read asks, and returns
// it with its name and channels; the caller closes it. A capture is read
// once first, channels only, for its channels and names; a range and a
// process know their channels when they open. Errors are the open's:
// usage errors for bad flag values, an interruption (IsInterruption) when
// ctx ends while the input is still being opened.
func (f *Factory) OpenInput(ctx context.Context, in *InputFlags, read InputRead) (*Source, error) {
	if in.Names == nil {
		in.Names = &clock.Names{}
	}
	var src *Source
	var err error
	switch {
	case in.Tasks.App != "":
		src, err = f.openProcess(ctx, in, read)
	case in.Range.Given():
		src, err = f.openRange(ctx, in, read)
	default:
		src, err = f.openCapture(ctx, in, read, func(opts ...CaptureOption) (*Capture, error) {
			return OpenCapture(ctx, f.IOStreams, in.Input, in.MaxLineSize, in.Names, opts...)
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
func (f *Factory) openCapture(ctx context.Context, in *InputFlags, read InputRead, open func(...CaptureOption) (*Capture, error)) (*Source, error) {
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
	pf := replay.Prefetch(replay.WithContext(ctx, rd))
	s.items, s.closers = pf, append(s.closers, func() { pf.Close() })
	return s, nil
}

// openRange opens the broker range of in: read as it streams, or spooled
// to a temporary capture first (read.Reread).
func (f *Factory) openRange(ctx context.Context, in *InputFlags, read InputRead) (*Source, error) {
	br := BrokerRead{Flags: in.Range, Start: in.Start, Names: in.Names}
	if read.LogFacts {
		br.Options = append(br.Options, kafka.WithLogFacts())
	}
	if read.Partitions != nil {
		br.Options = append(br.Options, kafka.OnlyPartitions(read.Partitions))
	}
	rng, err := f.OpenRange(ctx, br)
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
		return f.openCapture(ctx, in, read, func(opts ...CaptureOption) (*Capture, error) {
			return OpenSpool(ctx, f.IOStreams, name, spool, in.MaxLineSize, in.Names, opts...)
		})
	}
	s := &Source{Name: name, Channels: rng.Channels, Range: rng, closers: []func(){rng.Close}}
	var items replay.Source = rng
	if in.Interleave.Mode == replay.Timestamp {
		// Merge as it streams, reading each channel as the merge needs
		// it: a range's channels are known when it opens.
		items, s.Interleaved = replay.MergeByTimestamp(rng, len(rng.Channels)), true
	}
	s.items = replay.WithContext(ctx, items)
	return s, nil
}

// openProcess opens the process of --app (OpenAttach): read, its tasks
// seeded with read.Gate, and its range from the committed offsets to the
// log end open; its warnings are printed on stderr.
func (f *Factory) openProcess(ctx context.Context, in *InputFlags, read InputRead) (*Source, error) {
	if read.Reread {
		return nil, errors.New("a Parsley process (--app) is read once: it cannot be read again")
	}
	cfg := read.Gate
	if cfg.Names == nil {
		cfg.Names = in.Names
	}
	att, err := OpenAttach(ctx, f.Dial, in.Tasks, cfg, f.IOStreams.ErrOut)
	if err != nil {
		return nil, err
	}
	return &Source{
		Name:        in.Tasks.App,
		Channels:    att.Range.Channels,
		Interleaved: true, // in the range's order: the process reads no other
		Attached:    att,
		items:       replay.WithContext(ctx, att.Range),
		closers:     []func(){att.Close},
	}, nil
}

// ResolveScope resolves --scope and --start over the channels of src
// (ResolveScope) and refuses an empty scope: an input with no channel
// holds nothing to replay.
func (in *InputFlags) ResolveScope(src *Source) (Scope, error) {
	scope, err := ResolveScope(in.Scope, in.Start, src.Channels, in.Names)
	if err != nil {
		return Scope{}, err
	}
	if len(scope.Channels) == 0 {
		return Scope{}, fmt.Errorf("%s holds no records or positions: nothing to replay", src.Name)
	}
	return scope, nil
}

// IsInterruption reports whether err is what a read stopped by Ctrl-C
// returns: replay.ErrInterrupted, or the context's cancellation.
func IsInterruption(err error) bool {
	return errors.Is(err, replay.ErrInterrupted) || errors.Is(err, context.Canceled)
}

// Interrupted is the end of a command stopped by Ctrl-C, once it has
// printed what it did: exit 130 with its account of it on stderr
// ("interrupted after 42 records", "… before the audit ended: no report").
func Interrupted(account string) error {
	return &ExitError{Code: ExitInterrupted, Err: errors.New(account)}
}

// WhenInterrupted is Interrupted(account) when err is an interruption
// (IsInterruption), and err otherwise.
func WhenInterrupted(err error, account string) error {
	if IsInterruption(err) {
		return Interrupted(account)
	}
	return err
}
