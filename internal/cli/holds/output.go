package holds

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
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
const SchemaVersion = render.HoldsSchema

type jsonReport = render.HoldsJSON

func reportJSON(rep *inspect.Report, opts *Options) jsonReport {
	return render.Holds(rep, opts.holdsOptions())
}

func (opts *Options) holdsOptions() render.HoldsOptions {
	return render.HoldsOptions{ReceiptOnly: opts.ReceiptOnly, OlderThan: opts.OlderThan, RetentionWarn: opts.RetentionWarn}
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
