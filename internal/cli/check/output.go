package check

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect/audit"
)

// The JSON forms of the report (docs/check.md). Channels print as
// NAME/PARTITION where the name is known.

type jsonRecord struct {
	Channel string `json:"channel"`
	TopicID string `json:"topic_id"`
	Offset  int64  `json:"offset"`
	Line    int64  `json:"line,omitempty"`
}

type jsonClaim struct {
	Channel  string `json:"channel"`
	TopicID  string `json:"topic_id"`
	Position int64  `json:"position"`
}

type jsonHop struct {
	jsonRecord
	Via   string `json:"via,omitempty"`   // claims or follows; absent on the first hop
	Claim *int64 `json:"claim,omitempty"` // via claims: the position claimed
}

type jsonCycleStep struct {
	jsonRecord
	Waits jsonClaim `json:"waits"`
}

type jsonFinding struct {
	Kind string `json:"kind"`
	jsonRecord
	Producer string `json:"producer"`
	Scope    string `json:"scope,omitempty"`

	Claim         *jsonClaim `json:"claim,omitempty"`
	HighWatermark *int64     `json:"high_watermark,omitempty"`
	Code          string     `json:"code,omitempty"`
	Reason        string     `json:"reason,omitempty"`

	Hole  *jsonHole       `json:"hole,omitempty"`
	Cycle []jsonCycleStep `json:"cycle,omitempty"`

	// Root is the claim the finding follows from (audit.Finding.Root):
	// findings of one root share it.
	Root jsonRoot `json:"root"`
}

// jsonRoot is a finding's root: the record that made the claim, and the
// claim (absent when the finding rests on the record alone).
type jsonRoot struct {
	jsonRecord
	Claim *jsonClaim `json:"claim,omitempty"`
}

type jsonHole struct {
	Ancestor    jsonRecord `json:"ancestor"`
	FirstMissed jsonRecord `json:"first_missed"`
	Missed      int        `json:"missed"`
	// Claims and WaitsFor are null when m claims, or waits for, nothing
	// on the ancestor's channel.
	Claims   *int64    `json:"claims"`
	WaitsFor *int64    `json:"waits_for"`
	Path     []jsonHop `json:"path"`
}

type jsonScope struct {
	Name     string   `json:"name,omitempty"`
	Channels []string `json:"channels"`
}

type jsonSummary struct {
	Kind       string         `json:"kind,omitempty"` // "summary" in ndjson
	Source     string         `json:"source"`
	Records    int64          `json:"records"`
	Channels   []string       `json:"channels"`
	Scopes     []jsonScope    `json:"scopes"`
	NotInInput []string       `json:"not_in_input"`
	Counts     map[string]int `json:"counts"`
	Truncated  bool           `json:"truncated"`
	Unaudited  int64          `json:"unaudited"`
	// The json report ends with "findings", written one by one (write).
}

type jsonWriter struct{ names *clock.Names }

func (j jsonWriter) record(r audit.RecordRef) jsonRecord {
	return jsonRecord{Channel: j.names.Channel(r.Channel), TopicID: r.Channel.Topic.String(), Offset: r.Offset, Line: r.Line}
}

func (j jsonWriter) claim(e clock.Entry) jsonClaim {
	return jsonClaim{Channel: j.names.Channel(e.Channel), TopicID: e.Channel.Topic.String(), Position: e.Position}
}

func (j jsonWriter) channels(chs []clock.Channel) []string {
	out := make([]string, 0, len(chs))
	for _, ch := range chs {
		out = append(out, j.names.Channel(ch))
	}
	return out
}

