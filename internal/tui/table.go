package tui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/charmbracelet/x/ansi"
)

// column is a column of the channels table.
type column int

const (
	colChannel column = iota
	colSettled
	colReceived
	colLogEnd
	colHeld
	colHead
	colAge
	colWaits
	numColumns
)

func (c column) title() string {
	switch c {
	case colChannel:
		return "CHANNEL"
	case colSettled:
		return "SETTLED"
	case colReceived:
		return "RECEIVED"
	case colLogEnd:
		return "LOG END"
	case colHeld:
		return "HELD"
	case colHead:
		return "HEAD"
	case colAge:
		return "AGE"
	case colWaits:
		return "WAITS ON"
	}
	return "?"
}

// numeric reports whether c holds numbers (right-aligned, sized to its
// data).
func (c column) numeric() bool {
	return c != colChannel && c != colWaits
}

// descFirst says whether a first sort on c puts the largest first: the
// columns where big means trouble.
func (c column) descFirst() bool {
	return c == colHeld || c == colAge || c == colHead
}

// table is the channels table: one row per channel, a cursor row that
// stays on its channel across snapshots, filtering, sorting by a chosen
// column, and scrolling.
type table struct {
	common
	rows    []inspect.ChannelRow // the snapshot's, never modified
	offline bool

	view     []int // indexes into rows: filtered, sorted
	filter   string
	sortCol  column
	sorted   bool
	desc     bool
	colCur   column // the column s sorts by
	selected int    // index into view
	selName  string // channel of the cursor row
	offset   int    // first view index on screen
	colW     [numColumns]int
}

func newTable(c common) *table {
	return &table{common: c}
}

// SetRows replaces the rows (a new snapshot) keeping filter, sort and the
// cursor's channel.
func (t *table) SetRows(rows []inspect.ChannelRow, offline bool) {
	t.rows, t.offline = rows, offline
	if offline && t.colCur == colLogEnd {
		t.colCur = colHeld
	}
	// Columns fit their widest value, their title with its sort marks, and
	// the channel column at most 40 cells. Widths are counted, not
	// formatted: this runs over every row of every snapshot.
	for c := range t.colW {
		t.colW[c] = len(column(c).title()) + 2
	}
	t.colW[colAge] = max(t.colW[colAge], 6) // Age.String is at most 6 cells
	var settled, received, logEnd, head, held int64 = -1, -1, -1, -1, 0
	for i := range rows {
		r := &rows[i]
		if n := len(r.Channel); n > t.colW[colChannel] {
			t.colW[colChannel] = max(t.colW[colChannel], ansi.StringWidth(r.Channel))
		}
		settled, received = max(settled, r.Settled), max(received, r.ReceivedUpTo)
		logEnd, head, held = max(logEnd, r.LogEnd), max(head, r.HeadOffset), max(held, int64(r.Held))
	}
	t.colW[colSettled] = max(t.colW[colSettled], posWidth(settled))
	t.colW[colReceived] = max(t.colW[colReceived], posWidth(received))
	t.colW[colLogEnd] = max(t.colW[colLogEnd], posWidth(logEnd))
	t.colW[colHead] = max(t.colW[colHead], posWidth(head))
	d := posWidth(held)
	t.colW[colHeld] = max(t.colW[colHeld], d+(d-1)/3) // count's groups of three
	t.colW[colChannel] = min(t.colW[colChannel], 40)
	t.rebuild()
}

func (t *table) columns() []column {
	cols := make([]column, 0, numColumns)
	for c := colChannel; c < numColumns; c++ {
		if c == colLogEnd && t.offline {
			continue
		}
		cols = append(cols, c)
	}
	return cols
}

// rebuild recomputes the view from rows, filter and sort.
func (t *table) rebuild() {
	t.view = t.view[:0]
	f := strings.ToLower(t.filter)
	for i := range t.rows {
		r := &t.rows[i]
		if f != "" && !containsFold(r.Channel, f) && !strings.Contains(r.TopicID, f) {
			continue
		}
		t.view = append(t.view, i)
	}
	if t.sorted {
		t.sortView()
	}
	t.selected = 0
	if t.selName != "" {
		for k, i := range t.view {
			if t.rows[i].Channel == t.selName {
				t.selected = k
				break
			}
		}
	}
	t.clamp()
}

