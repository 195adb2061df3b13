package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/causalctl/causalctl/internal/clock"
)

// DefaultMaxLineSize is the longest line a Reader accepts unless told
// otherwise: 16 MiB, not counting the newline.
const DefaultMaxLineSize = 16 << 20

// readBufferSize is the size of the Reader's read buffer. Lines shorter than
// this are parsed where they lie in the buffer, without a copy.
const readBufferSize = 64 << 10

// The classes of error. Every error from Reader.Next is a *LineError, and
// errors.Is tells which class its cause belongs to; a read error of the
// underlying reader belongs to none. ErrUnwritable is the Writer's.
var (
	// ErrSyntax: the line is not valid JSON, or not a JSON object.
	ErrSyntax = errors.New("invalid JSON")
	// ErrTruncated: the line ends inside its JSON object. On the last line
	// of a file without a final newline this usually means the file was cut.
	ErrTruncated = errors.New("truncated JSON")
	// ErrLineTooLong: the line is longer than MaxLineSize.
	ErrLineTooLong = errors.New("line too long")
	// ErrField: the line is valid JSON but a field is missing, duplicated,
	// of the wrong type or out of range, or a base64 value is corrupt.
	ErrField = errors.New("invalid field")
	// ErrUnwritable: Writer.Write or AppendItem was given an item that no
	// capture line can express.
	ErrUnwritable = errors.New("item not writable")
)

// LineError reports a line of a capture file that cannot be read, or a read
// error of the underlying reader while reading that line.
type LineError struct {
	Line int64 // 1-based line number
	Err  error // the cause; its message is a single line
}

// Error returns "line N: cause".
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// causeError is the cause of a LineError raised by the parser: a message
// and the class it belongs to.
type causeError struct {
	class error
	msg   string
	wrap  error // an underlying error (base64, topic UUID), may be nil
}

func (e *causeError) Error() string { return e.msg }

func (e *causeError) Unwrap() []error {
	if e.wrap == nil {
		return []error{e.class}
	}
	return []error{e.class, e.wrap}
}

// ReaderOption changes how a Reader reads.
type ReaderOption func(*readerConfig)

type readerConfig struct {
	maxLine int
	skip    skipMode
}

// skipMode says which parts of a record line the reader may pass over.
type skipMode uint8

const (
	skipNothing       skipMode = iota
	skipPayloads               // key and value: validated, not decoded
	skipAllButChannel          // timestamp, headers, key, value: only their JSON syntax is followed
)

// SkipPayloads makes the reader validate record keys and values without
// decoding them: Item.Key and Item.Value are always nil. For readers, like
// replay, that never look at payloads.
func SkipPayloads() ReaderOption { return func(c *readerConfig) { c.skip = skipPayloads } }

// ChannelsOnly makes the reader follow the JSON of timestamps, headers,
// keys and values without checking or decoding them: items carry their
// kind, channel and offset only. For a first pass that learns which
// channels a file holds; a second, full reading still finds every error.
func ChannelsOnly() ReaderOption { return func(c *readerConfig) { c.skip = skipAllButChannel } }

// MaxLineSize sets the longest line accepted, in bytes, not counting the
// newline (default DefaultMaxLineSize). A longer line is an ErrLineTooLong
// error, found without holding more than n bytes of it in memory. n ≤ 0
// restores the default.
func MaxLineSize(n int) ReaderOption {
	return func(c *readerConfig) {
		if n <= 0 {
			n = DefaultMaxLineSize
		}
		c.maxLine = n
	}
}

// Reader reads the items of a capture file one line at a time. It never
// holds more than one line (and a fixed read buffer) in memory, and in
// steady state it does not allocate. It is not safe for concurrent use.
//
// What it accepts (SPEC §4), exactly; anything else is an error naming the
// line, and nothing is guessed:
//
//   - One JSON object per line (RFC 8259, UTF-8; invalid UTF-8 anywhere is
//     an error; \u escapes of lone surrogates read as U+FFFD, as in
//     encoding/json; nesting up to 10000 levels, as in encoding/json). A
//     line ends at "\n"; a "\r" before it is whitespace. Lines of JSON
//     whitespace only are skipped. The last line needs no newline.
//   - A line with "offset" is a record, one with "position" a position
//     line; both or neither is an error. "partition" is required, and
//     "topic" or "topic_id" or both.
//   - "partition": an integer in [0, 2^31-1]; "offset", "position": an
//     integer in [0, 2^63-1]; "timestamp": any int64 (milliseconds since the
//     epoch). Integers are JSON integers: 1.5, 1e3 and "1" are errors.
//   - "topic": a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -, not "."
//     or ".."); "topic_id": a non-zero topic UUID, 8-4-4-4-12, any case.
//   - "headers": a list of {"key": string, "value": base64 or null}, in
//     order, duplicates kept; a missing "value" is null.
//   - "key", "value" and header values: standard base64 with padding and
//     zero padding bits (one spelling per value), or null. null gives a nil
//     slice, "" an empty non-nil one (downstream, null-value and truncated
//     differ).
//   - null for an optional field ("topic", "topic_id", "timestamp",
//     "headers", "key", "value") means absent; for "partition", "offset"
//     or "position" it is an error. A position line must not carry
//     timestamp, headers, key or value.
//   - Other fields are ignored, whatever their value. A field name given
//     twice in the line object or in a header object is an error.
type Reader struct {
	src     io.Reader // what br reads, for Parallel
	cfg     readerConfig
	br      *bufio.Reader
	maxLine int
	line    int64 // number of the last line read
	err     error // sticky: returned by every Next after the first error

	// A part of a file read by a ParallelReader's worker: pos counts the
	// bytes consumed, and lines starting at or past limit (when > 0) are
	// the next part's. Only the part at the file's start may begin with a
	// byte order mark (bom).
	pos   int64
	limit int64
	bom   bool

	long []byte // a line that did not fit the read buffer
	item Item   // returned by Next, overwritten by the next call

	// Per-line parse state.
	b         []byte // the line being parsed, without its newline
	i         int    // parse position in b
	eof       bool   // the line has no newline: it ends the file
	str       []byte // unescaped string scratch
	data      []byte // decoded base64 of the current line (headers, key, value)
	hdrs      []clock.Header
	lineNames nameSet // unknown field names of the line object
	hdrNames  nameSet // unknown field names of the current header object
	nest      []byte  // open brackets while skipping a nested value

	// Interned strings, so that the same name is not allocated per line.
	topics   map[string]string
	hkeys    map[string]string
	topicIDs map[string]clock.TopicID

	skip skipMode

	// The fast path's state: noFast turns it off (for tests holding it to
	// the scanner); the last topic name and topic UUID spelling it read,
	// to skip the interning tables on the next line of the same topic.
	noFast      bool
	lastTopic   string
	lastTopicID [36]byte
	lastID      clock.TopicID

	pending *Stopped // the stopped line being parsed
	stopped *Stopped // the stopped line read, which ends the items
}

