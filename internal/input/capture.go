package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/causalctl/causalctl/internal/view"
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
	// Stopped is the capture's stopped line when it did not finish its
	// range (a warning has said so on stderr); nil for a whole capture.
	Stopped *capture.Stopped

	path    string
	first   *os.File   // a regular file, opened by OpenCapture for the first reading
	once    io.Reader  // stdin or a file readable once, read through ctx
	spool   *SpoolFile // once's copy, or a broker range's (OpenSpool)
	opened  []io.Closer
	maxLine int
	read    bool
	observe func(*record.Item) error
	clocks  bool // the first reading decodes headers too (ObserveClocks)
	// read1 is what the first reading saw, which every later reading of
	// a file must see again (ErrChanged).
	read1 fingerprint
}

// fingerprint is what a reading of a capture saw: the file's size and
// modification time when it is a regular file, the items read and the
// line of the last.
type fingerprint struct {
	size     int64
	modified time.Time
	stat     bool // size and modified are known
	items    int64
	lastLine int64
}

// ErrChanged is the error of a capture file that changed between two
// readings of one command (replay -f reads it twice: its channels, then
// its records): the second reading would not be the input the first
// described. check says the same (audit.ErrChanged).
var ErrChanged = errors.New("the input changed between its two readings")

// OpenCapture opens the capture at path ("-" for stdin) and reads it once,
// channels only (capture.ChannelsOnly), for Channels and for the topic
// names its lines carry, which it adds to names. Read it then with Open;
// Close it when done. Lines longer than maxLine are errors. Opening and
// reading stop when ctx is done, even while a FIFO waits for its writer or
// a pipe stays open (the error is then ctx's, wrapped). Errors of the
// first reading name the capture.
func OpenCapture(ctx context.Context, ios *iostreams.IOStreams, path string, maxLine int, names *clock.Names, opts ...CaptureOption) (*Capture, error) {
	c := &Capture{Name: path, path: path, maxLine: maxLine}
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
			// What the first reading reads: a later reading must find the
			// same file (Open).
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				c.read1.size, c.read1.modified, c.read1.stat = fi.Size(), fi.ModTime(), true
			}
		} else {
			c.once = &contextReader{ctx: ctx, r: f}
		}
	}
	return c.firstReading(ctx, ios, names, opts)
}

// OpenSpool opens a capture written to sp (Range.Spool) under name, as
// OpenCapture does a file; Close closes sp.
func OpenSpool(ctx context.Context, ios *iostreams.IOStreams, name string, sp *SpoolFile, maxLine int, names *clock.Names, opts ...CaptureOption) (*Capture, error) {
	c := &Capture{Name: name, spool: sp, maxLine: maxLine}
	return c.firstReading(ctx, ios, names, opts)
}

