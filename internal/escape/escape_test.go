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

func TestCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"payments", "payments"},
		{"two words", `two\x20words`},
		{"tab\there\xff", `tab\there\xff`},
		{"\x1b[2J", `\x1b[2J`},
	} {
		if got := Cell(c.in); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDeep(t *testing.T) {
	type kind string
	type inner struct {
		Name  string
		Kind  kind
		Names map[string][]string
	}
	type report struct {
		App    *string
		Inner  inner
		List   []inner
		Any    any
		Count  int
		hidden string
	}
	evil := "EVIL\x1b[2J\xff"
	in := report{App: &evil, Inner: inner{Name: evil, Kind: kind(evil), Names: map[string][]string{evil: {evil}}},
		List: []inner{{Name: evil}}, Any: evil, Count: 3, hidden: "kept"}
	out := Deep(in)
	const want = `EVIL\x1b[2J\xff`
	if *out.App != want || out.Inner.Name != want || string(out.Inner.Kind) != want || out.Inner.Names[want][0] != want ||
		out.List[0].Name != want || out.Any != want || out.Count != 3 || out.hidden != "kept" {
		t.Errorf("Deep = %+v", out)
	}
	if *in.App != evil || in.Inner.Name != evil || in.List[0].Name != evil {
		t.Error("Deep changed its input")
	}
}
