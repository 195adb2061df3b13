// Package escape makes strings that come from a broker or a file safe to
// print for people: transactional ids, topic and group names, header keys,
// member and client ids. Text output and shell completion pass every such
// string through Text, so that no terminal control byte reaches the screen
// and no newline forges a line of output.
package escape

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with everything that is not a printable character
// escaped as Go writes it in a quoted string: control bytes (\n, \r, \t,
// \x1b, \a, …, and C1 controls \u0085…), invalid UTF-8 bytes (\xff),
// bidirectional overrides and isolates (\u202e), line separators and other
// invisible format characters (\u2028, \u200b). A string that needs none
// of this is returned as it is, without allocating.
func Text(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return text(s, i)
		}
	}
	return s
}

// text escapes s from byte i on; s[:i] needs no escaping.
func text(s string, i int) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(digits[s[i]>>4])
			b.WriteByte(digits[s[i]&0xf])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// Safe reports whether s holds nothing Text would escape: no control
// byte, invalid UTF-8 or invisible format character. For tests that assert
// output is safe to print.
func Safe(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == '\n' || (r != ' ' && !unicode.IsPrint(r)) {
			return false
		}
	}
	return true
}