func orNull(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func (j jsonWriter) root(r audit.Root) jsonRoot {
	out := jsonRoot{jsonRecord: j.record(r.Record)}
	if r.Claimed {
		c := j.claim(r.Claim)
		out.Claim = &c
	}
	return out
}

func (j jsonWriter) finding(f audit.Finding) jsonFinding {
	out := jsonFinding{Kind: f.Kind.String(), jsonRecord: j.record(f.Record), Producer: j.names.Channel(f.Producer), Scope: f.Scope,
		Root: j.root(f.Root())}
	switch f.Kind {
	case audit.FindingNotARecord, audit.FindingSelfCycle, audit.FindingUnknownTopic, audit.FindingBeyondLogEnd:
		c := j.claim(f.Claim)
		out.Claim = &c
		if f.Kind == audit.FindingBeyondLogEnd {
			out.HighWatermark = &f.HighWatermark
		}
	case audit.FindingUndecodable:
		out.Code, out.Reason = string(f.Code), f.Reason
	case audit.FindingWaitCycle:
		for _, s := range f.Cycle {
			out.Cycle = append(out.Cycle, jsonCycleStep{jsonRecord: j.record(s.Record), Waits: j.claim(s.Waits)})
		}
	case audit.FindingHole:
		h := f.Hole
		out.Hole = &jsonHole{Ancestor: j.record(h.Ancestor), FirstMissed: j.record(h.FirstMissed), Missed: h.Missed,
			Claims: orNull(h.Claims), WaitsFor: orNull(h.WaitsFor)}
		for _, hop := range h.Path {
			jh := jsonHop{jsonRecord: j.record(hop.Record)}
			if hop.Via != 0 {
				jh.Via = hop.Via.String()
			}
			if hop.Via == audit.HopClaims {
				jh.Claim = &hop.Claim
			}
			out.Hole.Path = append(out.Hole.Path, jh)
		}
	}
	return out
}

func (j jsonWriter) summary(source string, rep *audit.Report) jsonSummary {
	s := jsonSummary{
		Source:     source,
		Records:    rep.Records,
		Channels:   j.channels(rep.Channels),
		NotInInput: j.channels(rep.NotInInput),
		Counts:     map[string]int{},
		Truncated:  rep.Truncated,
		Unaudited:  rep.Unaudited,
	}
	for _, sc := range rep.Scopes {
		s.Scopes = append(s.Scopes, jsonScope{Name: sc.Name, Channels: j.channels(sc.Channels)})
	}
	for k, n := range rep.Counts {
		s.Counts[k.String()] = n
	}
	return s
}

// write renders the report as text, json or ndjson. text and json are one
// document, written whole under final; ndjson is a stream, a line per
// finding written in whole lines under final (cmdutil.LineWriter), so
// that an interrupt's exit waits only for the batch being written and
// stdout still ends on a line.
func write(w io.Writer, final *cmdutil.FinalOutput, format, source string, names *clock.Names, rep *audit.Report, limit int) error {
	if format == "ndjson" {
		lw := cmdutil.NewLineWriter(w, final)
		j := jsonWriter{names}
		if err := rep.Each(func(f audit.Finding) error { return writeJSON(lw, j.finding(f)) }); err != nil {
			return err
		}
		return lw.Finish(func() error {
			s := j.summary(source, rep)
			s.Kind = "summary"
			return writeJSON(lw, s)
		})
	}
	return final.Do(func() error { return writeDocument(w, format, source, names, rep, limit) })
}

// writeDocument renders the report as text (at most limit findings in
// detail, 0: every one) or json (every finding).
func writeDocument(w io.Writer, format, source string, names *clock.Names, rep *audit.Report, limit int) error {
	bw := bufio.NewWriter(w)
	j := jsonWriter{names}
	switch format {
	case "json":
		// The summary, then the findings as they are built: a broken
		// pipeline can have a hole in nearly every record.
		b, err := render.JSONLine(j.summary(source, rep))
		if err != nil {
			return err
		}
		bw.Write(b[:len(b)-2]) // without "}\n"
		bw.WriteString(`,"findings":[`)
		sep := ""
		err = rep.Each(func(f audit.Finding) error {
			b, err := render.JSONLine(j.finding(f))
			if err == nil {
				bw.WriteString(sep)
				_, err = bw.Write(b[:len(b)-1])
				sep = ","
			}
			return err
		})
		if err != nil {
			return err
		}
		bw.WriteString("]}\n")
	default:
		if err := writeText(bw, source, names, rep, limit); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	b, err := render.JSONLine(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// rootCount is one root of a report and the findings that follow from it.
type rootCount struct {
	root audit.Root
	n    int
	// kinds counts its findings by kind: an array, not a map, since a
	// broken pipeline can have about as many roots as findings.
	kinds [16]int32
	// own is the finding of the root's claim itself (beyond-log-end, …),
	// when it is one.
	own *audit.Finding
}

// roots gathers the findings of rep by root, most findings first, then in
// report order.
func roots(rep *audit.Report) []*rootCount {
	var out []*rootCount
	byRoot := map[audit.Root]*rootCount{}
	rep.Each(func(f audit.Finding) error {
		r := f.Root()
		rc := byRoot[r]
		if rc == nil {
			rc = &rootCount{root: r}
			byRoot[r] = rc
			out = append(out, rc)
		}
		rc.n++
		rc.kinds[f.Kind]++
		if f.Kind != audit.FindingHole && f.Record == r.Record && (!r.Claimed || f.Claim == r.Claim) && rc.own == nil {
			own := f
			rc.own = &own
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b *rootCount) int { return b.n - a.n })
	return out
}

// errEnough stops a walk of the findings once enough are written.
var errEnough = errors.New("enough findings written")

// writeText renders the report for people: what was audited, the counts,
// the roots the findings follow from, then the findings (at most limit,
// 0: every one) grouped by kind and by producer channel.
func writeText(w io.Writer, source string, names *clock.Names, rep *audit.Report, limit int) error {
	ref := func(r audit.RecordRef) string {
		s := fmt.Sprintf("%s@%d", names.Channel(r.Channel), r.Offset)
		if r.Line > 0 {
			s += fmt.Sprintf(" (line %d)", r.Line)
		}
		return s
	}
	at := func(r audit.RecordRef) string { return fmt.Sprintf("%s@%d", names.Channel(r.Channel), r.Offset) }
	fmt.Fprintf(w, "Audited %s: %s on %s, for ", source,
		render.Count(rep.Records, "record", "records"), render.Count(len(rep.Channels), "channel", "channels"))
	if len(rep.Scopes) == 1 && rep.Scopes[0].Name == "" {
		fmt.Fprintf(w, "a node consuming %s.\n", strings.Join(jsonWriter{names}.channels(rep.Scopes[0].Channels), ","))
	} else {
		var ns []string
		for _, s := range rep.Scopes {
			ns = append(ns, s.Name)
		}
		fmt.Fprintf(w, "%s (%s).\n", render.Count(len(rep.Scopes), "node", "nodes"), strings.Join(ns, ", "))
	}
	notes := func() {
		if len(rep.NotInInput) > 0 {
			fmt.Fprintf(w, "Claimed but not in the input, so holes behind them cannot be seen: %s.\n",
				strings.Join(jsonWriter{names}.channels(rep.NotInInput), ", "))
		}
		if rep.Unaudited > 0 {
			fmt.Fprintf(w, "%s in or behind a wait cycle %s not audited for holes.\n",
				render.Count(rep.Unaudited, "record", "records"), render.Noun(rep.Unaudited, "was", "were"))
		}
	}
	if rep.Len() == 0 {
		notes()
		fmt.Fprintln(w, "No findings: every consumed cause is claimed where the gate can see it.")
		return nil
	}
	var counts []string
	for _, k := range audit.FindingKinds {
		if n := rep.Counts[k]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s (%d)", k, n)) // as the headings below
		}
	}
	fmt.Fprintf(w, "%s: %s.\n", render.Count(rep.Len(), "finding", "findings"), strings.Join(counts, ", "))
	// The roots lead: a forged claim can make a hole of every later
	// record of its channel, and the one line naming it is the answer.
	rs := roots(rep)
	fmt.Fprintf(w, "They follow from %s:\n", render.Count(len(rs), "root", "roots"))
	for i, rc := range rs {
		if limit > 0 && i == limit {
			fmt.Fprintf(w, "  … and %d more %s (--all lists them)\n", len(rs)-limit, render.Noun(len(rs)-limit, "root", "roots"))
			break
		}
		writeRoot(w, names, rc, ref)
	}
	notes()
	if rep.Truncated {
		fmt.Fprintln(w, "Stopped at --max-findings: the counts are lower bounds.")
	}
	// Findings come grouped: a heading at each new kind, and at each new
	// producer within it, with the group's count.
	var kind audit.FindingKind
	var producer clock.Channel
	written := 0
	err := rep.Each(func(f audit.Finding) error {
		if limit > 0 && written == limit {
			return errEnough
		}
		if f.Kind != kind {
			kind, producer = f.Kind, clock.Channel{}
			fmt.Fprintf(w, "\n%s (%d)\n", kind, rep.Counts[kind])
		}
		if f.Producer != producer {
			producer = f.Producer
			fmt.Fprintf(w, "  producer %s (%d)\n", names.Channel(producer), rep.ByProducer[kind][producer])
		}
		writeFinding(w, names, f, ref, at)
		written++
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	if more := rep.Len() - written; more > 0 {
		fmt.Fprintf(w, "\n… and %d more %s: --limit N shows N, --all every one.\n", more, render.Noun(more, "finding", "findings"))
	}
	return nil
}

// writeRoot writes a root's line: the record, its claim (and the claim's
// own finding), how many findings follow from it, by kind.
func writeRoot(w io.Writer, names *clock.Names, rc *rootCount, ref func(audit.RecordRef) string) {
	fmt.Fprintf(w, "  %s", ref(rc.root.Record))
	if rc.root.Claimed {
		fmt.Fprintf(w, " claims %s=%d", names.Channel(rc.root.Claim.Channel), rc.root.Claim.Position)
	}
	if rc.own != nil {
		fmt.Fprintf(w, " (%s)", rc.own.Kind)
	}
	var kinds []string
	for _, k := range audit.FindingKinds {
		if n := rc.kinds[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(w, ": %s %s from it (%s)\n", render.Count(rc.n, "finding", "findings"), render.Noun(rc.n, "follows", "follow"), strings.Join(kinds, ", "))
}

func writeFinding(w io.Writer, names *clock.Names, f audit.Finding, ref, at func(audit.RecordRef) string) {
	claim := func(e clock.Entry) string { return fmt.Sprintf("%s=%d", names.Channel(e.Channel), e.Position) }
	scope := ""
	if f.Scope != "" {
		scope = " [" + f.Scope + "]"
	}
	switch f.Kind {
	case audit.FindingHole:
		h := f.Hole
		onCh := names.Channel(h.Ancestor.Channel)
		fmt.Fprintf(w, "    %s%s misses %s", ref(f.Record), scope, ref(h.Ancestor))
		if h.Missed > 1 {
			fmt.Fprintf(w, " and %d before it from %s", h.Missed-1, at(h.FirstMissed))
		}
		fmt.Fprintln(w)
		claims, waits := "nothing", "nothing"
		if h.Claims >= 0 {
			claims = fmt.Sprintf("%s=%d", onCh, h.Claims)
		}
		if h.WaitsFor >= 0 {
			waits = fmt.Sprintf("%s@%d", onCh, h.WaitsFor)
		}
		fmt.Fprintf(w, "      it claims %s on %s; the gate makes it wait for %s there\n", claims, onCh, waits)
		var path strings.Builder
		for i, hop := range h.Path {
			switch {
			case i == 0:
			case hop.Via == audit.HopFollows:
				path.WriteString(" → (earlier) ")
			default:
				path.WriteString(" → ")
			}
			path.WriteString(at(hop.Record))
		}
		fmt.Fprintf(w, "      path: %s\n", path.String())
	case audit.FindingNotARecord:
		fmt.Fprintf(w, "    %s claims %s: the input proves no record there (a transaction marker or an aborted record)\n", ref(f.Record), claim(f.Claim))
	case audit.FindingBeyondLogEnd:
		fmt.Fprintf(w, "    %s claims %s: at or past the high watermark %d\n", ref(f.Record), claim(f.Claim), f.HighWatermark)
	case audit.FindingSelfCycle:
		fmt.Fprintf(w, "    %s claims %s: at or above its own offset\n", ref(f.Record), claim(f.Claim))
	case audit.FindingUnknownTopic:
		fmt.Fprintf(w, "    %s claims %s: no known topic has that UUID\n", ref(f.Record), claim(f.Claim))
	case audit.FindingWaitCycle:
		var steps []string
		for _, s := range f.Cycle {
			steps = append(steps, fmt.Sprintf("%s waits for %s", at(s.Record), claim(s.Waits)))
		}
		fmt.Fprintf(w, "    %s: %s\n", ref(f.Record), strings.Join(steps, ", "))
	case audit.FindingUndecodable:
		fmt.Fprintf(w, "    %s: %s\n", ref(f.Record), f.Reason)
	}
}