func (t *table) sortView() {
	col, desc := t.sortCol, t.desc
	rows := t.rows
	slices.SortStableFunc(t.view, func(a, b int) int {
		x, y := &rows[a], &rows[b]
		var r int
		switch col {
		case colSettled:
			r = cmp.Compare(x.Settled, y.Settled)
		case colReceived:
			r = cmp.Compare(x.ReceivedUpTo, y.ReceivedUpTo)
		case colLogEnd:
			r = cmp.Compare(x.LogEnd, y.LogEnd)
		case colHeld:
			r = cmp.Compare(x.Held, y.Held)
		case colHead:
			r = cmp.Compare(x.HeadOffset, y.HeadOffset)
		case colAge:
			r = cmp.Compare(ageKey(x.HeadAge), ageKey(y.HeadAge))
		case colWaits:
			r = strings.Compare(x.Waits, y.Waits)
		}
		if desc {
			r = -r
		}
		if r == 0 {
			r = cmp.Compare(a, b) // the snapshot's order: by name
			if desc && col == colChannel {
				r = -r
			}
		}
		return r
	})
}

// containsFold reports whether s contains the lower-case lower, ignoring
// the case of ASCII letters in s, without allocating.
func containsFold(s, lower string) bool {
	if isASCII(s) {
		for i := 0; i+len(lower) <= len(s); i++ {
			k := 0
			for k < len(lower) && toLowerASCII(s[i+k]) == lower[k] {
				k++
			}
			if k == len(lower) {
				return true
			}
		}
		return false
	}
	return strings.Contains(strings.ToLower(s), lower)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func toLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// posWidth is the width of posText(p).
func posWidth(p int64) int {
	if p < 0 {
		return 1
	}
	n := 1
	for ; p >= 10; p /= 10 {
		n++
	}
	return n
}

func ageKey(a inspect.Age) int64 {
	if !a.Known {
		return -1
	}
	return int64(a.D)
}

// SetFilter keeps the rows whose channel (or topic UUID) contains f, in
// any case.
func (t *table) SetFilter(f string) {
	t.filter = f
	t.rebuild()
}

// MoveColumn moves the sort column cursor by d, skipping hidden columns.
func (t *table) MoveColumn(d int) {
	cols := t.columns()
	k := slices.Index(cols, t.colCur)
	if k < 0 {
		k = 0
	}
	k = (k + d + len(cols)) % len(cols)
	t.colCur = cols[k]
}

// Sort sorts by the column under the column cursor, or reverses the order
// when already sorted by it.
func (t *table) Sort() {
	if t.sorted && t.sortCol == t.colCur {
		t.desc = !t.desc
	} else {
		t.sortCol, t.sorted, t.desc = t.colCur, true, t.colCur.descFirst()
	}
	t.rebuild()
}

// Move moves the cursor by d rows.
func (t *table) Move(d int) {
	t.selected += d
	t.clamp()
	t.remember()
}

// Top and Bottom move the cursor to the first and last row.
func (t *table) Top() { t.selected = 0; t.clamp(); t.remember() }

// Bottom moves the cursor to the last row.
func (t *table) Bottom() { t.selected = len(t.view) - 1; t.clamp(); t.remember() }

// pageRows is the number of rows on screen.
func (t *table) pageRows() int { return max(t.height-1, 1) }

func (t *table) remember() {
	if r := t.Selected(); r != nil {
		t.selName = r.Channel
	}
}

func (t *table) clamp() {
	t.selected = max(min(t.selected, len(t.view)-1), 0)
	page := t.pageRows()
	if t.selected < t.offset {
		t.offset = t.selected
	}
	if t.selected >= t.offset+page {
		t.offset = t.selected - page + 1
	}
	t.offset = max(min(t.offset, len(t.view)-page), 0)
}

// Selected returns the cursor row, nil when the view is empty.
func (t *table) Selected() *inspect.ChannelRow {
	if t.selected < len(t.view) {
		return &t.rows[t.view[t.selected]]
	}
	return nil
}

// SetSize sets the size and keeps the cursor on screen.
func (t *table) SetSize(w, h int) {
	t.common.SetSize(w, h)
	t.clamp()
}

// widths returns the width of each shown column and of the row prefix.
func (t *table) widths(cols []column) []int {
	const prefix = 3 // cursor glyph, state glyph, space
	ws := make([]int, len(cols))
	fixed := prefix
	for k, c := range cols {
		if c.numeric() {
			ws[k] = t.colW[c]
		}
		fixed += ws[k] + 1
	}
	ch := t.colW[colChannel]
	free := t.width - fixed
	// The channel column takes what it needs; WAITS ON the rest, at
	// least 16 cells (the channel column shrinks first, down to 12).
	const minWaits = 16
	if free-ch < minWaits {
		ch = max(free-minWaits, 12)
	}
	for k, c := range cols {
		switch c {
		case colChannel:
			ws[k] = ch
		case colWaits:
			ws[k] = max(free-ch, 4)
		}
	}
	return ws
}

// View renders the column titles and the rows on screen.
func (t *table) View() string {
	st := t.styles
	cols := t.columns()
	ws := t.widths(cols)
	var b strings.Builder

	// Titles: the column cursor is marked ▸, the sorted column ↑ or ↓.
	b.WriteString("   ")
	for k, c := range cols {
		title := c.title()
		if t.sorted && c == t.sortCol {
			if t.desc {
				title += st.Glyphs.SortDesc
			} else {
				title += st.Glyphs.SortAsc
			}
		}
		if c == t.colCur {
			title = "▸" + title
		}
		var cell string
		if c.numeric() {
			cell = fitRight(title, ws[k])
		} else {
			cell = fit(title, ws[k])
		}
		style := st.TableHeader
		if c == t.colCur {
			style = st.TableHeaderActive
		}
		b.WriteString(style.Render(cell))
		if k < len(cols)-1 {
			b.WriteByte(' ')
		}
	}

	page := t.pageRows()
	if len(t.view) == 0 {
		b.WriteString("\n")
		msg := "no channels in scope"
		if t.filter != "" {
			msg = "no channel matches “" + t.filter + "”"
		}
		b.WriteString(st.Muted.Render(fit("   "+msg, t.width)))
	}
	for k := t.offset; k < len(t.view) && k < t.offset+page; k++ {
		b.WriteByte('\n')
		b.WriteString(t.row(&t.rows[t.view[k]], k == t.selected, cols, ws))
	}
	lines := strings.Split(b.String(), "\n")
	return strings.Join(clipLines(lines, t.height), "\n")
}

func (t *table) row(r *inspect.ChannelRow, selected bool, cols []column, ws []int) string {
	st := t.styles
	cur := " "
	if selected {
		cur = st.Glyphs.Selected
	}
	glyph := " "
	switch {
	case r.Undecodable != "":
		glyph = st.Glyphs.Undecodable
	case r.Blocked:
		glyph = st.Glyphs.Blocked
	}
	var b strings.Builder
	for k, c := range cols {
		var cell string
		switch c {
		case colChannel:
			cell = fit(r.Channel, ws[k])
		case colSettled:
			cell = fitRight(posText(r.Settled), ws[k])
		case colReceived:
			cell = fitRight(posText(r.ReceivedUpTo), ws[k])
		case colLogEnd:
			cell = fitRight(posText(r.LogEnd), ws[k])
		case colHeld:
			cell = fitRight(count(int64(r.Held)), ws[k])
		case colHead:
			cell = fitRight(posText(r.HeadOffset), ws[k])
		case colAge:
			cell = fitRight(r.HeadAge.String(), ws[k])
		case colWaits:
			cell = fit(r.Waits, ws[k])
		}
		b.WriteString(cell)
		if k < len(cols)-1 {
			b.WriteByte(' ')
		}
	}
	body := b.String()
	switch {
	case selected:
		return st.SelectedRow.Render(cur + glyph + " " + body)
	case r.Blocked:
		return cur + st.BlockedGlyph.Render(glyph) + " " + st.BlockedRow.Render(body)
	}
	return cur + glyph + " " + st.Row.Render(body)
}
