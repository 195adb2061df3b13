package testutil

import (
	"strings"
	"testing"
)

// Hostile are strings a broker or a file may hand causalctl where a name
// or an id is expected: terminal escape sequences, a bell, a carriage
// return that overwrites the line, a newline that forges one, a bidi
// override that reverses what follows, invalid UTF-8. Each carries the
// marker "EVIL" so that tests find where it landed.
var Hostile = []string{
	"EVIL\x1b[2J\x1b]0;pwned\x07",
	"EVIL\rcausalctl: all clear",
	"EVIL\nforged line",
	"EVIL\u202egnp.exe",
	"EVIL\xff\xfe",
	"EVIL\u009b31m",
}

// NoRawHostile fails unless out holds no raw control byte (but the
// newlines that end lines), bidi override or invalid byte of Hostile, and
// no line that a Hostile string's newline started.
func NoRawHostile(t testing.TB, what, out string) {
	t.Helper()
	for _, raw := range []string{"\x1b", "\x07", "\r", "\u202e", "\xff", "\u009b"} {
		if strings.Contains(out, raw) {
			t.Errorf("%s: %q reaches the output raw:\n%q", what, raw, out)
		}
	}
	if strings.Contains(out, "\nforged line") {
		t.Errorf("%s: a newline forged a line:\n%q", what, out)
	}
}
