package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/replay"
)

// Capture is a capture file that can be read more than once — OpenCapture
// reads it once to learn its channels and names, then commands read it
// again with Open to work — from a regular file, or from stdin, a FIFO or
// a pipe given by name (/dev/stdin, process substitution), spooled to a
// temporary file as the first reading goes. Nothing is held in memory.
type Capture struct {
	// Name is the file name, or "stdin".
	Name string
	// Channels are the channels the capture's lines name, sorted.
	Channels []clock.Channel

	path    string
	first   *os.File  // a regular file, opened by OpenCapture for the first reading
	once    io.Reader // stdin or a file readable once, read through ctx
	spool   *os.File  // once's copy, removed by Close
	opened  []io.Closer
	maxLine int
	read    bool
	observe func(*capture.Item) error
}

// OpenCapture opens the capture at path ("-" for stdin) and reads it once,
// channels only (capture.ChannelsOnly), for Channels and for the topic
// names its lines carry, which it adds to names. Read it then with Open;
// Close it when done. Lines longer than maxLine are errors. Opening and
// reading stop when ctx is done, even while a FIFO waits for its writer or
// a pipe stays open (the error is then ctx's, wrapped). Errors of the
// first reading name the capture.
func OpenCapture(ctx context.Context, ios *iostreams.IOStreams, path string, maxLine int, names *clock.Names, opts ...CaptureOption) (*Capture, error) {
	c := &Capture{Name: path, path: path, maxLine: maxLine}
	for _, o := range opts {
		o(c)
	}
	if path == "-" {
		c.Name, c.once = "stdin", &contextReader{ctx: ctx, r: ios.In}
	} else {
		f, rereadable, err := capture.OpenPath(ctx, path)
		if err != nil {
			return nil, err
		}
		c.opened = append(c.opened, f)
		if rereadable {
			c.first = f
		} else {
			c.once = &contextReader{ctx: ctx, r: f}
		}
	}
	first, err := c.Open(capture.ChannelsOnly())
	if err == nil {
		// A regular file is read on every core (in parts, merged in
		// line order); anything else on a goroutine of its own.
		pf := replay.Prefetch(replay.WithContext(ctx, first))
		var src replay.Source = pf
		if c.observe != nil {
			src = &observed{src, c.observe}
		}
		c.Channels, err = replay.Discover(src, names)
		pf.Close()
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	return c, nil
}

// CaptureOption changes how OpenCapture reads a capture the first time.
type CaptureOption func(*Capture)

// Observe hands every item of the first reading (kind, channel, offset and
// line only: capture.ChannelsOnly) to visit too, as it is read, for a
// command that needs more of that reading than channels and names: it
// then reads the capture once less. An error of visit ends the reading.
func Observe(visit func(*capture.Item) error) CaptureOption {
	return func(c *Capture) { c.observe = visit }
}

// observed is a source whose items visit sees as they pass.
type observed struct {
	src   replay.Source
	visit func(*capture.Item) error
}

func (o *observed) Next() (*capture.Item, error) {
	it, err := o.src.Next()
	if err == nil {
		err = o.visit(it)
	}
	return it, err
}

// Open returns a reader over the capture from its first line, with opts
// (the line limit is set already), e.g. capture.SkipPayloads() to replay.
// Each call starts again from the beginning.
func (c *Capture) Open(opts ...capture.ReaderOption) (*capture.Reader, error) {
	opt := append([]capture.ReaderOption{capture.MaxLineSize(c.maxLine)}, opts...)
	if c.once != nil {
		if !c.read {
			c.read = true
			f, err := os.CreateTemp("", "causalctl-stdin-*.ndjson")
			if err != nil {
				return nil, fmt.Errorf("spooling %s: %w", c.Name, err)
			}
			c.spool = f
			return capture.NewReader(io.TeeReader(c.once, &spoolWriter{f: f}), opt...), nil
		}
		if _, err := c.spool.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("spooling %s: %w", c.Name, err)
		}
		return capture.NewReader(c.spool, opt...), nil
	}
	if c.first != nil {
		f := c.first
		c.first = nil
		return capture.NewReader(f, opt...), nil
	}
	f, err := os.Open(c.path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	// A new reading replaces the last: its reader is done with.
	c.closeOpened()
	c.opened = append(c.opened, f)
	return capture.NewReader(f, opt...), nil
}

// spoolWriter names the spool in a write error (a full temporary
// directory), which would otherwise read as an error of the input.
type spoolWriter struct{ f *os.File }

func (w *spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fmt.Errorf("spooling to %s: %w", w.f.Name(), err)
	}
	return n, err
}

func (c *Capture) closeOpened() {
	for _, f := range c.opened {
		f.Close()
	}
	c.opened = c.opened[:0]
}

// Close closes what Open opened and removes the spool of stdin.
func (c *Capture) Close() error {
	c.closeOpened()
	if c.spool != nil {
		c.spool.Close()
		os.Remove(c.spool.Name())
	}
	return nil
}

// contextReader reads r on a goroutine of its own, so that a Read waiting on
// a pipe that stays open (a producer that never closes) returns ctx's error
// once ctx is done. The goroutine may stay blocked in r.Read after that;
// the process is about to end.
type contextReader struct {
	ctx    context.Context
	r      io.Reader
	chunks chan chunk
	rest   []byte
	err    error
}

type chunk struct {
	b   []byte
	err error
}

func (c *contextReader) Read(p []byte) (int, error) {
	if len(c.rest) == 0 && c.err == nil {
		if c.chunks == nil {
			c.chunks = make(chan chunk, 4)
			go c.pump()
		}
		select {
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		case ch := <-c.chunks:
			c.rest, c.err = ch.b, ch.err
		}
	}
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		return n, nil
	}
	return 0, c.err
}

func (c *contextReader) pump() {
	for {
		buf := make([]byte, 64<<10)
		n, err := c.r.Read(buf)
		if n > 0 || err != nil {
			select {
			case c.chunks <- chunk{buf[:n], err}:
			case <-c.ctx.Done():
				return
			}
		}
		if err != nil {
			return
		}
	}
}
