package capture

// A small JSON tokenizer, enough for the scanner of scan.go: it reads in
// place in the line, validates as it goes (RFC 8259, UTF-8) and skips values
// it is not asked to interpret.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of objects and arrays accepted in a line,
// the same limit encoding/json applies.
const maxDepth = 10000

// plain marks the bytes a JSON string holds as they are, in ASCII: not
// '"', '\\' or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// ws skips JSON whitespace. A line holds no newline.
func (r *Reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte without consuming it; the
// end of the line is a truncation.
func (r *Reader) peek() (byte, error) {
	r.ws()
	if r.i >= len(r.b) {
		return 0, r.truncated()
	}
	return r.b[r.i], nil
}

// memberName reads `"name" :` and leaves r.i at the start of the value.
func (r *Reader) memberName() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, r.syntax("a field name")
	}
	name, _, err := r.scanString()
	if err != nil {
		return nil, err
	}
	return name, r.colon()
}

// colon reads the ':' after a field name and leaves r.i at the value.
func (r *Reader) colon() error {
	c, err := r.peek()
	if err != nil {
		return err
	}
	if c != ':' {
		return r.syntax("':'")
	}
	r.i++
	_, err = r.peek()
	return err
}

// null consumes a JSON null if one is next. r.i is at a value.
func (r *Reader) null() (bool, error) {
	if r.b[r.i] != 'n' {
		return false, nil
	}
	return true, r.literal("null")
}

// scanString reads the JSON string at r.i. It returns its contents: a slice
// of the line when the string holds no escape, else r.str holding the
// unescaped bytes (escaped is then true). The result is valid until the
// next call. Lone surrogate escapes become U+FFFD, as in encoding/json.
func (r *Reader) scanString() (s []byte, escaped bool, err error) {
	b := r.b
	start := r.i + 1
	i := start
	// Eight bytes at a time while none of them needs a look: the first byte
	// that does sets the lowest flagged bit (borrows only run upwards).
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (0x0101010101010101 * '"')
		e := x ^ (0x0101010101010101 * '\\')
		m := ((x-0x0101010101010101*0x20)&^x | (q-0x0101010101010101)&^q | (e-0x0101010101010101)&^e | x) & 0x8080808080808080
		if m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
		i += 8
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		r.i = i + 1
		return b[start:i], false, nil
	}
	out := append(r.str[:0], b[start:i]...)
	for {
		if i >= len(b) {
			r.i = i
			return nil, false, r.truncated()
		}
		c := b[i]
		switch {
		case c == '"':
			r.i = i + 1
			if !escaped {
				return b[start:i], false, nil
			}
			r.str = out
			return out, true, nil
		case c < 0x20:
			r.i = i
			return nil, false, &causeError{class: ErrSyntax, msg: fmt.Sprintf("invalid JSON at column %d: control character 0x%02x in a string (it must be escaped)", i+1, c)}
		case c < 0x80 && c != '\\':
			out = append(out, c)
			i++
		case c >= 0x80:
			rn, size := utf8.DecodeRune(b[i:])
			if rn == utf8.RuneError && size == 1 {
				if !utf8.FullRune(b[i:]) {
					// The line ends inside a character.
					r.i = len(b)
					return nil, false, r.truncated()
				}
				return nil, false, &causeError{class: ErrSyntax, msg: fmt.Sprintf("invalid UTF-8 in a string at column %d", i+1)}
			}
			out = append(out, b[i:i+size]...)
			i += size
		default:
			escaped = true
			if i+1 >= len(b) {
				r.i = i + 1
				return nil, false, r.truncated()
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rn, err := r.hex4(i + 2)
				if err != nil {
					return nil, false, err
				}
				i += 6
				if utf16.IsSurrogate(rn) {
					lo := rune(-1)
					if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
						if v, err := r.hex4(i + 2); err == nil {
							lo = v
						}
					}
					if d := utf16.DecodeRune(rn, lo); d != utf8.RuneError {
						rn = d
						i += 6
					} else {
						rn = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, rn)
				continue
			default:
				r.i = i + 1
				return nil, false, r.syntax(`an escape (\" \\ \/ \b \f \n \r \t \uXXXX)`)
			}
			i += 2
		}
	}
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func (r *Reader) hex4(i int) (rune, error) {
	var v rune
	for k := i; k < i+4; k++ {
		if k >= len(r.b) {
			r.i = k
			return 0, r.truncated()
		}
		c := r.b[k]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			r.i = k
			return 0, r.syntax(`a hex digit in a \u escape`)
		}
	}
	return v, nil
}

