package processes

import (
	"fmt"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/view"
)

// SchemaVersion names the JSON document processes writes and its version.
const SchemaVersion = render.ProcessesSchema

type jsonReport = render.ProcessesJSON

// report is the command's output: the rows, in application id order.
type report = render.ProcessesReport

func write(rep report, ios *iostreams.IOStreams, format string) error {
	if format == "json" {
		b, err := render.JSONLine(rep.JSON())
		if err != nil {
			return err
		}
		_, err = ios.Out.Write(b)
		return err
	}
	if len(rep.Rows) == 0 {
		_, err := fmt.Fprintln(ios.Out, "No Parsley processes (no topic named …-__parsley.ordering-changelog).")
		return err
	}
	t := render.NewTable(processColumns()...)
	for _, r := range rep.Rows {
		t.Append(view.ProcessCells(&r, view.UpstreamOf(rep.Roots, r.App))...)
	}
	return t.Write(ios.Out, render.Width(ios))
}

// processColumns are view.ProcessColumns as the table lays them out: the
// counts right-aligned; on a narrow terminal FROM goes first, then MEMBERS,
// RECEIVES, TASKS, GROUP, MAX LAG and RETENTION, so that what is held, why and for how long
// stays.
func processColumns() []render.Column {
	drop := map[string]int{"FROM": 7, "MEMBERS": 6, "RECEIVES": 5, "TASKS": 4, "GROUP": 3, "MAX LAG": 2, "RETENTION": 1}
	right := map[string]bool{"TASKS": true, "MEMBERS": true, "HELD": true, "HEADS": true, "OLDEST": true, "MAX LAG": true}
	cols := make([]render.Column, 0, len(view.ProcessColumns))
	for _, title := range view.ProcessColumns {
		cols = append(cols, render.Column{Title: title, Right: right[title], Drop: drop[title]})
	}
	return cols
}
