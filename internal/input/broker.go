package input

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/record"
)

// This file is how a command reads from the brokers, the one way: dial,
// learn every topic's name (clocks name topics by UUID, topics outside the
// read included) and add them to the command's names, take start positions
// from --from-group and then --start, and open a kafka.Range (OpenRange)
// or a kafka.Follower (OpenFollow). A command that reads records opens
// them through Open (input.go), which opens a range here; a live one
// follows with OpenFollow. Neither dials or resolves names itself.

// BrokerRead is what a command asks to read from the brokers.
type BrokerRead struct {
	// Selection is --topic, --offsets, --from-group and --allow-gaps.
	Selection Selection
	// Start holds --start CH=OFFSET values. They are parsed once the
	// broker's names are known, and override --from-group and --offsets
	// for their channels.
	Start []string
	// Names are the command's names (--topic-id); the broker's are added
	// to them, and a disagreement is an error. Nil: names of its own.
	Names *clock.Names
	// Options are passed on to OpenRange or Follow (FetchWait, …).
	Options []kafka.ReadOption
}

// Range is an open broker range, a engine.Source of its items.
type Range struct {
	Client *kafka.Client
	Range  *kafka.Range
	// Channels are the range's channels in selection order, Ends each
	// one's end (the range reads offsets below it).
	Channels []clock.Channel
	Ends     map[clock.Channel]int64
	ctx      context.Context
	errOut   io.Writer // where gaps are told
}

// Next yields the range's next item.
func (r *Range) Next() (*record.Item, error) { return r.warn(r.Range.Next(r.ctx)) }

// NextOf yields the next item of Channels[i] (a replay.ChannelSource).
func (r *Range) NextOf(i int) (*record.Item, error) { return r.warn(r.Range.NextOf(r.ctx, i)) }

// warn says on stderr where a read with --allow-gaps went past deleted
// offsets, one line a gap, as it passes them.
func (r *Range) warn(it *record.Item, err error) (*record.Item, error) {
	if err == nil && it.Gap != nil && r.errOut != nil {
		fmt.Fprintln(r.errOut, GapWarning(it))
	}
	return it, err
}

// GapWarning is the line that tells of a gap item (--allow-gaps).
func GapWarning(it *record.Item) string {
	return fmt.Sprintf("warning: %s/%d: offsets %d to %d were deleted before they were read (retention or DeleteRecords); read on at %d (--allow-gaps)",
		it.Topic, it.Partition, it.Gap.From, it.Gap.To-1, it.Gap.To)
}

// Close closes the client.
func (r *Range) Close() { r.Client.Close() }

// Spool writes the rest of the range to a temporary capture file, for
// commands that read their input more than once (OpenSpool reads it), and
// returns it open at its start; the caller closes it. No name of it is
// left in the temporary directory where the system allows (SpoolFile).
func (r *Range) Spool() (*SpoolFile, error) {
	sp, err := createSpool("causalctl-range-*.ndjson")
	if err != nil {
		return nil, fmt.Errorf("spooling the range: %w", err)
	}
	w := capture.NewWriter(sp.File)
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err == nil {
			err = w.Write(it)
		}
		if err != nil {
			sp.Close()
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		sp.Close()
		return nil, fmt.Errorf("spooling the range: %w", err)
	}
	if _, err := sp.Seek(0, io.SeekStart); err != nil {
		sp.Close()
		return nil, fmt.Errorf("spooling the range: %w", err)
	}
	return sp, nil
}

// Follow is an open broker follower (a live.Source).
type Follow struct {
	Client   *kafka.Client
	Follower *kafka.Follower
	// Channels are the followed channels in selection order.
	Channels []clock.Channel
}

// Close closes the client.
func (f *Follow) Close() { f.Client.Close() }

// OpenRange opens the broker range read asks for over a client of
// env.Dial. Bad --topic, --offsets or --start values are *SpecError.
func OpenRange(ctx context.Context, env Env, read BrokerRead) (*Range, error) {
	cl, sels, spec, opts, err := prepare(ctx, env, read, false)
	if err != nil {
		return nil, err
	}
	rng, err := cl.OpenRange(ctx, sels, spec, opts...)
	if err != nil {
		cl.Close()
		return nil, err
	}
	return newRange(ctx, cl, rng, env.errOut()), nil
}

// newRange wraps an open range; errOut (nil: nowhere) is told of the gaps
// an --allow-gaps read passes.
func newRange(ctx context.Context, cl *kafka.Client, rng *kafka.Range, errOut io.Writer) *Range {
	r := &Range{Client: cl, Range: rng, Ends: map[clock.Channel]int64{}, ctx: ctx, errOut: errOut}
	for _, rc := range rng.Channels() {
		r.Channels = append(r.Channels, rc.Channel())
		r.Ends[rc.Channel()] = rc.End
	}
	return r
}

