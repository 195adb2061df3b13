// Package iostreams carries the standard streams of a command together with
// what is known about them — which are terminals, whether colour is wanted —
// so that commands never touch os.Stdin and friends directly and every
// command can be run in-process by a test, as a terminal or as a pipe.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are the streams of one command invocation.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool

	// Color reports whether styled output is wanted on Out: a terminal,
	// NO_COLOR unset and TERM not "dumb".
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
	s.Color = s.OutTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return s
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
// an interactive session.
func (s *IOStreams) SetTTY(tty bool) {
	s.InTTY, s.OutTTY, s.ErrTTY = tty, tty, tty
}
