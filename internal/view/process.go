package view

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/upstream"
)

// ProcessColumns are the titles of ProcessCells.
var ProcessColumns = []string{"APP", "TASKS", "GROUP", "MEMBERS", "RECEIVES", "FROM", "HELD", "HEADS", "OLDEST", "CAUSES", "MAX LAG", "UPSTREAM", "RETENTION", "NEXT START"}

// ProcessCells are the table cells of a process's row (`processes`, its
// chooser), in the order of ProcessColumns, root its upstream root (nil
// when none); none holds a space, a control byte or text/tabwriter's
// escape byte \xff, whatever the broker named (escape.Cell), so plain
// columns split on blanks and tables keep their layout.
func ProcessCells(r *inspect.ProcessSummary, root *upstream.Root) []string {
	tasks := strconv.Itoa(int(r.Tasks))
	if r.Err != nil {
		return []string{escape.Cell(r.App), tasks, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "unread"}
	}
	group, members := "-", "-"
	if r.Group != nil {
		group, members = escape.Cell(r.Group.State), strconv.Itoa(len(r.Group.Members))
	}
	cells := make([]string, len(r.Receives))
	for i, topic := range r.Receives {
		cells[i] = escape.Cell(topic)
	}
	receives := strings.Join(cells, ",")
	if receives == "" {
		receives = "-"
	}
	oldest := AgeText(inspect.Age{D: r.Oldest, Known: r.Dated})
	if r.Undated > 0 {
		u := "undated:" + strconv.Itoa(r.Undated)
		if r.Dated {
			oldest += "+" + u
		} else {
			oldest = u
		}
	}
	var causes []string
	for _, c := range slices.Sorted(maps.Keys(r.Causes)) {
		causes = append(causes, string(c)+":"+strconv.Itoa(r.Causes[c]))
	}
	causeText := strings.Join(causes, ",")
	if causeText == "" {
		causeText = "-"
	}
	lag := "-"
	if r.LagKnown {
		lag = strconv.FormatInt(r.MaxLag, 10)
	}
	held := strconv.Itoa(r.HeldRecords)
	if r.ReadOnPartial {
		// The read on stopped at its bound: at least this many.
		held += "+PARTIAL"
	}
	return []string{escape.Cell(r.App), tasks, group, members, receives, escape.Cell(r.ReceivesFrom), held, strconv.Itoa(r.HeldHeads),
		oldest, causeText, lag, escape.Cell(root.Text()), retentionCell(r.RetentionLeft()), escape.Cell(r.NextStart)}
}

// UpstreamOf is app's upstream root in roots; nil when it has none.
func UpstreamOf(roots map[string]upstream.Root, app string) *upstream.Root {
	if r, ok := roots[app]; ok {
		return &r
	}
	return nil
}

// retentionCell is the retention clock that runs out first as a cell:
// "-" when none runs, "passed" once retention passed a read position, the
// time left, or "?" when it is not known.
func retentionCell(c *inspect.RetentionClock) string {
	switch {
	case c == nil:
		return "-"
	case c.Passed():
		return "passed"
	case !c.Known:
		return "?"
	case c.Left <= 0:
		return "0s"
	}
	return AgeText(inspect.Age{D: c.Left, Known: true})
}
