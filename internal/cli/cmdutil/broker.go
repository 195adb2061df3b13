package cmdutil

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/spf13/pflag"
)

// Dial resolves the connection settings (flags > environment > profile)
// and connects, read-only.
func (f *Factory) Dial(ctx context.Context) (*kafka.Client, error) {
	if f.Conn == nil {
		return nil, fmt.Errorf("no connection settings")
	}
	cfg, err := f.Conn.Resolve(f.Getenv)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return kafka.Dial(ctx, cfg)
}

// RangeFlags name a broker range: --topic (repeatable), --offsets and
// --from-group, the way rpk and kcl name them.
type RangeFlags struct {
	Topics    []string
	Offsets   string
	FromGroup string
	// LogFacts, set by a command (no flag), makes the range yield each
	// channel's log facts first (kafka.WithLogFacts).
	LogFacts bool
}

// AddRangeFlags registers the range flags on fs.
func AddRangeFlags(fs *pflag.FlagSet, r *RangeFlags) {
	fs.StringArrayVarP(&r.Topics, "topic", "t", nil, "read from the broker: topic `NAME` or NAME/PARTITION (repeatable, or comma-separated)")
	fs.StringVar(&r.Offsets, "offsets", kafka.DefaultOffsets, "range of offsets, rpk's -o grammar: start, end, N, N:M, :M, +N, -N, @TIME, @T1:T2")
	fs.StringVar(&r.FromGroup, "from-group", "", "start each partition at `GROUP`'s committed offset (read, never joined)")
}

// Given reports whether a broker range was asked for.
func (r *RangeFlags) Given() bool { return len(r.Topics) > 0 }

// Check refuses --offsets or --from-group without --topic: they would be
// ignored, and a silently ignored flag reads a different range than meant.
func (r *RangeFlags) Check(fs *pflag.FlagSet) error {
	if r.Given() {
		return nil
	}
	for _, name := range []string{"offsets", "from-group"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return Usagef("--%s reads from the brokers: give --topic too", name)
		}
	}
	return nil
}

// BrokerRange is an open broker range as a source of capture items.
type BrokerRange struct {
	Client *kafka.Client
	Range  *kafka.Range
	ctx    context.Context
}

// Next yields the range's next item.
func (b *BrokerRange) Next() (*capture.Item, error) { return b.Range.Next(b.ctx) }

// Channels returns the channels of the range, sorted.
func (b *BrokerRange) Channels() []clock.Channel {
	var out []clock.Channel
	for _, rc := range b.Range.Channels() {
		out = append(out, rc.Channel())
	}
	return out
}

// Close closes the client.
func (b *BrokerRange) Close() { b.Client.Close() }

// OpenRange dials, learns every topic's name (clocks name topics by UUID,
// topics outside the range included), and opens the range. starts, when
// given, override the range's start for their channels; the names of
// --start values are resolved by the caller through names after Dial, so
// it is a function of the client's names.
func (f *Factory) OpenRange(ctx context.Context, r *RangeFlags, names *clock.Names, starts func(*clock.Names) (map[clock.Channel]int64, error)) (*BrokerRange, error) {
	sels, err := kafka.ParseTopicSels(r.Topics)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--topic: %w", err)}
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	spec, err := kafka.ParseOffsets(r.Offsets, now())
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--offsets: %w", err)}
	}
	cl, err := f.Dial(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			cl.Close()
		}
	}()
	if _, err := cl.Topics(ctx); err != nil {
		return nil, err
	}
	if err := mergeNames(names, cl.Names()); err != nil {
		return nil, err
	}
	all := map[clock.Channel]int64{}
	if r.FromGroup != "" {
		group, err := cl.GroupOffsets(ctx, r.FromGroup)
		if err != nil {
			return nil, err
		}
		maps.Copy(all, group)
	}
	if starts != nil {
		given, err := starts(names)
		if err != nil {
			return nil, err
		}
		maps.Copy(all, given)
	}
	var opts []kafka.ReadOption
	if len(all) > 0 {
		opts = append(opts, kafka.WithStarts(all))
	}
	if r.LogFacts {
		opts = append(opts, kafka.WithLogFacts())
	}
	rng, err := cl.OpenRange(ctx, sels, spec, opts...)
	if err != nil {
		return nil, err
	}
	ok = true
	return &BrokerRange{Client: cl, Range: rng, ctx: ctx}, nil
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
			return nil, Usagef("--start %q: want CHANNEL=OFFSET", spec)
		}
		ch, err := names.ParseChannel(chText)
		if err != nil {
			return nil, Usagef("--start: %v", err)
		}
		off, err := strconv.ParseInt(offText, 10, 64)
		if err != nil || off < 0 {
			return nil, Usagef("--start %q: offset must be a non-negative integer", spec)
		}
		starts[ch] = off
	}
	return starts, nil
}
