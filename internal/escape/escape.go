// Package escape makes strings that come from a broker or a file safe to
// print for people: transactional ids, topic and group names, header keys,
// member and client ids. Text output and shell completion pass every such
// string through Text, so that no terminal control byte reaches the screen
// and no newline forges a line of output.
package escape

import (
	"reflect"
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

// Cell is Text for one cell of plain columns that awk and cut split on
// blanks: a space is written \x20 as well, so that no name shifts the
// columns after it. Text already escapes tabs and text/tabwriter's escape
// byte (\xff), so no name breaks a table's layout either.
func Cell(s string) string {
	s = Text(s)
	if !strings.Contains(s, " ") {
		return s
	}
	return strings.ReplaceAll(s, " ", `\x20`)
}

// Deep returns a copy of v with every string in it passed through Text:
// the strings of its exported struct fields, slices, arrays, maps (keys
// too), pointers and interfaces, named string types included. A renderer
// of a report escapes the report once, at its door, so that no field it
// prints, today's or one added later, reaches the screen raw. Unexported
// fields are copied as they are.
func Deep[T any](v T) T { return Strings(v, Text) }

// Strings returns a copy of v with every string in it passed through f, as
// Deep does with Text. Tests use it to fill a report with hostile names.
func Strings[T any](v T, f func(string) string) T {
	in := reflect.ValueOf(&v).Elem()
	out := reflect.New(in.Type()).Elem()
	deep(out, in, f)
	return out.Interface().(T)
}

func deep(dst, src reflect.Value, f func(string) string) {
	switch src.Kind() {
	case reflect.String:
		dst.SetString(f(src.String()))
	case reflect.Pointer:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		p := reflect.New(src.Type().Elem())
		deep(p.Elem(), src.Elem(), f)
		dst.Set(p)
	case reflect.Struct:
		dst.Set(src) // unexported fields as they are
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				deep(dst.Field(i), src.Field(i), f)
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deep(s.Index(i), src.Index(i), f)
		}
		dst.Set(s)
	case reflect.Array:
		for i := range src.Len() {
			deep(dst.Index(i), src.Index(i), f)
		}
	case reflect.Map:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			k, v := reflect.New(src.Type().Key()).Elem(), reflect.New(src.Type().Elem()).Elem()
			deep(k, it.Key(), f)
			deep(v, it.Value(), f)
			m.SetMapIndex(k, v)
		}
		dst.Set(m)
	case reflect.Interface:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		e := reflect.New(src.Elem().Type()).Elem()
		deep(e, src.Elem(), f)
		dst.Set(e)
	default:
		dst.Set(src)
	}
}
