package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/charmbracelet/x/ansi"
)

// column is a column of the channels table.
type column int

const (
	colChannel column = iota
	colTask
	colSettled
	colReceived
	colLogEnd
	colHeld
	colHead
	colAge
	colWritten
	colCause
	colWaits
	numColumns
)

func (c column) title() string {
	switch c {
	case colChannel:
		return "CHANNEL"
	case colTask:
		return "TASK"
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
		return "HELD FOR"
	case colWritten:
		return "WRITTEN"
	case colCause:
		return "CAUSE"
	case colWaits:
		return "WAITS ON"
	}
	return "?"
}

// legend is the column's line in the help overlay, for a replay when
// offline.
func (c column) legend(offline bool) string {
	switch c {
	case colChannel:
		return "topic/partition; ▲ marks a channel whose head is held"
	case colTask:
		return "the Parsley task whose gate the channel is in (its partition); / task:N shows one task"
	case colSettled:
		return "highest offset settled: delivered, or passed with nothing to deliver"
	case colReceived:
		return "highest offset received (or advanced past)"
	case colLogEnd:
		return "the channel's last stable offset on the brokers"
	case colHeld:
		return "records held on the channel, the head included"
	case colHead:
		return "offset of the held head (the next record to deliver)"
	case colAge:
		if offline {
			return "how long the head has been held: since its record's timestamp, on the replay's clock"
		}
		return "how long the head has been held: since this view received it"
	case colWritten:
		return "age of the head since its record's timestamp: what `holds` reports"
	case colCause:
		return "why the head is held: the root cause of its wait chain, or its own cause when that says more (docs/holds.md)"
	case colWaits:
		return "the head's first unmet clock entry, and how many more"
	}
	return ""
}

// numeric reports whether c holds numbers (right-aligned, sized to its
// data).
func (c column) numeric() bool {
	return c != colChannel && c != colCause && c != colWaits
}

// descFirst says whether a first sort on c puts the largest first: the
// columns where big means trouble.
func (c column) descFirst() bool {
	return c == colHeld || c == colAge || c == colWritten || c == colHead
}

// live reports whether c is shown only for a live feed: a replay has no
// log ends, and its records are received at their timestamps, so WRITTEN
// would repeat HELD FOR.
func (c column) live() bool {
	return c == colLogEnd || c == colWritten
}

// dropOrder is the order columns are left out in when the terminal is too
// narrow for all: WRITTEN unless WAITS ON keeps wideWaits cells, then
// WAITS ON below minWaits (the detail pane has both), then HEAD and LOG
// END. CAUSE and the positions stay.
var dropOrder = [...]column{colWritten, colWaits, colHead, colLogEnd}

const (
	minWaits  = 16
	wideWaits = 40
	minChan   = 12
)

