package check

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/history"
	"github.com/causalctl/causalctl/internal/inspect/audit"
	"github.com/causalctl/causalctl/internal/record"
)

// runExport audits the records of a Parsley test export for each task's
// scope as it changed over the export's history: the scope of each
// execution whose declaration differs from the one before. Each channel's
// log ends after its last exported record (the export holds every record
// written).
func runExport(ctx context.Context, opts *Options) error {
	source := escape.Text(opts.ParsleyExport)
	data, err := os.ReadFile(opts.ParsleyExport)
	if err != nil {
		return fmt.Errorf("--parsley-export: %w", err)
	}
	ex, err := history.ParseExport(data)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	learnNames(opts.Names, ex.Names)
	a := audit.New(audit.Config{Names: opts.Names, MaxHeaderSize: opts.MaxHeaderSize, MaxFindings: opts.MaxFindings})
	items := exportItems(ex)
	for i := range items {
		if err := a.Add(&items[i]); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
	}
	if !a.Settled() {
		a.Reread()
		for i := range items {
			if err := a.Load(&items[i]); err != nil {
				return fmt.Errorf("%s: %w", source, err)
			}
		}
	}
	var scopes []audit.Scope
	for _, us := range ex.History.Scopes() {
		scopes = append(scopes, audit.Scope{Name: fmt.Sprintf("%s from step %d", us.Unit, us.Step), Channels: us.Channels})
	}
	if len(scopes) == 0 {
		return fmt.Errorf("%s: no task reads anything: nothing to audit", source)
	}
	rep, err := a.Run(scopes)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if ctx.Err() != nil {
		return cmdutil.WhenInterrupted(ctx.Err(), notAudited)
	}
	if err := write(opts.IO.Out, opts.Final, opts.Output, opts.ParsleyExport, opts.Names, rep, opts.Limit); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if rep.Len() > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// learnNames binds the export's topic names that name one topic: a name
// recreated under another ID stays unbound, its channels shown by ID.
func learnNames(names *clock.Names, byID map[clock.TopicID]string) {
	count := map[string]int{}
	for _, n := range byID {
		count[n]++
	}
	for _, id := range slices.SortedFunc(maps.Keys(byID), func(a, b clock.TopicID) int { return bytes.Compare(a[:], b[:]) }) {
		if n := byID[id]; count[n] == 1 {
			_ = names.Add(n, id) // a name that is no Kafka topic name stays unbound
		}
	}
}

// exportItems are the export's records as a capture's, by channel and
// rising offset, each channel followed by its log facts: the log ends
// after its last record.
func exportItems(ex *history.Export) []record.Item {
	var out []record.Item
	for _, ch := range slices.SortedFunc(maps.Keys(ex.History.Records), clock.Channel.Compare) {
		rs := ex.History.Records[ch]
		for _, r := range rs {
			it := record.Item{Kind: record.KindRecord, TopicID: ch.Topic, Partition: ch.Partition, Offset: r.Offset}
			if r.Causes != nil {
				it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: r.Causes}}
			}
			out = append(out, it)
		}
		if len(rs) > 0 {
			out = append(out, record.Item{Kind: record.KindLogFacts, TopicID: ch.Topic, Partition: ch.Partition,
				Facts: &record.LogFacts{LogStart: ex.History.LogStart[ch], HighWatermark: rs[len(rs)-1].Offset + 1, LastStable: rs[len(rs)-1].Offset + 1}})
		}
	}
	return out
}
