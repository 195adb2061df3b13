package processes

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/olekukonko/tablewriter"
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
	header := slices.Clone(view.ProcessColumns)
	rows := make([][]string, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		rows = append(rows, view.ProcessCells(&r))
	}
	if ios.OutTTY {
		t := tablewriter.NewTable(ios.Out)
		t.Header(header)
		if err := t.Bulk(rows); err != nil {
			return err
		}
		return t.Render()
	}
	// Plain columns: no cell holds a space, so awk and cut read them.
	tw := tabwriter.NewWriter(ios.Out, 0, 8, 2, ' ', 0)
	header[10], header[11] = "MAX-LAG", "NEXT-START"
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, cells := range rows {
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
