package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/history"
)

// exportReport is replay --parsley-export -o json (docs/schemas/replay-export.schema.json).
type exportReport struct {
	Export   string       `json:"export"`
	Sabotage string       `json:"sabotage"`
	Units    []exportUnit `json:"units"`
	Diverged int          `json:"diverged"`
}

type exportUnit struct {
	Process string `json:"process"`
	Task    int32  `json:"task"`
	Verdict string `json:"verdict"` // "exact" or "diverges"
	Parsley int    `json:"parsley_deliveries"`
	Shadow  int    `json:"shadow_deliveries"`
	Refusal string `json:"refusal,omitempty"`
	// RefusalChannel is the channel the refusal names.
	RefusalChannel string            `json:"refusal_channel,omitempty"`
	Divergence     *exportDivergence `json:"divergence,omitempty"`
}

type exportDivergence struct {
	Position int    `json:"position"`
	Channel  string `json:"channel"`
	Offset   int64  `json:"offset"`
	Parsley  string `json:"parsley"`
	Shadow   string `json:"shadow"`
	Rule     string `json:"rule"`
}

// runExport replays every unit of a Parsley export through its history
// and judges it against the export's trace: exit 4 when one diverges.
func runExport(_ context.Context, opts *Options) error {
	data, err := os.ReadFile(opts.ParsleyExport)
	if err != nil {
		return fmt.Errorf("--parsley-export: %w", err)
	}
	ex, err := history.ParseExport(data)
	if err != nil {
		return fmt.Errorf("%s: %w", escape.Text(opts.ParsleyExport), err)
	}
	vs, err := history.Judge(ex, history.Options{})
	if err != nil {
		return fmt.Errorf("%s: %w", escape.Text(opts.ParsleyExport), err)
	}
	rep := exportReport{Export: opts.ParsleyExport, Sabotage: ex.Sabotage, Units: []exportUnit{}}
	for _, v := range vs {
		u := exportUnit{Process: v.Unit.Process, Task: v.Unit.Task, Verdict: "exact", Parsley: v.Parsley, Shadow: v.Shadow}
		if v.Refusal != nil {
			u.Refusal = string(v.Refusal.Reason)
			u.RefusalChannel = history.ChannelName(ex.Names, v.Refusal.Channel)
		}
		if d := v.Divergence; d != nil {
			u.Verdict = "diverges"
			rep.Diverged++
			u.Divergence = &exportDivergence{Position: d.Position, Channel: history.ChannelName(ex.Names, d.Channel), Offset: d.Offset,
				Parsley: d.Parsley, Shadow: d.Shadow, Rule: string(d.Rule)}
		}
		rep.Units = append(rep.Units, u)
	}
	w := opts.IO.Out
	if opts.Output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s (sabotage %s): %d of %d units diverge\n", escape.Text(opts.ParsleyExport), escape.Text(ex.Sabotage), rep.Diverged, len(rep.Units))
		for _, u := range rep.Units {
			line := fmt.Sprintf("  %s/%d  %s  parsley %d, shadow %d deliveries", escape.Text(u.Process), u.Task, u.Verdict, u.Parsley, u.Shadow)
			if u.Refusal != "" {
				line += fmt.Sprintf(", shadow stopped %s on %s", u.Refusal, escape.Text(u.RefusalChannel))
			}
			fmt.Fprintln(w, line)
			if d := u.Divergence; d != nil {
				fmt.Fprintf(w, "    first divergence at delivery %d, %s@%d: Parsley %s; shadow %s (rule %s)\n",
					d.Position, escape.Text(d.Channel), d.Offset, escape.Text(d.Parsley), escape.Text(d.Shadow), d.Rule)
			}
		}
	}
	if rep.Diverged > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}
