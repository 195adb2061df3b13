package capture

// A fast path for the lines the Writer writes. A record or position line
// spelled exactly as AppendItem spells it (fields in its order, no
// whitespace, no escapes, ASCII only) is read here with one pass of plain
// comparisons, in place. Anything else — and any doubt — makes fastLine
// give up before it has changed anything the caller sees, and the full
// scanner of scan.go reads the line from its start: errors are always the
// scanner's, and a line the fast path accepts is one the scanner accepts
// with the very same item (FuzzFastLine holds the two to that).

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/causalctl/causalctl/internal/clock"
)

// fastLine reads line into r.item when it is a record or position line in
// the Writer's layout, and reports whether it did. r.line is the line's
// number.
func (r *Reader) fastLine(line []byte) bool {
	if r.noFast {
		return false
	}
	s := line
	it := &r.item
	*it = Item{Line: r.line}
	r.data = r.data[:0]
	r.hdrs = r.hdrs[:0]
	var ok bool
	if s, ok = cut(s, `{`); !ok {
		return false
	}
	named := false
	if rest, ok := cut(s, `"topic":"`); ok {
		var name []byte
		if name, s, ok = plainString(rest); !ok {
			return false
		}
		if r.lastTopic != "" && string(name) == r.lastTopic {
			it.Topic = r.lastTopic
		} else {
			t, err := r.topic(name)
			if err != nil {
				return false
			}
			it.Topic, r.lastTopic = t, t
		}
		named = true
		if s, ok = cut(s, `,`); !ok {
			return false
		}
	}
	if rest, ok := cut(s, `"topic_id":"`); ok {
		var id []byte
		if id, s, ok = plainString(rest); !ok || len(id) != 36 {
			return false
		}
		if string(id) == string(r.lastTopicID[:]) {
			it.TopicID = r.lastID
		} else {
			v, err := r.topicID(id)
			if err != nil {
				return false
			}
			it.TopicID = v
			copy(r.lastTopicID[:], id)
			r.lastID = v
		}
		named = true
		if s, ok = cut(s, `,`); !ok {
			return false
		}
	}
	if !named {
		return false
	}
	var v int64
	if s, ok = cut(s, `"partition":`); !ok {
		return false
	}
	if v, s, ok = digits(s, math.MaxInt32); !ok {
		return false
	}
	it.Partition = int32(v)
	if rest, ok := cut(s, `,"position":`); ok {
		if it.Offset, s, ok = digits(rest, math.MaxInt64); !ok || string(s) != "}" {
			return false
		}
		it.Kind = KindPosition
		return true
	}
	if s, ok = cut(s, `,"offset":`); !ok {
		return false
	}
	if it.Offset, s, ok = digits(s, math.MaxInt64); !ok {
		return false
	}
	if rest, ok := cut(s, `,"timestamp":`); ok {
		neg := false
		if rest, neg = cut(rest, `-`); neg && len(rest) > 0 && rest[0] == '0' {
			return false // -0 and -0… are the scanner's
		}
		if v, s, ok = digits(rest, math.MaxInt64); !ok {
			return false
		}
		if neg {
			v = -v
		}
		if r.skip != skipAllButChannel {
			it.Timestamp, it.HasTimestamp = v, true
		}
	}
	if rest, ok := cut(s, `,"headers":[`); ok {
		if s, ok = r.fastHeaders(rest); !ok {
			return false
		}
	}
	if rest, ok := cut(s, `,"key":`); ok {
		if it.Key, s, ok = r.fastBytes(rest); !ok {
			return false
		}
	}
	if rest, ok := cut(s, `,"value":`); ok {
		if it.Value, s, ok = r.fastBytes(rest); !ok {
			return false
		}
	}
	if string(s) != "}" {
		return false
	}
	it.Kind = KindRecord
	if n := len(r.hdrs); n > 0 {
		it.Headers = r.hdrs[:n:n]
	}
	return true
}

// fastHeaders reads the header objects of a list whose '[' is consumed, and
// its ']', returning what follows.
func (r *Reader) fastHeaders(s []byte) ([]byte, bool) {
	if rest, ok := cut(s, `]`); ok {
		return rest, true
	}
	for {
		var ok bool
		if s, ok = cut(s, `{"key":"`); !ok {
			return nil, false
		}
		var key []byte
		if key, s, ok = plainString(s); !ok {
			return nil, false
		}
		if s, ok = cut(s, `,"value":`); !ok {
			return nil, false
		}
		var h []byte
		if r.skip == skipAllButChannel {
			if s, ok = skipFastValue(s); !ok {
				return nil, false
			}
		} else {
			if h, s, ok = r.fastDecode(s); !ok {
				return nil, false
			}
			r.hdrs = append(r.hdrs, clock.Header{Key: r.headerKey(key), Value: h})
		}
		if s, ok = cut(s, `}`); !ok {
			return nil, false
		}
		if rest, ok := cut(s, `]`); ok {
			return rest, true
		}
		if s, ok = cut(s, `,`); !ok {
			return nil, false
		}
	}
}

