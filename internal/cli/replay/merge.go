package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// mergeFlags are the flags --merge takes besides itself: what it writes
// and its exit code. Everything else names a replay, which --merge does
// not run.
var mergeFlags = map[string]bool{"merge": true, "output": true, "fail-on-held": true}

// checkMerge refuses the flags of a replay beside --merge, and every
// output but json: the single --tasks run's text is per task, which the
// merged summary no longer tells apart.
func checkMerge(c *cobra.Command, opts *Options) error {
	var bad []string
	c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
		if fl.Changed && !mergeFlags[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		return cmdutil.Usagef("--merge replays nothing: drop %s (the shards were replayed with them)", strings.Join(bad, ", "))
	}
	if opts.Output != "json" {
		return cmdutil.Usagef("--merge writes the merged summary as json only: drop -o %s", opts.Output)
	}
	return nil
}

// runMerge reads the shards' summaries, merges them into the single run's
// and writes it as replay --tasks -o json does.
func runMerge(_ context.Context, opts *Options) error {
	var sums []*inspect.Summary
	for _, path := range opts.Merge {
		s, err := readSummary(path)
		if err != nil {
			return err
		}
		sums = append(sums, s)
	}
	merged, err := inspect.MergeShards(sums)
	if err != nil {
		return fmt.Errorf("--merge: %w", err)
	}
	w := newWriter(opts.IO.Out, opts.Final, "json", opts.Names)
	if err := w.finish(true, func() error { return render.Summary(w.bw, "json", merged) }); err != nil {
		return err
	}
	switch {
	case merged.Failed != nil:
		f := merged.Failed
		return fmt.Errorf("a shard failed closed at %s offset %d (%s): the single run stops every task there, the other shards read on, so only the failure is the single run's", f.Channel, f.Offset, f.Code)
	case merged.Interrupted:
		return fmt.Errorf("a shard was interrupted: the merged summary covers part of the input")
	case opts.FailOnHeld && merged.Held > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitHeld, Err: fmt.Errorf("%s still held at the end (--fail-on-held)", render.Count(merged.Held, "record", "records"))}
	}
	return nil
}

// readSummary reads one shard's summary: a file of replay -o json, or the
// last line (the summary event) of replay -o ndjson. Unknown fields are
// refused: a summary of another version would merge wrong.
func readSummary(path string) (*inspect.Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	var ev struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &ev) == nil && ev.Type != "" && ev.Type != "summary" {
		return nil, fmt.Errorf("%s: its last line is a %q event, not the summary: was the replay cut short?", path, ev.Type)
	}
	var doc struct {
		Type string `json:"type"`
		inspect.Summary
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: not a replay summary: %w", path, err)
	}
	if doc.Channels == nil || doc.Cycles == nil {
		return nil, fmt.Errorf("%s: not a replay summary: no channels or cycles", path)
	}
	return &doc.Summary, nil
}
