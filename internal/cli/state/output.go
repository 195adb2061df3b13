package state

import (
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/view"
)

// SchemaVersion names the JSON document state writes and its version.
const SchemaVersion = "causalctl.state/v3"

// The JSON schema (docs/state.md, docs/schemas/state.schema.json;
// internal/acceptance: TestStateJSONMatchesTheSchemas). Field
// names are stable; a field is null when unknown, never left out.
type jsonReport struct {
	// Schema names the document's schema and its version (docs/json-output.md).
	Schema      string        `json:"schema"`
	App         *string       `json:"app"`
	Changelog   string        `json:"changelog"`
	Now         string        `json:"now"`
	Group       *jsonGroup    `json:"group"`
	HeldHeads   int           `json:"held_heads"`
	HeldRecords int           `json:"held_records"`
	Corrupt     []jsonCorrupt `json:"corrupt"`
	Tasks       []jsonTask    `json:"tasks"`
	// NextStart is the start check's prediction (render.NextStart).
	NextStart *render.NextStart `json:"next_start"`
	// Upstream is the stuck process upstream its holds wait on; present
	// only when there is one (docs/fleet.md).
	Upstream *render.Upstream `json:"upstream,omitempty"`
	// Deploy answers --receives by the history rules, per task; absent
	// without --receives.
	Deploy []jsonDeploy `json:"deploy,omitempty"`
	// RetentionClock is the retention clock of the read positions
	// (render.RetentionClocks).
	RetentionClock []render.RetentionClock `json:"retention_clock"`
}

type jsonGroup struct {
	Group   string       `json:"group"`
	State   string       `json:"state"`
	Members []jsonMember `json:"members"`
}

type jsonMember struct {
	MemberID     string             `json:"member_id"`
	InstanceID   *string            `json:"instance_id"`
	ClientID     string             `json:"client_id"`
	Host         string             `json:"host"`
	Subscription []string           `json:"subscription"`
	Assignment   map[string][]int32 `json:"assignment"`
}

type jsonCorrupt struct {
	Partition int32  `json:"partition"`
	Offset    *int64 `json:"offset"`
	Key       string `json:"key"` // hex
	Reason    string `json:"reason"`
}

type jsonTask struct {
	Task        int32   `json:"task"`
	ScopeSource string  `json:"scope_source"`
	AssignedTo  *string `json:"assigned_to"`
	// The changelog partition's read: where it stopped, the high
	// watermark taken when it began, and where an open transaction held
	// it (null when none did).
	ReadTo                *int64            `json:"read_to"`
	HighWatermark         *int64            `json:"high_watermark"`
	BehindTransactionFrom *int64            `json:"behind_transaction_from"`
	Version               *int              `json:"version"`
	Held                  int               `json:"held"`
	Channels              []jsonChannel     `json:"channels"`
	Roots                 []render.RootJSON `json:"roots"`
	Corrupt               int               `json:"corrupt"`
	// FailedClosed is the record the task fails closed on when read on;
	// null when none.
	FailedClosed *render.TaskFailedClosed `json:"failed_closed"`
	// CatchingUp are the store's heads that reading on delivers.
	CatchingUp []string `json:"catching_up"`
}

type jsonChannel struct {
	Channel       string           `json:"channel"`
	TopicID       string           `json:"topic_id"`
	FedUpTo       *int64           `json:"fed_up_to"`
	Settled       *int64           `json:"settled"`
	Frontier      *int64           `json:"frontier"`
	DeliveredPast *int64           `json:"delivered_past"`
	Held          int              `json:"held"`
	Committed     *int64           `json:"committed"`
	Lag           *int64           `json:"lag"`
	Head          *render.HeadJSON `json:"head"`
	// BehindReady is the held head behind a ready head (Head): held once
	// the ready one is delivered; nil when Head is no ready head.
	BehindReady *render.HeadJSON `json:"behind_ready,omitempty"`
}

func known(p int64) *int64 {
	if p < 0 {
		return nil
	}
	return &p
}