// firstReading reads the capture once, channels only, for its channels
// and names, with its warnings on stderr (OpenCapture).
func (c *Capture) firstReading(ctx context.Context, ios *iostreams.IOStreams, names *clock.Names, opts []CaptureOption) (*Capture, error) {
	for _, o := range opts {
		o(c)
	}
	mode := capture.ChannelsOnly()
	if c.clocks {
		mode = capture.SkipPayloads()
	}
	first, err := c.Open(mode)
	chk := &checked{names: names, channels: map[channelKey]*channelState{}}
	if err == nil {
		// A regular file is read on every core (in parts, merged in
		// line order); anything else on a goroutine of its own.
		pf := replay.Prefetch(engine.WithContext(ctx, first))
		chk.src = pf
		var src engine.Source = chk
		if c.observe != nil {
			src = &observed{src, c.observe}
		}
		counted := &counting{src: src}
		c.Channels, err = engine.Discover(counted, names)
		pf.Close()
		c.read1.items, c.read1.lastLine = counted.items, counted.lastLine
	}

	if err == nil && len(c.Channels) == 0 {
		// Whatever the command: an empty capture was almost certainly
		// captured or named wrongly (docs/exit-codes.md).
		err = ErrEmptyCapture
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	for _, w := range chk.warnings {
		fmt.Fprintf(ios.ErrOut, "warning: %s: %s\n", escape.Text(c.Name), w)
	}
	if c.Stopped = first.Stopped(); c.Stopped != nil {
		fmt.Fprintf(ios.ErrOut, "warning: %s: %s\n", escape.Text(c.Name), StoppedWarning(c.Stopped))
	}
	return c, nil
}

// ErrEmptyCapture is the error of a capture without a single record,
// position or log-facts line: every command that reads captures refuses
// one (exit 1).
var ErrEmptyCapture = errors.New("holds no records or positions: an empty capture is an error")

// StoppedWarning says that a capture is partial (it ends in a stopped
// line): where it stopped and why.
func StoppedWarning(s *capture.Stopped) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the range is partial: the capture stopped (%s) at line %d after %s", escape.Text(s.Reason), s.Line, view.Count(s.Records, "record", "records"))
	for i, ch := range s.Channels {
		if i == 0 {
			b.WriteString("; unfinished: ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(ch.String())
	}
	return b.String()
}

// checked is the first reading of a capture, checked as a whole as it
// passes: what one line cannot show wrong. Refused (an *engine.InputError
// naming the line): a channel's offsets going backwards (SPEC §4), a second
// log-facts line for a channel. Warned about, since a broker can really
// report it (docs/capture-format.md §5): a record or position past the
// high watermark of the channel's log facts, a cleanup policy no Kafka
// knows, a negative retention.bytes other than −1.
type checked struct {
	src      engine.Source
	names    *clock.Names
	channels map[channelKey]*channelState
	warnings []string
}

// channelKey names a channel of checked: by topic UUID, or by name while
// nothing binds the name. A struct, not a string, as it is looked up for
// every line.
type channelKey struct {
	id        clock.TopicID
	topic     string // only when id is zero
	partition int32
}

// channelState is what checked keeps of a channel.
type channelState struct {
	last, lastLine int64 // the highest offset so far and its line; lastLine 0 before any
	facts          *record.LogFacts
	factsLine      int64
	pastEnd        bool // warned of an offset past the high watermark
}

func (c *checked) Next() (*record.Item, error) {
	it, err := c.src.Next()
	if err != nil {
		return it, err
	}
	// A channel by UUID where the line or the names bind one, else by
	// name: lines spelling one channel two ways are still one channel once
	// a line binds the name.
	key := channelKey{id: it.TopicID, partition: it.Partition}
	if key.id.IsZero() {
		if id, ok := c.names.ID(it.Topic); ok {
			key.id = id
		} else {
			key.topic = it.Topic
		}
	}
	st := c.channels[key]
	if st == nil {
		st = &channelState{}
		c.channels[key] = st
	}
	name := func() string {
		if it.Topic != "" {
			return fmt.Sprintf("%s/%d", it.Topic, it.Partition)
		}
		return fmt.Sprintf("%s/%d", it.TopicID, it.Partition)
	}
	if it.Kind == record.KindLogFacts {
		if st.facts != nil {
			return nil, engine.NewInputError(it, fmt.Errorf("a second log-facts line for the channel (the first is line %d)", st.factsLine))
		}
		st.facts, st.factsLine = it.Facts, it.Line
		if r := it.Facts.Retention; r != nil {
			if !r.PolicyKnown() {
				c.warnings = append(c.warnings, fmt.Sprintf("line %d: %s: cleanup policy \"%s\" is none Kafka knows (delete, compact): retention is not classified", it.Line, name(), escape.Text(r.CleanupPolicy)))
			}
			if r.Bytes < -1 {
				c.warnings = append(c.warnings, fmt.Sprintf("line %d: %s: retention.bytes %d, read as no limit (-1), as Kafka does", it.Line, name(), r.Bytes))
			}
		}
		return it, nil
	}
	if st.lastLine > 0 && it.Offset < st.last {
		ie := engine.NewInputError(it, fmt.Errorf("offset %d after offset %d (line %d): a channel's offsets must not decrease (SPEC §4)", it.Offset, st.last, st.lastLine))
		ie.Channel, ie.Offset = name(), it.Offset
		return nil, ie
	}
	st.last, st.lastLine = it.Offset, it.Line
	if f := st.facts; f != nil && !st.pastEnd && (it.Offset > f.HighWatermark || it.Kind == record.KindRecord && it.Offset == f.HighWatermark) {
		st.pastEnd = true
		c.warnings = append(c.warnings, fmt.Sprintf("line %d: %s: offset %d is past the high watermark %d of the log facts at line %d (written after the facts were read?)", it.Line, name(), it.Offset, f.HighWatermark, st.factsLine))
	}
	return it, nil
}

// CaptureOption changes how OpenCapture reads a capture the first time.
type CaptureOption func(*Capture)

// Observe hands every item of the first reading (kind, channel, offset and
// line only: capture.ChannelsOnly) to visit too, as it is read, for a
// command that needs more of that reading than channels and names: it
// then reads the capture once less. An error of visit ends the reading.
func Observe(visit func(*record.Item) error) CaptureOption {
	return func(c *Capture) { c.observe = visit }
}

// ObserveClocks makes the first reading read records in full but for
// payloads (capture.SkipPayloads), headers decoded, like a command's own
// second reading: for an Observe that needs the clocks, so that it can do
// without that second reading.
func ObserveClocks() CaptureOption {
	return func(c *Capture) { c.clocks = true }
}

// observed is a source whose items visit sees as they pass.
type observed struct {
	src   engine.Source
	visit func(*record.Item) error
}

func (o *observed) Next() (*record.Item, error) {
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
	if c.once != nil && !c.read {
		c.read = true
		sp, err := createSpool("causalctl-stdin-*.ndjson")
		if err != nil {
			return nil, fmt.Errorf("spooling %s: %w", c.Name, err)
		}
		c.spool = sp
		return capture.NewReader(io.TeeReader(c.once, &spoolWriter{f: sp.File}), opt...), nil
	}
	if c.first != nil {
		f := c.first
		c.first = nil
		return capture.NewReader(f, opt...), nil
	}
	path := c.path
	if c.spool != nil {
		if path = c.spool.reopenPath(); path == "" {
			// One open file for every reading: from its start each time.
			if _, err := c.spool.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("spooling %s: %w", c.Name, err)
			}
			return capture.NewReader(c.spool.File, opt...), nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if c.read1.stat && path == c.path {
		if fi, err := f.Stat(); err == nil && (fi.Size() != c.read1.size || !fi.ModTime().Equal(c.read1.modified)) {
			f.Close()
			return nil, fmt.Errorf("%w: %d bytes modified %s when first read, %d bytes modified %s now",
				ErrChanged, c.read1.size, c.read1.modified.UTC().Format(time.RFC3339Nano), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		}
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

// Close closes what Open opened and the spool (SpoolFile.Close).
func (c *Capture) Close() error {
	c.closeOpened()
	if c.spool != nil {
		c.spool.Close()
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

// counting passes a reading's items on, counting them and keeping the line
// of the last.
type counting struct {
	src             engine.Source
	items, lastLine int64
}

func (c *counting) Next() (*record.Item, error) {
	it, err := c.src.Next()
	if err == nil && it != nil {
		c.items++
		c.lastLine = max(c.lastLine, it.Line)
	}
	return it, err
}

// Verified passes a later reading of the capture on and fails it, naming
// the line, as soon as it is not the first reading again: an item past the
// first reading's last line, or, at its end, another number of items. (A
// file rewritten between the readings is refused when it is opened:
// Open.)
func (c *Capture) Verified(src engine.Source) engine.Source {
	if c.read1.items == 0 {
		return src
	}
	return &verified{src: src, want: c.read1, name: c.Name}
}

type verified struct {
	src             engine.Source
	name            string
	want            fingerprint
	items, lastLine int64
}

func (v *verified) Next() (*record.Item, error) {
	it, err := v.src.Next()
	switch {
	case err == io.EOF && (v.items != v.want.items || v.lastLine != v.want.lastLine):
		return nil, &engine.InputError{Line: v.lastLine, Offset: -1, Err: fmt.Errorf("%s: %w: %d items to line %d, %d items to line %d when first read",
			v.name, ErrChanged, v.items, v.lastLine, v.want.items, v.want.lastLine)}
	case err != nil || it == nil:
		return it, err
	}
	v.items++
	v.lastLine = max(v.lastLine, it.Line)
	if it.Line > v.want.lastLine {
		ie := engine.NewInputError(it, fmt.Errorf("%s: %w: the first reading ended at line %d", v.name, ErrChanged, v.want.lastLine))
		return nil, ie
	}
	return it, nil
}
