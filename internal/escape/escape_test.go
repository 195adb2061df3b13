package escape

import (
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"payments-tx", "payments-tx"},
		{"ünïcødé ✓ 注文", "ünïcødé ✓ 注文"},
		{"a b", "a b"},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\a`},
		{"one\ntwo\r\tthree", `one\ntwo\r\tthree`},
		{"\u202egnp.exe", `\u202egnp.exe`},
		{"\u2066x\u2069\u200f\u061c", `\u2066x\u2069\u200f\u061c`},
		{"\u2028\u2029\u200b", `\u2028\u2029\u200b`},
		{"\u0085\u009b31m", `\u0085\u009b31m`},
		{"bad\xff\xc3", `bad\xff\xc3`},
		{`back\slash`, `back\slash`},
		{"\x00\x7f", `\x00\x7f`},
	} {
		got := Text(c.in)
		if got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
		if !Safe(got) {
			t.Errorf("Text(%q) = %q is not safe", c.in, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Text("orders-tx.1") }); n != 0 {
		t.Errorf("a plain string allocates %v times", n)
	}
}

// TestSafe: Safe refuses what Text escapes.
func TestSafe(t *testing.T) {
	for _, s := range []string{"\x1b", "\n", "\r", "\x07", "\u202e", "\xff", "\u0085"} {
		if Safe("x" + s) {
			t.Errorf("Safe(%q)", s)
		}
	}
	if !Safe(`ok ✓ \n`) || !utf8.ValidString(Text("\xff")) {
		t.Error("Safe refuses plain text")
	}
}