func build(w *inspect.Process, tasks []*inspect.Task, corrupt []*parsley.CorruptError, now time.Time) jsonReport {
	out := jsonReport{Schema: SchemaVersion, Changelog: w.Changelog.Topic, Now: render.Time(now), Corrupt: []jsonCorrupt{}, Tasks: []jsonTask{}}
	if w.App != "" {
		out.App = &w.App
	}
	if g := w.Group; g != nil {
		jg := &jsonGroup{Group: g.Group, State: g.State, Members: []jsonMember{}}
		for _, m := range g.Members {
			jm := jsonMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Subscription: m.Subscription, Assignment: m.Assignment}
			if m.InstanceID != "" {
				jm.InstanceID = &m.InstanceID
			}
			if jm.Subscription == nil {
				jm.Subscription = []string{}
			}
			jg.Members = append(jg.Members, jm)
		}
		out.Group = jg
	}
	for _, e := range corrupt {
		jc := jsonCorrupt{Partition: e.Partition, Offset: known(e.Offset), Key: hex.EncodeToString(e.Key), Reason: e.Reason}
		out.Corrupt = append(out.Corrupt, jc)
	}
	for _, t := range tasks {
		jt := jsonTask{Task: t.State.Task, ScopeSource: t.ScopeSource, Channels: []jsonChannel{}, Roots: []render.RootJSON{},
			ReadTo: known(t.Read.ReadTo), HighWatermark: known(t.Read.HighWatermark), Held: t.State.HeldCount(), Corrupt: len(t.State.Corrupt)}
		if t.AssignedTo != "" {
			jt.AssignedTo = &t.AssignedTo
		}
		if t.Read.BehindTransaction() {
			jt.BehindTransactionFrom = known(t.Read.ReadTo)
		}
		if t.State.Version > 0 {
			jt.Version = &t.State.Version
		}
		jt.CatchingUp = []string{}
		for _, ch := range t.Scope {
			if off, ok := t.CatchingUp[ch]; ok {
				jt.CatchingUp = append(jt.CatchingUp, w.Names.Channel(ch)+"@"+strconv.FormatInt(off, 10))
			}
		}
		if f := t.FailedClosed(); f != nil {
			jt.FailedClosed = render.FailedClosedOf(f, w.Names)
		}
		for _, ch := range t.Scope {
			jt.Channels = append(jt.Channels, channelJSON(w, t, ch, now))
		}
		for i := range t.Report.Roots {
			jt.Roots = append(jt.Roots, render.RootOf(&t.Report.Roots[i]))
		}
		for _, n := range t.HeadCauses() {
			out.HeldHeads += n
		}
		out.HeldRecords += jt.Held
		out.Tasks = append(out.Tasks, jt)
	}
	return out
}

func channelJSON(w *inspect.Process, t *inspect.Task, ch clock.Channel, now time.Time) jsonChannel {
	jc := jsonChannel{Channel: w.Names.Channel(ch), TopicID: ch.Topic.String()}
	c := t.State.Channel(ch)
	if c != nil {
		jc.FedUpTo, jc.Frontier, jc.DeliveredPast = known(c.FedUpTo), known(c.Frontier), known(c.DeliveredPast)
		jc.Settled = known(c.Settled())
		jc.Held = len(c.Held)
	}
	if off, ok := w.Committed[ch]; ok {
		jc.Committed = &off
		if f, ok := w.Facts[ch]; ok {
			if lag := f.CommittedLag(off); lag >= 0 {
				jc.Lag = &lag
			}
		}
	}
	// The head shown is the diagnosed one (the store's, or the one behind
	// it or read on when the store's delivers); a ready head is the
	// store's own, and the held head behind it, diagnosed, is behind_ready.
	dh := t.Heads[ch]
	if _, catching := t.CatchingUp[ch]; catching && dh == nil {
		return jc // no head: it delivers once the process reads on
	}
	if t.Ready[ch] || dh == nil {
		if c == nil || len(c.Held) == 0 {
			return jc
		}
		jc.Head = headJSON(w, c, nil, jc.Channel, now)
		if dh != nil {
			jc.BehindReady = headJSON(w, c, dh, jc.Channel, now)
		}
		return jc
	}
	jc.Head = headJSON(w, c, dh, jc.Channel, now)
	return jc
}