// fastBytes reads the value of "key" or "value" as the reader's skip mode
// asks: decoded, validated only (nil result), or followed only.
func (r *Reader) fastBytes(s []byte) ([]byte, []byte, bool) {
	if rest, ok := cut(s, `null`); ok {
		return nil, rest, true
	}
	switch r.skip {
	case skipAllButChannel:
		rest, ok := skipFastValue(s)
		return nil, rest, ok
	case skipPayloads:
		body, rest, ok := quoted(s)
		if !ok || !validBase64(body) {
			return nil, nil, false
		}
		return nil, rest, true
	}
	return r.fastDecode(s)
}

// fastDecode decodes a base64 string or null into r.data.
func (r *Reader) fastDecode(s []byte) ([]byte, []byte, bool) {
	if rest, ok := cut(s, `null`); ok {
		return nil, rest, true
	}
	body, rest, ok := quoted(s)
	if !ok {
		return nil, nil, false
	}
	if len(body) == 0 {
		return emptyBytes, rest, true
	}
	// The decoder skips CR and LF, which a JSON string must not hold raw
	// (a line holds no LF).
	if bytes.IndexByte(body, '\r') >= 0 {
		return nil, nil, false
	}
	start := len(r.data)
	d, err := b64.AppendDecode(r.data, body)
	if err != nil {
		r.data = r.data[:start]
		return nil, nil, false
	}
	r.data = d
	return d[start:len(d):len(d)], rest, true
}

// skipFastValue passes over null or a plain string (see plainString).
func skipFastValue(s []byte) ([]byte, bool) {
	if rest, ok := cut(s, `null`); ok {
		return rest, true
	}
	if len(s) == 0 || s[0] != '"' {
		return nil, false
	}
	_, rest, ok := plainString(s[1:])
	return rest, ok
}

// quoted returns the contents of the string s starts with, up to the next
// quote, unchecked, and what follows it.
func quoted(s []byte) (body, rest []byte, ok bool) {
	if len(s) == 0 || s[0] != '"' {
		return nil, nil, false
	}
	end := bytes.IndexByte(s[1:], '"')
	if end < 0 {
		return nil, nil, false
	}
	return s[1 : 1+end], s[2+end:], true
}

// plainString reads the rest of a string whose opening quote is consumed,
// when it holds only printable ASCII and no escape: its contents, and what
// follows its closing quote.
func plainString(s []byte) (body, rest []byte, ok bool) {
	end := bytes.IndexByte(s, '"')
	if end < 0 || !plainASCII(s[:end]) {
		return nil, nil, false
	}
	return s[:end], s[end+1:], true
}

// plainASCII reports whether s holds only bytes 0x20–0x7f other than '\\'
// ('"' is the caller's to exclude), eight bytes at a time.
func plainASCII(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	word := func(x uint64) uint64 {
		e := x ^ (ones * '\\')
		return (x-ones*0x20)&^x | (e-ones)&^e | x
	}
	i := 0
	var bad uint64
	for ; i+32 <= len(s); i += 32 {
		bad |= word(binary.LittleEndian.Uint64(s[i:])) | word(binary.LittleEndian.Uint64(s[i+8:])) |
			word(binary.LittleEndian.Uint64(s[i+16:])) | word(binary.LittleEndian.Uint64(s[i+24:]))
	}
	for ; i+8 <= len(s); i += 8 {
		bad |= word(binary.LittleEndian.Uint64(s[i:]))
	}
	if bad&highs != 0 {
		return false
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// digits reads a non-negative JSON integer no larger than hi that ends
// where s ends or before ',' or '}'. Nineteen digits cannot overflow a
// uint64.
func digits(s []byte, hi int64) (int64, []byte, bool) {
	n := 0
	var v uint64
	for n < len(s) && n < 20 && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + uint64(s[n]-'0')
		n++
	}
	switch {
	case n == 0 || n > 19 || n > 1 && s[0] == '0' || v > uint64(hi):
		return 0, nil, false
	case n < len(s) && s[n] != ',' && s[n] != '}':
		return 0, nil, false
	}
	return int64(v), s[n:], true
}

// cut returns s after prefix, if s starts with it.
func cut(s []byte, prefix string) ([]byte, bool) {
	if len(s) < len(prefix) || string(s[:len(prefix)]) != prefix {
		return s, false
	}
	return s[len(prefix):], true
}