// kindStopped marks the stopped line while it is parsed; it is never
// returned.
const kindStopped Kind = 255

// Stopped returns the stopped line of the file (capture-format §4b) once
// Next has reached it — a capture that did not finish its range — or nil.
// Next returns io.EOF at the stopped line, and refuses any line after it.
func (r *Reader) Stopped() *Stopped { return r.stopped }

// NewReader returns a Reader reading the capture file r.
func NewReader(r io.Reader, opts ...ReaderOption) *Reader {
	cfg := readerConfig{maxLine: DefaultMaxLineSize}
	for _, o := range opts {
		o(&cfg)
	}
	return &Reader{
		src:      r,
		cfg:      cfg,
		br:       bufio.NewReaderSize(r, readBufferSize),
		maxLine:  cfg.maxLine,
		bom:      true,
		skip:     cfg.skip,
		topics:   make(map[string]string),
		hkeys:    make(map[string]string),
		topicIDs: make(map[string]clock.TopicID),
	}
}

// Next returns the next item of the file, skipping blank lines, or io.EOF
// after the last one. Any other error is a *LineError naming the line; once
// Next has returned an error it returns the same error on every later call.
//
// The returned Item, and the byte slices and header list it holds, belong
// to the Reader and are overwritten by the next call to Next: copy what must
// outlive it. Strings (topic names, header keys) are immutable and may be
// kept. A record without headers has nil Headers.
func (r *Reader) Next() (*Item, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		if r.limit > 0 && r.pos >= r.limit {
			r.err = io.EOF
			return nil, io.EOF
		}
		line, eof, err := r.readLine()
		if err != nil {
			if err != io.EOF {
				err = &LineError{Line: r.line, Err: err}
			}
			r.err = err
			return nil, err
		}
		if r.line == 1 && r.bom {
			// A byte order mark, which editors on Windows write before
			// UTF-8 text, is not part of the first line.
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		blank, err := r.parse(line, eof)
		if err != nil {
			r.err = &LineError{Line: r.line, Err: err}
			return nil, r.err
		}
		if blank {
			continue
		}
		if r.stopped != nil {
			r.err = &LineError{Line: r.line, Err: fieldError(fmt.Sprintf("a line after the stopped line (line %d), which ends the capture", r.stopped.Line))}
			return nil, r.err
		}
		if r.item.Kind == kindStopped {
			r.stopped, r.pending = r.pending, nil
			continue
		}
		return &r.item, nil
	}
}

var utf8BOM = []byte("\ufeff")

// readLine returns the next line without its newline, and whether it was
// the last line of a file that does not end in a newline. It returns io.EOF
// when no bytes are left.
func (r *Reader) readLine() (line []byte, eof bool, err error) {
	chunk, err := r.br.ReadSlice('\n')
	r.pos += int64(len(chunk))
	if err == nil {
		r.line++
		line = chunk[:len(chunk)-1]
		if len(line) > r.maxLine {
			return nil, false, r.tooLong()
		}
		return line, false, nil
	}
	if err == io.EOF {
		if len(chunk) == 0 {
			return nil, false, io.EOF
		}
		r.line++
		if len(chunk) > r.maxLine {
			return nil, false, r.tooLong()
		}
		return chunk, true, nil
	}
	if err != bufio.ErrBufferFull {
		r.line++
		return nil, false, fmt.Errorf("read: %w", err)
	}
	// The line is longer than the read buffer: gather it in r.long, never
	// holding more than maxLine bytes of it.
	r.line++
	r.long = r.long[:0]
	for {
		full := err == nil
		n := len(chunk)
		if full {
			n-- // the newline
		}
		if len(r.long)+n > r.maxLine {
			return nil, false, r.tooLong()
		}
		if len(r.long)+n > cap(r.long) {
			// Grow by doubling, but never past the limit.
			grown := make([]byte, len(r.long), min(max(2*cap(r.long), len(r.long)+n), r.maxLine))
			copy(grown, r.long)
			r.long = grown
		}
		r.long = append(r.long, chunk[:n]...)
		switch {
		case full:
			return r.long, false, nil
		case err == io.EOF:
			return r.long, true, nil
		case err != bufio.ErrBufferFull:
			return nil, false, fmt.Errorf("read: %w", err)
		}
		chunk, err = r.br.ReadSlice('\n')
		r.pos += int64(len(chunk))
	}
}

func (r *Reader) tooLong() error {
	return &causeError{class: ErrLineTooLong, msg: fmt.Sprintf("line is longer than the limit of %d bytes", r.maxLine)}
}