// headJSON describes a head of channel c (named name): the diagnosed held
// head dh as every document writes it, or with dh nil the store's ready
// head.
func headJSON(w *inspect.Process, c *parsley.Channel, dh *inspect.Head, name string, now time.Time) *render.HeadJSON {
	if dh != nil {
		jh := render.HeadOf(dh)
		return &jh
	}
	held := &c.Held[0]
	at := name + "@" + strconv.FormatInt(held.Offset, 10)
	jh := render.HeadJSON{Channel: name, TopicID: c.Channel.Topic.String(), Offset: held.Offset, Queued: len(c.Held),
		Chain: []string{}, Blockers: []render.BlockerJSON{}, Cause: inspect.CauseReady,
		NextStep: inspect.NextStep(inspect.CauseReady, at, nil, nil)}
	if clk, err := held.Record.Clock(); err == nil {
		jh.Causes = w.Names.Format(clk)
	}
	if n := held.Record.KeySize(); n >= 0 {
		jh.KeySize = &n
	}
	if n := held.Record.ValueSize(); n >= 0 {
		jh.ValueSize = &n
	}
	jh.Headers = []render.HeaderSizeJSON{}
	for _, hd := range held.Record.Headers {
		h := render.HeaderSizeJSON{Key: hd.Key}
		if hd.Value != nil {
			n := len(hd.Value)
			h.Size = &n
		}
		jh.Headers = append(jh.Headers, h)
	}
	if ts, ok := record.TimeOf(held.Record.Timestamp); ok {
		s, ago := render.Time(ts), now.Sub(ts).Milliseconds()
		jh.Timestamp, jh.WrittenMsAgo = &s, &ago
	}
	return &jh
}

func write(wr io.Writer, width int, format string, rep jsonReport) error {
	if format == "json" {
		b, err := render.JSONLine(rep)
		if err != nil {
			return err
		}
		_, err = wr.Write(b)
		return err
	}
	_, err := io.WriteString(wr, text(rep, width))
	return err
}

// channelTable is a task's channels as a table (render.Table's rule),
// indented under the task's line: on a narrow terminal the delivered past
// goes first, then the frontier.
func channelTable(chs []jsonChannel, width int) string {
	const indent = "  "
	t := render.NewTable(render.Column{Title: "Channel"}, render.Column{Title: "Fed", Right: true},
		render.Column{Title: "Settled", Right: true}, render.Column{Title: "Frontier", Right: true, Drop: 1},
		render.Column{Title: "Past", Right: true, Drop: 2}, render.Column{Title: "Held", Right: true},
		render.Column{Title: "Committed", Right: true}, render.Column{Title: "Lag", Right: true})
	for _, c := range chs {
		t.Append(c.Channel, orNull(c.FedUpTo), orNull(c.Settled), orNull(c.Frontier), orNull(c.DeliveredPast),
			strconv.Itoa(c.Held), orNull(c.Committed), orNull(c.Lag))
	}
	if width > 0 {
		width = max(width-len(indent), 1)
	}
	var b strings.Builder
	_ = t.Write(&b, width) // a strings.Builder does not fail
	return indent + strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "\n"+indent) + "\n"
}

