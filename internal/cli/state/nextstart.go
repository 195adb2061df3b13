package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
)

// jsonNextStart is the start check's prediction (docs/refusals.md):
// whether the process's next start is refused, and every refusal found.
type jsonNextStart struct {
	Refused  bool          `json:"refused"`
	Refusals []jsonRefusal `json:"refusals"`
	// For the text: read from a capture, and the topics the store binds
	// that the capture has no log facts of (deleted, or not captured).
	captured   bool
	uncaptured []string
}

type jsonRefusal struct {
	Reason      parsley.Reason `json:"reason"`
	Topic       *string        `json:"topic"`
	Channels    []string       `json:"channels"`
	Detail      string         `json:"detail"`
	NextStep    string         `json:"next_step"`
	RecordsLost *int64         `json:"records_lost"`
}

func nextStartJSON(w *inspect.Process, rs []parsley.Refusal) *jsonNextStart {
	names := w.Names
	out := &jsonNextStart{Refused: len(rs) > 0, Refusals: []jsonRefusal{}, captured: w.Captured}
	if w.Captured {
		bound := map[string]bool{}
		for _, part := range w.Changelog.Partitions() {
			for name := range w.Changelog.Partition(part).Store.Decode().Names {
				bound[name] = true
			}
		}
		for _, name := range slices.Sorted(maps.Keys(bound)) {
			if _, ok := w.IDs[name]; !ok {
				out.uncaptured = append(out.uncaptured, name)
			}
		}
	}
	for _, r := range rs {
		jr := jsonRefusal{Reason: r.Reason, Channels: []string{}, Detail: r.Detail, NextStep: r.Reason.NextStep()}
		if r.Topic != "" {
			jr.Topic = &r.Topic
		}
		for _, ch := range r.Channels {
			jr.Channels = append(jr.Channels, names.Channel(ch))
		}
		if r.Reason == parsley.ReasonPositionsDiscarded {
			lost := r.Lost
			jr.RecordsLost = &lost
		}
		out.Refusals = append(out.Refusals, jr)
	}
	return out
}

// nextStartText is the report's first lines: the verdict, then each
// refusal with what it concerns, what was found and the next step.
func nextStartText(ns *jsonNextStart) string {
	if ns == nil {
		return ""
	}
	var b strings.Builder
	switch {
	case !ns.Refused && ns.captured:
		b.WriteString("next start: ok — the store and the capture agree (a capture knows no group offsets and cannot show a deleted topic)\n")
	case !ns.Refused:
		b.WriteString("next start: ok — the store and the cluster agree\n")
	default:
		fmt.Fprintf(&b, "next start: refused — %s\n", ns.Refusals[0].Reason)
	}
	if len(ns.uncaptured) > 0 {
		fmt.Fprintf(&b, "  not in the capture: %s — deleted or not captured; only the cluster can tell (CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES is not checked for them)\n", strings.Join(ns.uncaptured, ", "))
	}
	for _, r := range ns.Refusals {
		fmt.Fprintf(&b, "  %s", r.Reason)
		if r.Topic != nil {
			fmt.Fprintf(&b, " on %s", *r.Topic)
		}
		if len(r.Channels) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(r.Channels, ", "))
		}
		fmt.Fprintf(&b, ": %s\n    next step: %s\n", r.Detail, r.NextStep)
	}
	return b.String()
}
