package resetplan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/escape"
)

// SchemaVersion names the JSON document reset-plan writes and its version.
const SchemaVersion = "causalctl.reset-plan/v1"

// The JSON document (docs/reset.md, docs/schemas/reset-plan.schema.json):
// the boundary record to keep. Fields are null when unknown, never left out.
type jsonPlan struct {
	Schema           string          `json:"schema"`
	App              string          `json:"app"`
	Group            string          `json:"group"`
	Changelog        string          `json:"changelog"`
	ChangelogMissing bool            `json:"changelog_missing"`
	Now              string          `json:"now"`
	Ready            bool            `json:"ready"`
	Preconditions    []jsonCheck     `json:"preconditions"`
	Boundary         []jsonPartition `json:"boundary"`
	StoreChangelogs  []string        `json:"store_changelogs"`
	Commands         []string        `json:"commands"`
}

type jsonCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, fail or unchecked
	Detail string `json:"detail"`
}

type jsonPartition struct {
	Channel            string `json:"channel"`
	Committed          *int64 `json:"committed"`
	Resume             int64  `json:"resume"`
	LogStart           int64  `json:"log_start"`
	End                int64  `json:"end"`
	HeldRecords        int    `json:"held_records"`
	OldestWrittenMsAgo *int64 `json:"oldest_written_ms_ago"`
	EarliestReads      int64  `json:"earliest_reads"`
	EarliestAgain      int64  `json:"earliest_delivered_again"`
	LatestSkips        int64  `json:"latest_skips"`
}

func (c Check) status() string {
	switch {
	case c.Skipped:
		return "unchecked"
	case c.OK:
		return "ok"
	}
	return "fail"
}

func (pl *Plan) json() jsonPlan {
	out := jsonPlan{Schema: SchemaVersion, App: pl.App, Group: pl.Group, Changelog: pl.Changelog, ChangelogMissing: pl.ChangelogMissing,
		Now: render.Time(pl.Now), Ready: len(pl.Failed()) == 0, Preconditions: []jsonCheck{}, Boundary: []jsonPartition{},
		StoreChangelogs: append([]string{}, pl.StoreChangelogs...), Commands: append([]string{}, pl.Commands...)}
	for _, c := range pl.Checks {
		out.Preconditions = append(out.Preconditions, jsonCheck{Name: c.Name, Status: c.status(), Detail: c.Detail})
	}
	for _, b := range pl.Boundary {
		jp := jsonPartition{Channel: b.Channel, Resume: b.Resume, LogStart: b.LogStart, End: b.End, HeldRecords: b.Held,
			EarliestReads: b.EarliestReads, EarliestAgain: b.EarliestAgain, LatestSkips: b.LatestSkips}
		if b.Committed >= 0 {
			c := b.Committed
			jp.Committed = &c
		}
		if b.Dated {
			ms := b.OldestAge.Milliseconds()
			jp.OldestWrittenMsAgo = &ms
		}
		out.Boundary = append(out.Boundary, jp)
	}
	return out
}

func write(w io.Writer, format string, pl *Plan) error {
	if format == "json" {
		b, err := render.JSONLine(pl.json())
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	_, err := io.WriteString(w, text(pl))
	return err
}

// text is the plan for people: the checks, the boundary, the choices, the
// commands.
func text(pl *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Reset plan for %s (group %s, ordering changelog %s) at %s.\n\n", escape.Text(pl.App), escape.Text(pl.Group), escape.Text(pl.Changelog), render.Time(pl.Now))
	b.WriteString("Preconditions:\n")
	for _, c := range pl.Checks {
		fmt.Fprintf(&b, "  %-9s %s: %s\n", strings.ToUpper(c.status()), c.Name, c.Detail)
	}
	b.WriteString("\nBoundary (keep it: -o json):\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  CHANNEL\tCOMMITTED\tLOG-START\tEND\tHELD\tOLDEST")
	for _, p := range pl.Boundary {
		committed, oldest := "-", "-"
		if p.Committed >= 0 {
			committed = fmt.Sprint(p.Committed)
		}
		if p.Dated {
			oldest = p.OldestAge.Round(1e9).String()
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%s\n", escape.Text(p.Channel), committed, p.LogStart, p.End, p.Held, oldest)
	}
	tw.Flush()
	b.WriteString("\nInitial position, per channel (declared on each channel before the start):\n")
	for _, p := range pl.Boundary {
		fmt.Fprintf(&b, "  %s: EARLIEST reads %s (from offset %d to the end, %d), %s of them delivered before: delivered again, their effects sent again; LATEST skips %s from %d, never delivered\n",
			escape.Text(p.Channel), render.Count(p.EarliestReads, "record", "records"), p.LogStart, p.End, fmt.Sprint(p.EarliestAgain),
			render.Count(p.LatestSkips, "record", "records"), max(p.Resume, p.LogStart))
	}
	b.WriteString("\nCommands, in this order (another order gives a different refusal, not a reset):\n")
	for i, c := range pl.Commands {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, escape.Text(c))
	}
	if failed := pl.Failed(); len(failed) > 0 {
		var names []string
		for _, c := range failed {
			names = append(names, c.Name)
		}
		fmt.Fprintf(&b, "\nNot ready: %s failing (%s).\n", render.Count(len(failed), "precondition", "preconditions"), strings.Join(names, ", "))
	}
	return b.String()
}
