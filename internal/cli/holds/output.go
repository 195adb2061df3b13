package holds

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/view"
)

func write(w io.Writer, format string, rep *inspect.Report, opts *Options) error {
	if format == "json" {
		return writeJSON(w, reportJSON(rep, opts))
	}
	_, err := io.WriteString(w, reportText(rep, opts))
	return err
}

func writeJSON(w io.Writer, rep jsonReport) error {
	b, err := render.JSONLine(rep)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// SchemaVersion names the JSON document holds writes and its version.
const SchemaVersion = "causalctl.holds/v2"

// The JSON schema (docs/holds.md). Field names are stable; a field is
// null when unknown, never left out, except the optional ones marked so.
type jsonReport struct {
	// Schema names the document's schema and its version (docs/json-output.md).
	Schema          string     `json:"schema"`
	Now             string     `json:"now"`
	PositionAdvance bool       `json:"position_advance"`
	OlderThanMs     int64      `json:"older_than_ms"`
	RetentionWarnMs int64      `json:"retention_warn_ms"`
	HeldHeads       int        `json:"held_heads"`
	HeldRecords     int64      `json:"held_records"`
	Roots           []jsonRoot `json:"roots"`
	Heads           []jsonHead `json:"heads"`
	Cycles          [][]string `json:"cycles"`
	// With --tasks or --app only: the process and the tasks.
	App   string     `json:"app,omitempty"`
	Tasks []jsonTask `json:"tasks,omitempty"`
	// With --app only, when there is one: the stuck process upstream its
	// holds wait on (docs/fleet.md).
	Upstream *render.Upstream `json:"upstream,omitempty"`
}

// jsonTask is one task's gate: its scope and what it holds.
type jsonTask struct {
	Task        int32    `json:"task"`
	Scope       []string `json:"scope"`
	HeldHeads   int      `json:"held_heads"`
	HeldRecords int64    `json:"held_records"`
	// FailedClosed is the record the task fails closed on (--app); left
	// out when none.
	FailedClosed *jsonFailedClosed `json:"failed_closed,omitempty"`
	// BehindTransactionFrom is where the changelog's read stopped behind a
	// transaction still open (--app): the state is partial, as of there
	// (SPEC §6); left out when the read reached the end.
	BehindTransactionFrom *int64 `json:"behind_transaction_from,omitempty"`
	// Ready are the store's held heads nothing blocks any more (--app),
	// channel@offset; left out when none.
	Ready []string `json:"ready,omitempty"`
}

// jsonFailedClosed is the record a task fails closed on, as state writes
// it.
type jsonFailedClosed struct {
	Channel  string `json:"channel"`
	Offset   int64  `json:"offset"`
	Code     string `json:"code"`
	Detail   string `json:"detail"`
	NextStep string `json:"next_step"`
}

type jsonRoot struct {
	Channel  string        `json:"channel"`
	Offset   int64         `json:"offset"`
	Cause    inspect.Cause `json:"cause"`
	NextStep string        `json:"next_step"`
	Heads    []string      `json:"heads"`
	Cycle    []string      `json:"cycle,omitempty"`
	Task     *int32        `json:"task,omitempty"` // --tasks, --app
}

type jsonHead struct {
	Channel     string         `json:"channel"`
	TopicID     string         `json:"topic_id"`
	Offset      int64          `json:"offset"`
	Timestamp   *string        `json:"timestamp"`
	HoldAgeMs   *int64         `json:"hold_age_ms"`
	Queued      int            `json:"queued"`
	Clock       string         `json:"clock"`
	Undecodable string         `json:"undecodable,omitempty"`
	Cause       inspect.Cause  `json:"cause"`
	Root        jsonRootRef    `json:"root"`
	Chain       []string       `json:"chain"`
	ChainLength int            `json:"chain_length"`
	Cycle       []string       `json:"cycle,omitempty"`
	CycleLength int            `json:"cycle_length,omitempty"`
	Blockers    []jsonBlocker  `json:"blockers"`
	Retention   *jsonRetention `json:"retention"`
	NextStep    string         `json:"next_step"`
	Task        *int32         `json:"task,omitempty"` // --tasks, --app
}

type jsonRootRef struct {
	Channel string        `json:"channel"`
	Offset  int64         `json:"offset"`
	Cause   inspect.Cause `json:"cause"`
}

type jsonBlocker struct {
	Channel  string        `json:"channel"`
	Required int64         `json:"required"`
	Settled  *int64        `json:"settled"`
	Cause    inspect.Cause `json:"cause"`
	Root     string        `json:"root,omitempty"`
	Log      *jsonLog      `json:"log,omitempty"`
	Producer *jsonProducer `json:"producer,omitempty"`
}

// jsonProducer is the open transaction pinning the blocking channel's last
// stable offset; pins_last_stable is false when its first offset is not
// that offset (the facts were read at two moments).
type jsonProducer struct {
	record.OpenTransaction
	PinsLastStable bool `json:"pins_last_stable"`
}

type jsonLog struct {
	LogStart      int64 `json:"log_start"`
	LastStable    int64 `json:"last_stable"`
	HighWatermark int64 `json:"high_watermark"`
}

type jsonRetention struct {
	RetentionMs int64  `json:"retention_ms"`
	DeletesAt   string `json:"deletes_at"`
	HeadroomMs  int64  `json:"headroom_ms"`
	Warn        bool   `json:"warn"`
}

func reportJSON(rep *inspect.Report, opts *Options) jsonReport {
	out := jsonReport{
		Schema: SchemaVersion,
		Now:    render.Time(rep.Now), PositionAdvance: !opts.ReceiptOnly,
		OlderThanMs: opts.OlderThan.Milliseconds(), RetentionWarnMs: opts.RetentionWarn.Milliseconds(),
		HeldHeads: len(rep.Heads), HeldRecords: rep.RecordsHeld,
		Roots: []jsonRoot{}, Heads: []jsonHead{}, Cycles: rep.Cycles,
	}
	if out.Cycles == nil {
		out.Cycles = [][]string{}
	}
	for _, r := range rep.Roots {
		out.Roots = append(out.Roots, jsonRoot{Channel: r.Channel, Offset: r.Offset, Cause: r.Cause, NextStep: r.NextStep, Heads: r.Heads, Cycle: r.Cycle})
	}
	for _, h := range rep.Heads {
		jh := jsonHead{Channel: h.Channel, TopicID: h.TopicID, Offset: h.Offset, Queued: h.Queued, Clock: h.Clock,
			Undecodable: h.Undecodable, Cause: h.Cause, Chain: h.Chain, ChainLength: h.ChainLen, Blockers: []jsonBlocker{}, NextStep: h.NextStep,
			Root: jsonRootRef{Channel: h.Root, Offset: h.RootOffset, Cause: h.RootCause}}
		if h.Cycle != nil {
			// Each head names at most MaxChain members of its cycle, as of
			// its chain; the root's cycle and the report's cycles list it
			// whole, once.
			jh.Cycle, jh.CycleLength = h.Cycle[:min(len(h.Cycle), inspect.MaxChain)], len(h.Cycle)
		}
		if !h.Timestamp.IsZero() {
			s := render.Time(h.Timestamp)
			jh.Timestamp = &s
		}
		if h.Age.Known {
			ms := h.Age.D.Milliseconds()
			jh.HoldAgeMs = &ms
		}
		for _, b := range h.Blockers {
			jb := jsonBlocker{Channel: b.Channel, Required: b.Required, Cause: b.Cause, Root: b.Root}
			if t := b.Producer; t != nil {
				jb.Producer = &jsonProducer{OpenTransaction: *t, PinsLastStable: b.Log != nil && b.Log.PinAgrees(t)}
			}
			if b.Settled >= 0 {
				s := b.Settled
				jb.Settled = &s
			}
			if b.Log != nil {
				jb.Log = &jsonLog{LogStart: b.Log.LogStart, LastStable: b.Log.LastStable, HighWatermark: b.Log.HighWatermark}
			}
			jh.Blockers = append(jh.Blockers, jb)
		}
		if r := h.Retention; r != nil {
			jh.Retention = &jsonRetention{RetentionMs: r.RetentionMs, DeletesAt: render.Time(r.DeletesAt), HeadroomMs: r.Left.Milliseconds(), Warn: r.Warn}
		}
		out.Heads = append(out.Heads, jh)
	}
	return out
}

// reportText groups the heads by root, draws each root's chains as a tree
// (a head under the head it waits behind) and gives the next step.
func reportText(rep *inspect.Report, opts *Options) string {
	// Every name in it came from a broker or a file: escaped once here.
	escaped := escape.Deep(*rep)
	rep = &escaped
	var b strings.Builder
	if len(rep.Heads) == 0 {
		b.WriteString("Nothing held")
		if opts.OlderThan > 0 {
			b.WriteString(" for " + opts.OlderThan.String() + " or longer")
		}
		b.WriteString(".\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d held %s (%s held) at %s, %s:\n",
		len(rep.Heads), render.Noun(len(rep.Heads), "head", "heads"), render.Count(rep.RecordsHeld, "record", "records"), render.Time(rep.Now),
		render.Count(len(rep.Roots), "root", "roots"))
	heads := map[string]*inspect.Head{}
	byChannel := make(map[string]*inspect.Head, len(rep.Heads))
	for i := range rep.Heads {
		byChannel[rep.Heads[i].Channel] = &rep.Heads[i]
	}
	children := map[string][]string{}
	for i := range rep.Heads {
		h := &rep.Heads[i]
		at := h.Channel + "@" + strconv.FormatInt(h.Offset, 10)
		heads[at] = h
		if h.Cycle == nil && len(h.Chain) > 1 {
			// The head it waits behind: the next channel's head.
			if p, ok := byChannel[h.Chain[1]]; ok {
				parent := p.Channel + "@" + strconv.FormatInt(p.Offset, 10)
				children[parent] = append(children[parent], at)
			}
		}
	}
	child := map[string]bool{}
	for _, kids := range children {
		for _, k := range kids {
			child[k] = true
		}
	}
	for _, r := range rep.Roots {
		fmt.Fprintf(&b, "\n%s at %s@%d\n", r.Cause, r.Channel, r.Offset)
		if r.Cause == inspect.CauseCycle {
			fmt.Fprintf(&b, "  wait cycle: %s\n", strings.Join(r.Cycle, " → "))
			for _, at := range r.Heads {
				b.WriteString("  " + headLine(heads[at]) + "\n")
			}
		} else {
			// Every head of the root not drawn under another: the root's
			// own head first, or, for a root that is no head (the record
			// a task failed closed on), each chain waiting on it.
			for _, at := range r.Heads {
				if !child[at] {
					drawTree(&b, at, heads, children)
				}
			}
		}
		b.WriteString("  next step: " + r.NextStep + "\n")
	}
	return b.String()
}

// maxIndent is how many levels deep the text tree indents: a head deeper
// in a chain is drawn at that indentation with its depth, so that a chain
// of n heads writes n lines of bounded width, not n lines of width up to n.
const maxIndent = 16

// drawTree writes the tree of heads under root, a head under the head it
// waits behind, walking it without recursion (a chain may be as long as
// the scope).
func drawTree(b *strings.Builder, root string, heads map[string]*inspect.Head, children map[string][]string) {
	type node struct {
		at, indent, branch string
		depth              int
	}
	stack := []node{{at: root}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		b.WriteString("  " + n.indent + n.branch)
		if n.depth > maxIndent {
			b.WriteString("(depth " + strconv.Itoa(n.depth) + ") ")
		}
		b.WriteString(headLine(heads[n.at]) + "\n")
		next := n.indent
		if n.depth > 0 && n.depth < maxIndent {
			switch n.branch {
			case "├─ ":
				next += "│  "
			case "└─ ":
				next += "   "
			}
		}
		// Pushed last first, so that the first child is drawn first.
		kids := children[n.at]
		for i := len(kids) - 1; i >= 0; i-- {
			br := "├─ "
			if i == len(kids)-1 {
				br = "└─ "
			}
			stack = append(stack, node{at: kids[i], indent: next, branch: br, depth: n.depth + 1})
		}
	}
}

// headLine is one head: where, how long, its retention and its blockers.
func headLine(h *inspect.Head) string {
	var b strings.Builder
	if h.Age.Known {
		fmt.Fprintf(&b, "%s@%d  held %s", h.Channel, h.Offset, view.AgeText(h.Age))
	} else {
		// Kept under --older-than, which cannot show it younger.
		fmt.Fprintf(&b, "%s@%d  held (undated: the record has no timestamp)", h.Channel, h.Offset)
	}
	if h.Queued > 1 {
		fmt.Fprintf(&b, " (+%d behind)", h.Queued-1)
	}
	if r := h.Retention; r != nil {
		left := view.AgeText(inspect.Age{D: r.Left, Known: true})
		if r.Left < 0 {
			left = "due"
		}
		fmt.Fprintf(&b, "  retention %s left", left)
		if r.Warn {
			b.WriteString(" (WARNING: below the threshold)")
		}
	}
	if h.Undecodable != "" {
		fmt.Fprintf(&b, "  undecodable (%s)", h.Undecodable)
	}
	for i, bl := range h.Blockers {
		sep := "  waits "
		if i > 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%s%s ≥ %d: %s", sep, bl.Channel, bl.Required, bl.Cause)
		if bl.Log != nil {
			fmt.Fprintf(&b, " (log %d…%d, last stable %d)", bl.Log.LogStart, bl.Log.HighWatermark, bl.Log.LastStable)
		}
		if t := bl.Producer; t != nil {
			fmt.Fprintf(&b, " by producer %d", t.ProducerID)
			if t.TransactionalID != "" {
				fmt.Fprintf(&b, " (%s)", escape.Text(t.TransactionalID))
			}
			fmt.Fprintf(&b, " from %d", t.FirstOffset)
			if bl.Log != nil && !bl.Log.PinAgrees(t) {
				b.WriteString(" (not the last stable offset: facts read at two moments)")
			}
		}
	}
	return b.String()
}
