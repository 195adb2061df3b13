// Package cmdutil holds what every causalctl command shares: the Factory of
// dependencies, the typed errors that decide the exit code, and flag helpers.
package cmdutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Factory carries the dependencies commands take from their environment, so
// tests can replace each of them.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Getenv reads the environment (os.Getenv in production).
	Getenv func(string) string
	// Version, Commit and BuildDate describe the build (see cli.Build);
	// "" when unknown.
	Version   string
	Commit    string
	BuildDate string
	// Conn holds the connection flags, registered on the root command.
	Conn *conn.Options
	// Now reads the wall clock (time.Now); offsets like @-1h use it.
	Now func() time.Time
	// Final guards the command's final document on stdout against the
	// hard exit after an interrupt (Interruptible).
	Final *FinalOutput
}

// NewFactory returns the Factory of a run over ios: the environment read
// through getenv, the wall clock, and empty connection settings that the
// root's flags fill. cli.Main builds the process's Factory with it (and
// sets the build's Version, Commit and BuildDate); tests build theirs with
// cmdutiltest.Factory, which calls it too.
func NewFactory(ios *iostreams.IOStreams, getenv func(string) string) *Factory {
	return &Factory{IOStreams: ios, Getenv: getenv, Conn: &conn.Options{}, Now: time.Now, Final: &FinalOutput{}}
}

// Exit codes (SPEC §5).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitHeld        = 3 // --fail-on-held and records still held
	ExitFound       = 4 // causalctl holds found holds, causalctl check found findings
	ExitInterrupted = 130
)

// ExitError carries an exit code other than ExitFailure. A nil Err exits
// with Code and prints nothing (the command has said what it had to say).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a mistake in how the command was called: exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ErrSilent exits 1 without printing: the command already reported.
var ErrSilent = errors.New("silent error")

// ErrStopped is what a command that runs until it is stopped (demo, watch,
// exporter) returns when Ctrl-C or SIGTERM stopped it and it ended
// cleanly, its summary written: exit 0, nothing more printed. Exit 130,
// "interrupted", stays for work cut short (a read, a replay, a report).
var ErrStopped = errors.New("stopped as asked")

// ErrStoppedFailed is ErrStopped for a command whose run had failed before
// it was stopped, and said so then (watch's gate failed closed while it
// served metrics): exit 1, nothing more printed, never 130.
var ErrStoppedFailed = fmt.Errorf("%w after a failure", ErrStopped)

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	var ee *ExitError
	var ue *UsageError
	var se *input.SpecError
	switch {
	case errors.Is(err, ErrStoppedFailed):
		return ExitFailure
	case err == nil, errors.Is(err, ErrStopped):
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue), errors.As(err, &se): // a bad value of an input flag
		return ExitUsage
	}
	return ExitFailure
}

// NamesFlag collects repeatable --topic-id NAME=UUID flags into clock.Names.
type NamesFlag struct {
	Names *clock.Names
	given []string
}

// AddTopicIDFlag registers --topic-id on fs, filling n.
func AddTopicIDFlag(fs *pflag.FlagSet, n *NamesFlag) {
	if n.Names == nil {
		n.Names = &clock.Names{}
	}
	fs.Var(n, "topic-id", "name a topic UUID, as `NAME=UUID` (repeatable)")
}

func (n *NamesFlag) String() string { return strings.Join(n.given, ",") }
func (n *NamesFlag) Type() string   { return "NAME=UUID" }

// Set adds one NAME=UUID binding.
func (n *NamesFlag) Set(s string) error {
	if err := n.Names.AddFlag(s); err != nil {
		return err
	}
	n.given = append(n.given, s)
	return nil
}

// AddPositionAdvanceFlag registers --position-advance on fs; *on is its
// value (default true, the seed's semantics).
func AddPositionAdvanceFlag(fs *pflag.FlagSet, on *bool) {
	fs.BoolVar(on, "position-advance", true,
		"settle a channel when the consumer's position moves past transaction markers and aborted offsets (the seed's gate); "+
			"false settles only on receiving a record, as current Parsley releases do, so a head claiming a marker's offset stays held")
}

// UndecodableFlag is --undecodable: fail (the default) or hold.
type UndecodableFlag struct{ Mode gate.UndecodableMode }

// AddUndecodableFlag registers --undecodable on cmd, with its completion.
func AddUndecodableFlag(cmd *cobra.Command, u *UndecodableFlag) {
	cmd.Flags().Var(u, "undecodable", "an undecodable header fails the gate closed (fail), or stays held as a head that never delivers (hold)")
	CompleteFlagValues(cmd, "undecodable", "fail\tfail the gate closed (the default)", "hold\tkeep the record as a head that never delivers")
}

func (u *UndecodableFlag) String() string { return u.Mode.String() }
func (u *UndecodableFlag) Type() string   { return "fail|hold" }

// Set reads fail or hold.
func (u *UndecodableFlag) Set(s string) error {
	switch s {
	case "fail":
		u.Mode = gate.FailOnUndecodable
	case "hold":
		u.Mode = gate.HoldUndecodable
	default:
		return fmt.Errorf("want fail or hold, not %q", s)
	}
	return nil
}

// AddSizeFlags registers the limits of reading clocks and capture lines,
// --max-header-size and --max-line-size, with their defaults; the root
// refuses values that are not positive (CheckPositive).
func AddSizeFlags(fs *pflag.FlagSet, maxHeader, maxLine *int) {
	fs.IntVar(maxHeader, "max-header-size", clock.DefaultMaxSize, "metadata budget of a clock header in bytes: a longer value is refused as too-large")
	fs.IntVar(maxLine, "max-line-size", capture.DefaultMaxLineSize, "longest capture line accepted, in bytes")
}

// CheckPositive refuses a zero or negative value of the named int flags
// (sizes and limits such as --max-header-size): zero would refuse every
// value and a negative one means nothing, so neither is guessed at.
func CheckPositive(fs *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if n, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && n <= 0 {
			return Usagef("--%s %d: must be a positive number of bytes", name, n)
		}
	}
	return nil
}

// ByteSize is a flag value in bytes, written as a number with an
// optional unit: B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of
// 1024), e.g. 512MiB or 2GB. It must be positive.
type ByteSize int64

func (b *ByteSize) String() string { return replay.FormatBytes(int64(*b)) }
func (b *ByteSize) Type() string   { return "SIZE" }

// Set reads a size such as 512MiB.
func (b *ByteSize) Set(s string) error {
	num := strings.TrimRight(s, "BbKkMmGgTtiI ")
	unit := strings.ToLower(strings.TrimSpace(s[len(num):]))
	mult, ok := map[string]int64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[unit]
	if !ok {
		return fmt.Errorf("size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, KB, MB, GB)", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	// !(≥ 1) also refuses NaN, whose conversion to an integer is undefined.
	if bytes := n * float64(mult); err != nil || !(bytes >= 1) || bytes >= 1<<62 {
		return fmt.Errorf("size %q: want a positive number of bytes with an optional unit (KiB, MiB, GiB, KB, MB, GB)", s)
	}
	*b = ByteSize(n * float64(mult))
	return nil
}