// OpenFollow opens a follower of what read asks for over a client of
// env.Dial: its --offsets may give a start only.
func OpenFollow(ctx context.Context, env Env, read BrokerRead) (*Follow, error) {
	cl, sels, spec, opts, err := prepare(ctx, env, read, true)
	if err != nil {
		return nil, err
	}
	fol, err := cl.Follow(ctx, sels, spec, opts...)
	if err != nil {
		cl.Close()
		return nil, err
	}
	out := &Follow{Client: cl, Follower: fol}
	for _, pc := range fol.Channels() {
		out.Channels = append(out.Channels, pc.Channel())
	}
	return out, nil
}

// prepare parses read's flags, dials, learns the names and resolves the
// start positions: everything OpenRange and OpenFollow share. A follower's
// offsets may give a start only.
func prepare(ctx context.Context, env Env, read BrokerRead, follow bool) (cl *kafka.Client, sels []kafka.TopicSel, spec kafka.OffsetSpec, opts []kafka.ReadOption, err error) {
	sels, err = kafka.ParseTopicSels(read.Selection.Topics)
	if err != nil {
		return nil, nil, spec, nil, &SpecError{Err: fmt.Errorf("--topic: %w", err)}
	}
	if spec, err = kafka.ParseOffsets(read.Selection.Offsets, env.now()); err != nil {
		return nil, nil, spec, nil, &SpecError{Err: fmt.Errorf("--offsets: %w", err)}
	}
	if follow && spec.End.Kind != kafka.BoundLogEnd {
		return nil, nil, spec, nil, specErrorf("--offsets %s: a live read follows without end: give a start only", read.Selection.Offsets)
	}
	names := read.Names
	if names == nil {
		names = &clock.Names{}
	}
	if cl, err = env.Dial(ctx); err != nil {
		return nil, nil, spec, nil, err
	}
	starts, err := brokerStarts(ctx, cl, read, names)
	if err != nil {
		cl.Close()
		return nil, nil, spec, nil, err
	}
	opts = read.Options
	if read.Selection.AllowGaps {
		opts = append([]kafka.ReadOption{kafka.AllowGaps()}, opts...)
	}
	if len(starts) > 0 {
		opts = append([]kafka.ReadOption{kafka.WithStarts(starts)}, opts...)
	}
	return cl, sels, spec, opts, nil
}

// brokerStarts learns every topic's name into names, then reads the start
// positions: the group's committed offsets, overridden by --start.
func brokerStarts(ctx context.Context, cl *kafka.Client, read BrokerRead, names *clock.Names) (map[clock.Channel]int64, error) {
	if _, err := cl.Topics(ctx); err != nil {
		return nil, err
	}
	if err := mergeNames(names, cl.Names()); err != nil {
		return nil, err
	}
	starts := map[clock.Channel]int64{}
	if read.Selection.FromGroup != "" {
		group, err := cl.GroupOffsets(ctx, read.Selection.FromGroup)
		if err != nil {
			return nil, err
		}
		maps.Copy(starts, group)
	}
	given, err := ParseStarts(read.Start, names)
	if err != nil {
		return nil, err
	}
	maps.Copy(starts, given)
	return starts, nil
}

// mergeNames adds the broker's names to the command's (--topic-id ones);
// a conflict means the user named a topic wrongly.
func mergeNames(dst, src *clock.Names) error {
	for _, name := range src.All() {
		id, _ := src.ID(name)
		if err := dst.Add(name, id); err != nil {
			return fmt.Errorf("--topic-id disagrees with the broker: %w", err)
		}
	}
	return nil
}

// ParseStarts reads --start values, CH=OFFSET each (or comma-separated).
func ParseStarts(specs []string, names *clock.Names) (map[clock.Channel]int64, error) {
	starts := map[clock.Channel]int64{}
	for _, spec := range specs {
		chText, offText, ok := strings.Cut(strings.TrimSpace(spec), "=")
		if !ok {
			return nil, specErrorf("--start %q: want CHANNEL=OFFSET", spec)
		}
		ch, err := names.ParseChannel(chText)
		if err != nil {
			return nil, specErrorf("--start: %v", err)
		}
		off, err := strconv.ParseInt(offText, 10, 64)
		if err != nil || off < 0 {
			return nil, specErrorf("--start %q: offset must be a non-negative integer", spec)
		}
		if prev, dup := starts[ch]; dup {
			return nil, specErrorf("--start: channel %s given twice (%d and %d): give each channel once", names.Channel(ch), prev, off)
		}
		starts[ch] = off
	}
	return starts, nil
}
