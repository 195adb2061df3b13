// Package iostreams carries the standard streams of a command together with
// what is known about them — which are terminals, whether colour is wanted,
// whether the process may take the screen — so that commands never touch
// os.Stdin and friends directly and every command can be run in-process by
// a test, as a terminal or as a pipe.
//
// It is also where the colour policy is decided, once for every command:
// colour only on a terminal, never with NO_COLOR set or TERM=dumb, and no
// command ever asks the terminal anything (see quiet.go).
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// IOStreams are the streams of one command invocation.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool

	// Foreground reports whether Out is a terminal whose foreground process
	// group is this process's: only then may a command take the screen (the
	// live view puts the terminal in raw mode, which from a background job
	// stops it with SIGTTOU).
	Foreground bool

	// Color reports whether styled output is wanted on Out: a terminal,
	// NO_COLOR unset (set to anything non-empty turns colour off) and TERM not
	// "dumb". It is the one colour decision; the live view follows it.
	Color bool

	// Width is the terminal width of Out in columns, 0 when unknown.
	Width int
}

// System returns the process's streams, probing which are terminals.
func System(getenv func(string) string) *IOStreams {
	s := &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
	s.Foreground = s.OutTTY && isForeground(os.Stdout)
	s.Color = ColorWanted(s.OutTTY, getenv)
	if s.OutTTY {
		s.Width = terminalWidth(os.Stdout, getenv)
	}
	return s
}

// terminalWidth is the width of the terminal f in columns: COLUMNS when set
// to a positive number (the shell's word, and a user's override), else the
// terminal's window size (an ioctl: nothing is written to the terminal); 0
// when neither says.
func terminalWidth(f *os.File, getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
		return w
	}
	return 0
}

// ColorWanted is the colour policy: colour on a terminal unless NO_COLOR
// is set to anything but the empty string (no-color.org's rule) or TERM
// is "dumb".
func ColorWanted(tty bool, getenv func(string) string) bool {
	return tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// CanTakeScreen reports whether a command may show a full-screen view on
// Out: Out is a terminal and the process is in its foreground. A command
// that cannot prints its plain lines instead, as with --no-tui.
func (s *IOStreams) CanTakeScreen() bool {
	return s.OutTTY && s.Foreground
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Test returns streams backed by buffers, none of them a terminal; set the
// TTY fields to test terminal behaviour.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// SetTTY marks all three streams as terminals (or not), as a test would see
// an interactive session in the terminal's foreground.
func (s *IOStreams) SetTTY(tty bool) {
	s.InTTY, s.OutTTY, s.ErrTTY = tty, tty, tty
	s.Foreground = tty
}
