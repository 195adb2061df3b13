package cmdutil

import (
	"context"
	"fmt"

	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Dial resolves the connection settings (flags > environment > profile)
// and connects, read-only. A file of secrets that others may read is
// warned about on stderr, once per run.
func (f *Factory) Dial(ctx context.Context) (*kafka.Client, error) {
	if f.Conn == nil {
		return nil, fmt.Errorf("no connection settings")
	}
	cfg, err := f.Conn.ResolveWarn(f.Getenv, func(line string) { fmt.Fprintln(f.IOStreams.ErrOut, line) })
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return kafka.Dial(ctx, cfg)
}

// AddRangeFlags registers the range flags on cmd, --topic and --from-group
// completed from the cluster f's connection settings name.
func AddRangeFlags(cmd *cobra.Command, f *Factory, r *input.Selection) {
	fs := cmd.Flags()
	fs.StringArrayVarP(&r.Topics, "topic", "t", nil, "read from the broker: topic `NAME` or NAME/PARTITION (repeatable, or comma-separated)")
	fs.StringVar(&r.Offsets, "offsets", kafka.DefaultOffsets, "range of offsets, rpk's -o grammar: start, end, N, N:M, :M, +N, -N, @TIME, @T1:T2")
	fs.StringVar(&r.FromGroup, "from-group", "", "start each partition at `GROUP`'s committed offset (read, never joined)")
	fs.BoolVar(&r.AllowGaps, "allow-gaps", false, "when retention or DeleteRecords removes offsets before they are read, go on past them, recording each gap (a warning, a capture's gap line), instead of failing")
	registerCompletion(cmd, "topic", listOf(clusterChannels(f, "")))
	registerCompletion(cmd, "from-group", clusterGroups(f))
}

// CheckRange refuses --offsets or --from-group without --topic: they would
// be ignored, and a silently ignored flag reads a different range than
// meant.
func CheckRange(fs *pflag.FlagSet, r *input.Selection) error {
	if r.Given() {
		return nil
	}
	for _, name := range []string{"offsets", "from-group", "allow-gaps"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return Usagef("--%s reads from the brokers: give --topic too", name)
		}
	}
	return nil
}

// CheckSource is CheckRange for a command that reads a capture (--input)
// or a broker range: it wants exactly one of them.
func CheckSource(fs *pflag.FlagSet, r *input.Selection, capture string) error {
	if err := CheckRange(fs, r); err != nil {
		return err
	}
	if (capture == "") == !r.Given() {
		return Usagef("give one source: a capture with --input FILE (- for stdin), or a broker range with --topic")
	}
	return nil
}

// OpenRange opens the broker range read asks for (input.OpenRange) over
// f's dialer and streams.
func (f *Factory) OpenRange(ctx context.Context, read input.BrokerRead) (*input.Range, error) {
	return input.OpenRange(ctx, f.inputEnv(), read)
}

// OpenFollow opens a follower of what read asks for (input.OpenFollow)
// over f's dialer and streams.
func (f *Factory) OpenFollow(ctx context.Context, read input.BrokerRead) (*input.Follow, error) {
	return input.OpenFollow(ctx, f.inputEnv(), read)
}

// ReadProcessInput reads one process (input.ReadProcess) over f's dialer
// and streams.
func (f *Factory) ReadProcessInput(ctx context.Context, in input.ProcessInput) (*inspect.Process, error) {
	return input.ReadProcess(ctx, f.inputEnv(), in)
}

// inputEnv is what the input openers need of the factory.
func (f *Factory) inputEnv() input.Env {
	return input.Env{Dial: f.Dial, IO: f.IOStreams, Now: f.Now}
}
