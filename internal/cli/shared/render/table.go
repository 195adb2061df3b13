package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/charmbracelet/x/ansi"
)

// The one rule of every table a command prints (docs/tables.md):
//
//   - plain columns two spaces apart, on a terminal and in a pipe alike:
//     no box, so awk, cut and sort read what a person reads;
//   - titles in capitals, a space in a title written as '-', so every
//     title is one field;
//   - numbers (Column.Right) right-aligned, everything else left;
//   - on a terminal the table fits its width: columns are left out in the
//     order of their Column.Drop (highest first), then the widest left
//     column is cut with "…", and one line under the table names what was
//     left out; in a pipe nothing is left out or cut.
const (
	columnGap = 2
	// DefaultWidth is the width assumed of a terminal that does not say.
	DefaultWidth = 80
)

// Column is a column of a Table.
type Column struct {
	Title string
	// Right aligns the column's cells to the right: numbers.
	Right bool
	// Drop is the column's place in the order columns are left out in on
	// a narrow terminal, highest first; 0 keeps it always.
	Drop int
}

// Table is a table of text cells laid out by the rule above.
type Table struct {
	cols []Column
	rows [][]string
}

// NewTable returns an empty table of cols.
func NewTable(cols ...Column) *Table { return &Table{cols: cols} }

// Append adds a row; cells past the columns are ignored, missing ones are
// empty.
func (t *Table) Append(cells ...string) {
	row := make([]string, len(t.cols))
	copy(row, cells)
	t.rows = append(t.rows, row)
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Width is the width a table on ios's Out must fit: the terminal's
// (DefaultWidth when it does not say), 0 (no limit) in a pipe.
func Width(ios *iostreams.IOStreams) int {
	if !ios.OutTTY {
		return 0
	}
	if ios.Width > 0 {
		return ios.Width
	}
	return DefaultWidth
}

// Write writes the table to w within width columns (0: no limit).
func (t *Table) Write(w io.Writer, width int) error {
	shown := make([]int, 0, len(t.cols))
	for k := range t.cols {
		shown = append(shown, k)
	}
	ws := make([]int, len(t.cols))
	for k, c := range t.cols {
		ws[k] = ansi.StringWidth(title(c.Title))
		for _, r := range t.rows {
			ws[k] = max(ws[k], ansi.StringWidth(r[k]))
		}
	}
	total := func() int {
		n := columnGap * (len(shown) - 1)
		for _, k := range shown {
			n += ws[k]
		}
		return n
	}
	var dropped []string
	if width > 0 {
		// Leave out columns, highest Drop first, until the rest fit.
		order := slices.Clone(shown)
		slices.SortStableFunc(order, func(a, b int) int { return t.cols[b].Drop - t.cols[a].Drop })
		for _, k := range order {
			if total() <= width || t.cols[k].Drop == 0 || len(shown) == 1 {
				break
			}
			shown = slices.DeleteFunc(shown, func(x int) bool { return x == k })
			dropped = append(dropped, title(t.cols[k].Title))
		}
		// Then cut the widest left-aligned column, no narrower than its title.
		for over := total() - width; over > 0; over = total() - width {
			widest := -1
			for _, k := range shown {
				if !t.cols[k].Right && ws[k] > ansi.StringWidth(title(t.cols[k].Title)) && (widest < 0 || ws[k] > ws[widest]) {
					widest = k
				}
			}
			if widest < 0 {
				break
			}
			ws[widest] = max(ws[widest]-over, ansi.StringWidth(title(t.cols[widest].Title)), 1)
		}
	}
	var b strings.Builder
	line := func(cells func(k int) string) {
		var l strings.Builder
		for i, k := range shown {
			cell := ansi.Truncate(cells(k), ws[k], "…")
			pad := strings.Repeat(" ", ws[k]-ansi.StringWidth(cell))
			last := i == len(shown)-1
			if t.cols[k].Right {
				l.WriteString(pad + cell)
			} else {
				l.WriteString(cell + pad)
			}
			if !last {
				l.WriteString(strings.Repeat(" ", columnGap))
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n") // no blanks at the end of a line
	}
	line(func(k int) string { return title(t.cols[k].Title) })
	for _, r := range t.rows {
		line(func(k int) string { return r[k] })
	}
	if len(dropped) > 0 {
		note := fmt.Sprintf("Not shown at %d columns: %s (a wider terminal, a pipe or -o json shows all).",
			width, strings.Join(dropped, ", "))
		b.WriteString(ansi.Wordwrap(note, width, "") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// title is a column title as every table prints it: capitals, one field.
func title(s string) string {
	return strings.ReplaceAll(strings.ToUpper(s), " ", "-")
}
