package render

import (
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/charmbracelet/x/ansi"
)

func sample() *Table {
	t := NewTable(Column{Title: "Name"}, Column{Title: "Count", Right: true}, Column{Title: "Long note", Drop: 1}, Column{Title: "Kind"})
	t.Append("a", "7", "something long enough to need room", "x")
	t.Append("bbbbbbbbbb", "12345", "short", "yy")
	return t
}

// TestTableRule: plain columns two spaces apart, titles one field each,
// numbers right-aligned, no blanks at the end of a line; nothing left out
// without a width.
func TestTableRule(t *testing.T) {
	var b strings.Builder
	if err := sample().Write(&b, 0); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"NAME        COUNT  LONG-NOTE                           KIND\n" +
		"a               7  something long enough to need room  x\n" +
		"bbbbbbbbbb  12345  short                               yy\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestTableFits: on a narrow terminal the droppable column goes first and
// the table says so; narrower still, the widest left column is cut with …;
// no line is wider than the terminal.
func TestTableFits(t *testing.T) {
	for _, width := range []int{60, 30, 22} {
		var b strings.Builder
		if err := sample().Write(&b, width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("width %d: line of %d: %q", width, w, l)
			}
		}
		header, _, _ := strings.Cut(out, "\n")
		if width < 60 && (strings.Contains(header, "LONG-NOTE") || !strings.Contains(out, "Not shown at")) {
			t.Errorf("width %d: LONG-NOTE not left out, or not said:\n%s", width, out)
		}
		if width == 60 && (!strings.Contains(out, "something long enough to need room") || strings.Contains(out, "Not shown")) {
			t.Errorf("width 60: the table fits whole:\n%s", out)
		}
		if width == 22 && !strings.Contains(out, "…") {
			t.Errorf("width 22: no cell cut:\n%s", out)
		}
	}
}

// TestWidth: a pipe has no limit; a terminal its width, 80 when unknown.
func TestWidth(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	if w := Width(ios); w != 0 {
		t.Errorf("pipe: %d", w)
	}
	ios.SetTTY(true)
	if w := Width(ios); w != DefaultWidth {
		t.Errorf("unknown terminal: %d", w)
	}
	ios.Width = 132
	if w := Width(ios); w != 132 {
		t.Errorf("132-column terminal: %d", w)
	}
}