func orNull(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// text is one block per task: the read, the group's view, each channel's
// positions, then the held heads grouped by root with the next step.
func text(rep jsonReport, width int) string {
	// Every name in it came from a broker or a store: escaped once here,
	// the header, subscriptions, channels and refusal lines alike.
	rep = escape.Deep(rep)
	var b strings.Builder
	b.WriteString(rep.NextStart.Text())
	b.WriteString(rep.Upstream.Text())
	if rep.Deploy != nil {
		b.WriteString(deployText(rep.Deploy))
	}
	b.WriteString(render.RetentionText(rep.RetentionClock))
	app := "unknown"
	if rep.App != nil {
		app = *rep.App
	}
	fmt.Fprintf(&b, "Ordering state of %s (changelog %s) at %s: %d held %s, %d %s held.\n",
		app, rep.Changelog, rep.Now, rep.HeldHeads, render.Noun(rep.HeldHeads, "head", "heads"), rep.HeldRecords, render.Noun(rep.HeldRecords, "record", "records"))
	if g := rep.Group; g != nil {
		fmt.Fprintf(&b, "Group %s: %s, %d %s.\n", escape.Text(g.Group), escape.Text(g.State), len(g.Members), render.Noun(len(g.Members), "member", "members"))
		for _, m := range g.Members {
			var as []string
			for _, topic := range slices.Sorted(maps.Keys(m.Assignment)) {
				for _, p := range m.Assignment[topic] {
					as = append(as, topic+"/"+strconv.Itoa(int(p)))
				}
			}
			fmt.Fprintf(&b, "  %s (%s on %s): subscribes %s; assigned %s\n", escape.Text(m.MemberID), escape.Text(m.ClientID), escape.Text(m.Host),
				listText(m.Subscription), listText(as))
		}
	} else {
		b.WriteString("Group: unknown (read from a capture).\n")
	}
	for _, t := range rep.Tasks {
		assigned := "unassigned"
		if t.AssignedTo != nil {
			assigned = "assigned to " + escape.Text(*t.AssignedTo)
		}
		fmt.Fprintf(&b, "\nTask %d: scope from %s, %s; changelog read to %s of %s", t.Task, t.ScopeSource, assigned, orNull(t.ReadTo), orNull(t.HighWatermark))
		if t.BehindTransactionFrom != nil {
			fmt.Fprintf(&b, " (behind an open transaction from %d)", *t.BehindTransactionFrom)
		}
		fmt.Fprintf(&b, "; %d held\n", t.Held)
		if f := t.FailedClosed; f != nil {
			fmt.Fprintf(&b, "  FAILED CLOSED at %s@%d (%s): the task stops there, read on from its committed offsets\n    next step: %s\n",
				escape.Text(f.Channel), f.Offset, f.Code, escape.Text(f.NextStep))
		}
		b.WriteString(channelTable(t.Channels, width))
		heads := map[string]*render.HeadJSON{}
		for i := range t.Channels {
			if h := t.Channels[i].Head; h != nil {
				heads[t.Channels[i].Channel+"@"+strconv.FormatInt(h.Offset, 10)] = h
			}
		}
		var ready []string
		for _, c := range t.Channels {
			if c.Head != nil && c.Head.Cause == inspect.CauseReady {
				ready = append(ready, c.Channel+"@"+strconv.FormatInt(c.Head.Offset, 10))
			}
		}
		if len(t.CatchingUp) > 0 {
			fmt.Fprintf(&b, "  catching up: %s\n    next step: none: read on from the committed offsets, these deliver once the process reads what is already in the log\n",
				strings.Join(t.CatchingUp, ", "))
		}
		if len(ready) > 0 {
			fmt.Fprintf(&b, "  ready: %s\n    next step: %s\n", strings.Join(ready, ", "),
				"nothing blocks these any more: the process has not run them since — start it, or see why the task is not assigned")
		}
		for _, r := range t.Roots {
			fmt.Fprintf(&b, "  %s at %s@%d\n", r.Cause, r.Channel, r.Offset)
			for i, at := range r.Heads {
				branch := "    "
				if i > 0 {
					branch = "    └─ "
				}
				b.WriteString(branch + headText(at, heads[at]) + "\n")
			}
			b.WriteString("    next step: " + r.NextStep + "\n")
		}
	}
	for _, e := range rep.Corrupt {
		fmt.Fprintf(&b, "\nCORRUPT: partition %d offset %s key %s: %s\n", e.Partition, orNull(e.Offset), e.Key, e.Reason)
	}
	return b.String()
}

func headText(at string, h *render.HeadJSON) string {
	if h == nil {
		return at + "  (held behind a ready head)"
	}
	var b strings.Builder
	b.WriteString(at)
	if h.WrittenMsAgo != nil {
		fmt.Fprintf(&b, "  written %s ago", view.AgeText(inspect.Age{D: time.Duration(*h.WrittenMsAgo) * time.Millisecond, Known: true}))
	}
	for i, bl := range h.Blockers {
		sep := "  waits "
		if i > 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%s%s ≥ %d: %s", sep, bl.Channel, bl.Required, bl.Cause)
	}
	return b.String()
}

func listText(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
