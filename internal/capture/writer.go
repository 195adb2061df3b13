package capture

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/causalctl/causalctl/internal/clock"
)

// Writer writes items as capture lines in canonical form: compact JSON,
// fields in the order topic, topic_id, partition, offset (or position),
// timestamp, headers, key, value, topic_id in lowercase, strings escaped as
// little as JSON allows (no HTML escaping). The same items always give the
// same bytes, and a Reader reads them back as they were written.
//
// Output is buffered: call Flush when done.
type Writer struct {
	bw  *bufio.Writer
	buf []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
}

// Write writes it as one line: a record line for KindRecord, a position
// line for KindPosition. Item.Line is not written. An item that no capture
// line can express — no topic name or UUID, an invalid topic name, a
// negative partition or offset, a header key that is not UTF-8, record
// fields on a position — is refused with an error and nothing is written.
func (w *Writer) Write(it *Item) error {
	b, err := AppendItem(w.buf[:0], it)
	w.buf = b[:0]
	if err != nil {
		return err
	}
	_, err = w.bw.Write(b)
	return err
}

// Flush writes any buffered lines to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// AppendItem appends the capture line of it, newline included, to dst. It
// refuses the items Writer.Write refuses, returning dst unchanged.
func AppendItem(dst []byte, it *Item) ([]byte, error) {
	if err := checkItem(it); err != nil {
		return dst, err
	}
	b := append(dst, '{')
	sep := false
	if it.Topic != "" {
		b = append(b, `"topic":`...)
		b = appendJSONString(b, it.Topic)
		sep = true
	}
	if !it.TopicID.IsZero() {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"topic_id":"`...)
		b = appendTopicID(b, it.TopicID)
		b = append(b, '"')
	}
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(it.Partition), 10)
	if it.Kind == KindLogFacts {
		facts, err := json.Marshal(it.Facts)
		if err != nil {
			return dst, fmt.Errorf("capture: cannot write log facts: %w", err)
		}
		b = append(b, `,"log_facts":`...)
		b = append(b, facts...)
		return append(b, "}\n"...), nil
	}
	if it.Kind == KindPosition {
		b = append(b, `,"position":`...)
		b = strconv.AppendInt(b, it.Offset, 10)
		if it.Gap != nil {
			b = appendGap(b, it.Gap)
		}
		return append(b, "}\n"...), nil
	}
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, it.Offset, 10)
	if it.HasTimestamp {
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, it.Timestamp, 10)
	}
	b = append(b, `,"headers":[`...)
	for i, h := range it.Headers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendJSONString(b, h.Key)
		b = append(b, `,"value":`...)
		b = appendBase64(b, h.Value)
		b = append(b, '}')
	}
	b = append(b, `],"key":`...)
	b = appendBase64(b, it.Key)
	b = append(b, `,"value":`...)
	b = appendBase64(b, it.Value)
	return append(b, "}\n"...), nil
}

// checkItem refuses an item that no capture line can express.
func checkItem(it *Item) error {
	var problem string
	switch {
	case it.Kind != KindRecord && it.Kind != KindPosition && it.Kind != KindLogFacts:
		problem = fmt.Sprintf("kind %d is neither a record, a position nor log facts", it.Kind)
	case it.Kind == KindLogFacts && it.Facts == nil:
		problem = "log facts without facts"
	case it.Kind == KindLogFacts && checkFacts(it.Facts) != nil:
		problem = checkFacts(it.Facts).Error()
	case it.Topic == "" && it.TopicID.IsZero():
		problem = "neither a topic name nor a topic UUID"
	case it.Topic != "" && clock.CheckTopicName(it.Topic) != nil:
		problem = clock.CheckTopicName(it.Topic).Error()
	case it.Partition < 0:
		problem = fmt.Sprintf("negative partition %d", it.Partition)
	case it.Offset < 0:
		problem = fmt.Sprintf("negative offset %d", it.Offset)
	case it.Kind != KindRecord && (it.HasTimestamp || len(it.Headers) > 0 || it.Key != nil || it.Value != nil):
		problem = "a " + it.Kind.String() + " line with a timestamp, headers, key or value"
	case it.Gap != nil && it.Kind != KindPosition:
		problem = "a gap on a " + it.Kind.String() + " line"
	case it.Gap != nil && checkGap(it.Gap, it.Offset) != nil:
		problem = checkGap(it.Gap, it.Offset).Error()
	}
	if problem == "" {
		for i, h := range it.Headers {
			if !utf8.ValidString(h.Key) {
				problem = fmt.Sprintf("header %d: key %q is not UTF-8", i+1, h.Key)
				break
			}
		}
	}
	if problem != "" {
		return fmt.Errorf("capture: cannot write %s: %w: %s", it.Kind, ErrUnwritable, problem)
	}
	return nil
}

// appendBase64 appends b as a JSON string of standard base64, or null.
func appendBase64(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendTopicID appends id in the canonical lowercase form, as
// clock.TopicID.String writes it, without allocating.
func appendTopicID(dst []byte, id clock.TopicID) []byte {
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
}

// appendJSONString appends s, valid UTF-8, as a JSON string. It escapes
// only what JSON requires, plus U+2028 and U+2029 (as encoding/json does,
// for JavaScript), and uses the short escapes where they exist.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			dst = append(dst, s[last:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xf])
			i += size
			last = i
			continue
		}
		dst = append(dst, s[last:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		last = i
	}
	dst = append(dst, s[last:]...)
	return append(dst, '"')
}
