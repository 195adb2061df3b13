package render

import (
	"fmt"
	"github.com/causalctl/causalctl/internal/escape"
	"maps"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
)

// NextStart is the start check's prediction as `state` and `processes`
// print it (docs/refusals.md): whether the process's next start is
// refused, and every refusal found. Its JSON is the next_start object of
// both commands' schemas.
type NextStart struct {
	Refused  bool      `json:"refused"`
	Refusals []Refusal `json:"refusals"`
	// Warnings are what Parsley warns of short of a refusal, or what
	// leads to one if left alone (parsley.CheckWarnings).
	Warnings []Warning `json:"warnings"`
	// For the text: read from a capture, and the topics the store binds
	// that the capture has no log facts of (deleted, or not captured).
	captured   bool
	uncaptured []string
}

// Refusal is one refusal of a NextStart: its reason, what it concerns,
// what was found and the runbook step.
type Refusal struct {
	Reason      parsley.Reason `json:"reason"`
	Topic       *string        `json:"topic"`
	Channels    []string       `json:"channels"`
	Detail      string         `json:"detail"`
	NextStep    string         `json:"next_step"`
	RecordsLost *int64         `json:"records_lost"`
	// The runbook's triage answers (parsley.Reason.Triage): a restart
	// alone, and whether it clears the refusal as things stand; a reset;
	// what to check first; whether Parsley records the reason at all.
	RestartAlone  string `json:"restart_alone"`
	RestartClears bool   `json:"restart_clears"`
	Reset         string `json:"reset"`
	Check         string `json:"check"`
	Recorded      bool   `json:"recorded"`
}

// Warning is one warning of a NextStart.
type Warning struct {
	Reason parsley.Reason `json:"reason"`
	Detail string         `json:"detail"`
}

// NextStartOf renders refusals rs, the prediction for process p
// (p.NextStart), naming channels by p's names.
func NextStartOf(p *inspect.Process, rs []parsley.Refusal) *NextStart {
	out := &NextStart{Refused: len(rs) > 0, Refusals: []Refusal{}, captured: p.Captured}
	if p.Captured {
		bound := map[string]bool{}
		for _, part := range p.Changelog.Partitions() {
			for name := range p.Changelog.Partition(part).Store.Decode().Names {
				bound[name] = true
			}
		}
		for _, name := range slices.Sorted(maps.Keys(bound)) {
			if _, ok := p.IDs[name]; !ok {
				out.uncaptured = append(out.uncaptured, name)
			}
		}
	}
	out.Refusals = NextStartFrom(rs, p.Names.Channel).Refusals
	out.Warnings = WarningsOf(p.StartWarnings(nil))
	return out
}

// NextStartFrom renders refusals rs with channels named by name: what a
// process summary keeps of its prediction (inspect.ProcessSummary).
func NextStartFrom(rs []parsley.Refusal, name func(clock.Channel) string) *NextStart {
	out := &NextStart{Refused: len(rs) > 0, Refusals: []Refusal{}, Warnings: []Warning{}}
	for _, r := range rs {
		tr := r.Reason.Triage()
		jr := Refusal{Reason: r.Reason, Channels: []string{}, Detail: r.Detail, NextStep: r.Reason.NextStep(),
			RestartAlone: tr.Restart, RestartClears: tr.Clears, Reset: tr.Reset, Check: tr.Check, Recorded: tr.Recorded}
		if r.Topic != "" {
			jr.Topic = &r.Topic
		}
		for _, ch := range r.Channels {
			jr.Channels = append(jr.Channels, name(ch))
		}
		if r.Reason == parsley.ReasonPositionsDiscarded {
			lost := r.Lost
			jr.RecordsLost = &lost
		}
		out.Refusals = append(out.Refusals, jr)
	}
	return out
}

// WarningsOf renders warnings ws.
func WarningsOf(ws []parsley.Warning) []Warning {
	out := []Warning{}
	for _, w := range ws {
		out = append(out, Warning{Reason: w.Reason, Detail: w.Detail})
	}
	return out
}

// First is the cell a table shows: "ok", or the first refusal's reason
// (the one the process stops at).
func (ns *NextStart) First() string {
	if !ns.Refused {
		return "ok"
	}
	return string(ns.Refusals[0].Reason)
}

// Text is the prediction for people: the verdict, then each refusal with
// what it concerns, what was found and the next step; "" for nil.
func (ns *NextStart) Text() string {
	if ns == nil {
		return ""
	}
	// Topics, channels and details name what the cluster named: escaped.
	escaped := escape.Deep(*ns)
	escaped.uncaptured = escape.Deep(ns.uncaptured)
	ns = &escaped
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
		fmt.Fprintf(&b, "    restart alone: %s; reset: %s\n    check: %s\n", r.RestartAlone, r.Reset, r.Check)
		if !r.Recorded {
			b.WriteString("    (Parsley records no refusal reason for this stop: only its failure detail says it)\n")
		}
	}
	for _, w := range ns.Warnings {
		fmt.Fprintf(&b, "  warning: %s: %s\n", w.Reason, w.Detail)
	}
	return b.String()
}
