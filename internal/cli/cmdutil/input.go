package cmdutil

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file is the flags of the one input pipeline of the commands that
// read records: AddInputFlags registers the flags that name the input,
// InputFlags.Check refuses the combinations that mean nothing, and
// Factory.OpenInput opens whichever kind the flags name — a capture
// (--input), a broker range (--topic …) or a Parsley process (--app) — as
// one input.Source (internal/input). A command never opens a capture, a
// range or a process itself.

// InputFlags are the flags that name a command's input and how it is read,
// filled by AddInputFlags: an input.Spec. A command embeds them in its
// Options.
// InputFlags are the flags that name a command's input and how it is read,
// filled by AddInputFlags. A command embeds them in its Options.
type InputFlags struct {
	input.Spec

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
	if err := CheckTasks(fs, &in.Tasks); err != nil {
		return err
	}
	if in.Tasks.App == "" {
		check := func() error { return CheckSource(fs, &in.Range, in.Input) }
		if in.spec.Optional {
			check = func() error { return CheckRange(fs, &in.Range) }
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

// OpenInput opens the input in names (input.Open) over f's dialer and
// streams: the one way a command opens what it reads.
func (f *Factory) OpenInput(ctx context.Context, in *InputFlags, read input.Read) (*input.Source, error) {
	return input.Open(ctx, f.inputEnv(), &in.Spec, read)
}

// AttachGroup is input.Spec.AttachGroup for a command that takes --app:
// --from-group naming a Parsley process reads it as --app does.
func (in *InputFlags) AttachGroup(ctx context.Context, dial func(context.Context) (*kafka.Client, error), warn io.Writer) error {
	if !in.spec.App {
		return nil
	}
	return in.Spec.AttachGroup(ctx, dial, warn)
}

// IsInterruption reports whether err is what a read stopped by Ctrl-C
// returns: engine.ErrInterrupted, or the context's cancellation.
func IsInterruption(err error) bool {
	return errors.Is(err, engine.ErrInterrupted) || errors.Is(err, context.Canceled)
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