// table is the channels table: one row per channel, a cursor row that
// stays on its channel across snapshots, filtering, sorting by a chosen
// column, and scrolling.
type table struct {
	common
	rows    []view.ChannelRow // the snapshot's, never modified
	heads   []view.HeadDetail // the snapshot's, for the rows' causes
	offline bool
	tasks   bool // per-task gates: the TASK column is shown

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

// SetRows replaces the rows of a new snapshot keeping filter, sort and the
// cursor's channel.
func (t *table) SetRows(s *view.Snapshot) {
	// The cursor stays on its channel when the rows re-sort, whether or
	// not it was moved there.
	if t.selName == "" {
		t.remember()
	}
	rows := s.Channels
	t.rows, t.heads, t.offline, t.tasks = rows, s.Heads, s.Offline, s.Tasks != nil
	if t.offline && t.colCur.live() {
		t.colCur = colHeld
	}
	// Columns fit their widest value, their title with its sort marks, and
	// the channel column at most 40 cells. Widths are counted, not
	// formatted: this runs over every row of every snapshot.
	for c := range t.colW {
		t.colW[c] = len(column(c).title()) + 2
	}
	t.colW[colAge] = max(t.colW[colAge], 6) // view.AgeText is at most 6 cells
	t.colW[colWritten] = max(t.colW[colWritten], 6)
	for i := range rows {
		if c := t.cause(&rows[i]); len(c) > t.colW[colCause] {
			t.colW[colCause] = len(c)
		}
	}
	var settled, received, logEnd, head, held, task int64 = -1, -1, -1, -1, 0, 0
	for i := range rows {
		r := &rows[i]
		task = max(task, int64(r.Task))
		if n := len(r.Channel); n > t.colW[colChannel] {
			t.colW[colChannel] = max(t.colW[colChannel], ansi.StringWidth(r.Channel))
		}
		settled, received = max(settled, r.Settled), max(received, r.ReceivedUpTo)
		logEnd, head, held = max(logEnd, r.LogEnd), max(head, r.HeadOffset), max(held, int64(r.Held))
	}
	t.colW[colSettled] = max(t.colW[colSettled], len(startText(settled)))
	t.colW[colReceived] = max(t.colW[colReceived], len(startText(received)))
	t.colW[colLogEnd] = max(t.colW[colLogEnd], posWidth(logEnd))
	t.colW[colHead] = max(t.colW[colHead], posWidth(head))
	t.colW[colTask] = max(t.colW[colTask], posWidth(task))
	d := posWidth(held)
	t.colW[colHeld] = max(t.colW[colHeld], d+(d-1)/3) // count's groups of three
	t.colW[colChannel] = min(t.colW[colChannel], 40)
	t.rebuild()
}

// cause is the text of r's CAUSE cell: inspect's most telling cause of its
// head (the root cause of its wait chain, or its own when that says more),
// "?" when the head was not detailed (past the snapshot's cap), "" when
// nothing is held.
func (t *table) cause(r *view.ChannelRow) string {
	switch {
	case !r.Blocked:
		return ""
	case r.Head < 0 || r.Head >= len(t.heads):
		return unknownMark
	}
	return t.heads[r.Head].MostTelling().String()
}

// causeRank orders rows by the rank of their cause, rows without one last.
func (t *table) causeRank(r *view.ChannelRow) int {
	switch {
	case !r.Blocked:
		return len(inspect.Causes()) + 2
	case r.Head < 0 || r.Head >= len(t.heads):
		return len(inspect.Causes()) + 1
	}
	return t.heads[r.Head].MostTelling().Rank()
}

// shown returns the columns of the view: all but the live-only ones of a
// replay.
func (t *table) shown() []column {
	cols := make([]column, 0, numColumns)
	for c := colChannel; c < numColumns; c++ {
		if c.live() && t.offline || c == colTask && !t.tasks {
			continue
		}
		cols = append(cols, c)
	}
	return cols
}

// columns returns the columns that fit the width, leaving out those of
// dropOrder as needed.
func (t *table) columns() []column {
	cols := t.shown()
	for _, d := range dropOrder {
		k := slices.Index(cols, d)
		if k < 0 {
			continue
		}
		free := t.freeWidth(cols)
		switch {
		case d == colWritten && free >= wideWaits:
			return cols
		case d == colWaits && free >= minWaits:
			return cols
		case d != colWritten && d != colWaits && free >= 0:
			return cols
		}
		cols = slices.Delete(cols, k, k+1)
	}
	return cols
}

// gapAfter is the blank after column k of cols: one cell, three where a
// right-aligned column is followed by a left-aligned one (HELD FOR, then
// CAUSE), so that the two never read as one title.
func gapAfter(cols []column, k int) string {
	if k+1 < len(cols) && cols[k].numeric() && !cols[k+1].numeric() {
		return "   "
	}
	return " "
}

// gapsWidth is the width of all the blanks between cols.
func gapsWidth(cols []column) int {
	n := 0
	for k := range len(cols) - 1 {
		n += len(gapAfter(cols, k))
	}
	return n
}

// freeWidth is what is left of the width for WAITS ON (or, without it,
// spare) once cols are laid out with the channel column at its smallest.
func (t *table) freeWidth(cols []column) int {
	const prefix = 3 // cursor glyph, state glyph, space
	used := prefix + gapsWidth(cols)
	for _, c := range cols {
		switch c {
		case colWaits:
		case colChannel:
			used += min(t.colW[colChannel], minChan)
		default:
			used += t.colW[c]
		}
	}
	return t.width - used
}

// rowFilter is the filter parsed: words a row's channel (or topic UUID)
// must each contain, and the task it must be in, from a word task:N.
type rowFilter struct {
	words  []string
	task   int32
	byTask bool
}

func parseFilter(f string) rowFilter {
	var rf rowFilter
	for _, w := range strings.Fields(strings.ToLower(f)) {
		if n, ok := strings.CutPrefix(w, "task:"); ok {
			if k, err := strconv.ParseInt(n, 10, 32); err == nil {
				rf.task, rf.byTask = int32(k), true
				continue
			}
		}
		rf.words = append(rf.words, w)
	}
	return rf
}

func (rf *rowFilter) keeps(r *view.ChannelRow) bool {
	if rf.byTask && r.Task != rf.task {
		return false
	}
	for _, w := range rf.words {
		if !containsFold(r.Channel, w) && !strings.Contains(r.TopicID, w) {
			return false
		}
	}
	return true
}

// rebuild recomputes the view from rows, filter and sort.
func (t *table) rebuild() {
	t.view = t.view[:0]
	rf := parseFilter(t.filter)
	for i := range t.rows {
		if !rf.keeps(&t.rows[i]) {
			continue
		}
		t.view = append(t.view, i)
	}
	if t.sorted {
		t.sortView()
	} else {
		t.defaultOrder()
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

// defaultOrder puts blocked rows first, the oldest hold first (heads of
// unknown age after those of known age), then the rest; ties keep the
// snapshot's order, by channel.
func (t *table) defaultOrder() {
	rows := t.rows
	slices.SortStableFunc(t.view, func(a, b int) int {
		x, y := &rows[a], &rows[b]
		if x.Blocked != y.Blocked {
			if x.Blocked {
				return -1
			}
			return 1
		}
		return cmp.Compare(ageKey(y.HeadAge), ageKey(x.HeadAge))
	})
}

func (t *table) sortView() {
	col, desc := t.sortCol, t.desc
	rows := t.rows
	slices.SortStableFunc(t.view, func(a, b int) int {
		x, y := &rows[a], &rows[b]
		var r int
		switch col {
		case colTask:
			r = cmp.Compare(x.Task, y.Task)
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
		case colWritten:
			r = cmp.Compare(ageKey(x.HeadWritten), ageKey(y.HeadWritten))
		case colCause:
			r = cmp.Compare(t.causeRank(x), t.causeRank(y))
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

// SetFilter keeps the rows whose channel (or topic UUID) contains each
// word of f, in any case; a word task:N keeps task N's rows only.
func (t *table) SetFilter(f string) {
	t.filter = f
	t.rebuild()
}

// SortDefault goes back to the default order (blocked first, oldest hold
// first).
func (t *table) SortDefault() {
	t.sorted, t.desc = false, false
	t.rebuild()
}

// Sorted reports whether the rows are sorted by a column rather than in
// the default order.
func (t *table) Sorted() bool { return t.sorted }

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
func (t *table) Selected() *view.ChannelRow {
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

// widths returns the width of each of cols (columns()).
func (t *table) widths(cols []column) []int {
	const prefix = 3 // cursor glyph, state glyph, space
	ws := make([]int, len(cols))
	fixed := prefix + gapsWidth(cols)
	for k, c := range cols {
		if c != colChannel && c != colWaits {
			ws[k] = t.colW[c]
		}
		fixed += ws[k]
	}
	free := t.width - fixed
	waits := slices.Contains(cols, colWaits)
	// The channel column takes what it needs; WAITS ON the rest, at
	// least minWaits cells (the channel column shrinks first, down to
	// minChan). Without WAITS ON the last column takes what is left.
	ch := t.colW[colChannel]
	need := 0
	if waits {
		need = minWaits
	}
	if free-ch < need {
		ch = max(free-need, min(ch, minChan))
	}
	for k, c := range cols {
		switch c {
		case colChannel:
			ws[k] = ch
		case colWaits:
			ws[k] = max(free-ch, 4)
		}
	}
	if !waits && len(ws) > 0 {
		ws[len(ws)-1] += max(free-ch, 0)
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
			b.WriteString(gapAfter(cols, k))
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

func (t *table) row(r *view.ChannelRow, selected bool, cols []column, ws []int) string {
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
		case colTask:
			cell = fitRight(strconv.Itoa(int(r.Task)), ws[k])
		case colSettled:
			cell = fitRight(startText(r.Settled), ws[k])
		case colReceived:
			cell = fitRight(startText(r.ReceivedUpTo), ws[k])
		case colLogEnd:
			cell = fitRight(posText(r.LogEnd), ws[k])
		case colHeld:
			cell = fitRight(count(int64(r.Held)), ws[k])
		case colHead:
			cell = fitRight(heldText(r.Blocked, posText(r.HeadOffset)), ws[k])
		case colAge:
			cell = fitRight(heldText(r.Blocked, ageText(r.HeadAge)), ws[k])
		case colWritten:
			cell = fitRight(heldText(r.Blocked, ageText(r.HeadWritten)), ws[k])
		case colCause:
			cell = fit(t.cause(r), ws[k])
		case colWaits:
			cell = fit(r.Waits, ws[k])
		}
		b.WriteString(cell)
		if k < len(cols)-1 {
			b.WriteString(gapAfter(cols, k))
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