// skipValue checks and skips one JSON value of any kind at r.i, which sits
// inside depth levels of objects and arrays. It keeps its own stack of open
// brackets, so that no nesting can exhaust the goroutine's stack.
func (r *Reader) skipValue(depth int) error {
	r.nest = r.nest[:0]
	for {
		// A value is expected at r.i.
		c, err := r.peek()
		if err != nil {
			return err
		}
		switch {
		case c == '{' || c == '[':
			if depth+len(r.nest)+1 > maxDepth {
				return &causeError{class: ErrSyntax, msg: fmt.Sprintf("invalid JSON at column %d: nesting deeper than %d levels", r.i+1, maxDepth)}
			}
			r.i++
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			r.nest = append(r.nest, close)
			c, err := r.peek()
			if err != nil {
				return err
			}
			if c == close {
				r.i++
				r.nest = r.nest[:len(r.nest)-1]
			} else {
				if close == '}' {
					if _, err := r.memberName(); err != nil {
						return err
					}
				}
				continue // to the first member's value
			}
		case c == '"':
			if _, _, err := r.scanString(); err != nil {
				return err
			}
		case c == 't':
			err = r.literal("true")
		case c == 'f':
			err = r.literal("false")
		case c == 'n':
			err = r.literal("null")
		case c == '-' || c >= '0' && c <= '9':
			err = r.skipNumber()
		default:
			return r.syntax("a value")
		}
		if err != nil {
			return err
		}
		// After a value: close what ends here, or move to the next member.
		for {
			if len(r.nest) == 0 {
				return nil
			}
			c, err := r.peek()
			if err != nil {
				return err
			}
			top := r.nest[len(r.nest)-1]
			if c == top {
				r.i++
				r.nest = r.nest[:len(r.nest)-1]
				continue
			}
			if c != ',' {
				return r.syntax(fmt.Sprintf("',' or '%c'", top))
			}
			r.i++
			if top == '}' {
				if _, err := r.memberName(); err != nil {
					return err
				}
			}
			break
		}
	}
}

// skipNumber checks and skips a JSON number at r.i.
func (r *Reader) skipNumber() error {
	b, i := r.b, r.i
	digits := func(first bool) error {
		if i >= len(b) {
			r.i = i
			return r.truncated()
		}
		if b[i] < '0' || b[i] > '9' {
			r.i = i
			return r.syntax("a digit")
		}
		if first && b[i] == '0' {
			i++
			return nil
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return nil
	}
	if b[i] == '-' {
		i++
	}
	if err := digits(true); err != nil {
		return err
	}
	if i < len(b) && b[i] == '.' {
		i++
		if err := digits(false); err != nil {
			return err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if err := digits(false); err != nil {
			return err
		}
	}
	r.i = i
	return nil
}

// literal consumes word (true, false or null) at r.i.
func (r *Reader) literal(word string) error {
	rest := r.b[r.i:]
	n := min(len(rest), len(word))
	for k := 0; k < n; k++ {
		if rest[k] != word[k] {
			r.i += k
			return r.syntax(fmt.Sprintf("%q", word))
		}
	}
	r.i += n
	if n < len(word) {
		return r.truncated()
	}
	return nil
}

// syntax reports unexpected input at r.i, or a truncation at the end of the
// line.
func (r *Reader) syntax(want string) error {
	if r.i >= len(r.b) {
		return r.truncated()
	}
	c := r.b[r.i]
	var got string
	if c >= 0x20 && c < 0x7f {
		got = fmt.Sprintf("%q", rune(c))
	} else {
		got = fmt.Sprintf("byte 0x%02x", c)
	}
	return &causeError{class: ErrSyntax, msg: fmt.Sprintf("invalid JSON at column %d: unexpected %s, want %s", r.i+1, got, want)}
}

// truncated reports a line that ends inside its JSON object.
func (r *Reader) truncated() error {
	if r.eof {
		return &causeError{class: ErrTruncated, msg: "truncated JSON (missing newline at end of file?)"}
	}
	return &causeError{class: ErrTruncated, msg: "truncated JSON: the line ends inside the object"}
}

// describe quotes a JSON value for an error message, shortened when long.
func describe(raw []byte) string {
	const max = 40
	if len(raw) <= max {
		return string(raw)
	}
	n := max - 3
	for n > 0 && !utf8.RuneStart(raw[n]) {
		n--
	}
	return string(raw[:n]) + "..."
}
