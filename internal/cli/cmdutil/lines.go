package cmdutil

import (
	"bytes"
	"io"
)

// lineBufferSize is how much a LineWriter gathers before it writes: one
// guarded write carries hundreds of lines.
const lineBufferSize = 64 << 10

// LineWriter buffers a command's streamed lines (replay's ndjson events,
// decode's line per record, a capture on stdout) and writes them to the
// underlying writer in whole lines only, each write guarded by the
// command's FinalOutput: the hard exit after an interrupt's grace waits
// for the write in progress and refuses the next, so stdout ends on a
// line boundary and every ndjson line parses. Lines are gathered into one
// write per buffer, not one per line, so the guard costs nothing
// measurable. A nil FinalOutput writes without a guard.
type LineWriter struct {
	w     io.Writer
	final *FinalOutput
	buf   []byte
	err   error // sticky, as bufio.Writer's
	held  bool  // inside Finish: final's lock is held already
}

// NewLineWriter returns a LineWriter writing to w under final.
func NewLineWriter(w io.Writer, final *FinalOutput) *LineWriter {
	return &LineWriter{w: w, final: final, buf: make([]byte, 0, lineBufferSize)}
}

// Write buffers p; when the buffer is full, the whole lines in it are
// written and an unfinished last line stays for the next write.
func (l *LineWriter) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	l.buf = append(l.buf, p...)
	if len(l.buf) >= lineBufferSize {
		if err := l.Flush(); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (l *LineWriter) WriteString(s string) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	l.buf = append(l.buf, s...)
	if len(l.buf) >= lineBufferSize {
		if err := l.Flush(); err != nil {
			return len(s), err
		}
	}
	return len(s), nil
}

// Flush writes the whole lines buffered, in one guarded write; a last
// line without its newline yet stays buffered (Finish writes it).
func (l *LineWriter) Flush() error {
	return l.writeOut(bytes.LastIndexByte(l.buf, '\n') + 1)
}

// Finish runs last, which writes the command's last lines (a summary)
// through l, then writes everything buffered, as the command's final
// document (FinalOutput.Do): once begun it is written whole. last may be
// nil.
func (l *LineWriter) Finish(last func() error) error {
	return l.final.Do(func() error {
		l.held = true
		defer func() { l.held = false }()
		if last != nil {
			if err := last(); err != nil {
				return err
			}
		}
		return l.writeOut(len(l.buf))
	})
}

// writeOut writes the first n buffered bytes and keeps the rest.
func (l *LineWriter) writeOut(n int) error {
	if l.err != nil {
		return l.err
	}
	if n == 0 {
		return nil
	}
	write := func() error {
		_, err := l.w.Write(l.buf[:n])
		return err
	}
	var err error
	if l.held {
		err = write()
	} else {
		err = l.final.Do(write)
	}
	if err != nil {
		l.err = err
		return err
	}
	l.buf = append(l.buf[:0], l.buf[n:]...)
	return nil
}
