package tui

import (
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/view"
)

// detail shows the selected channel: its head's full clock, every blocker
// with its kind (a held one followed to the root of its chain), the wait
// chain, and the node's stamp.
type detail struct {
	common
	snap *view.Snapshot
	row  *view.ChannelRow
}

// Set points the pane at a channel of a snapshot (row may be nil).
func (d *detail) Set(s *view.Snapshot, row *view.ChannelRow) {
	d.snap, d.row = s, row
}

// lines renders the pane's content, unclipped.
func (d *detail) lines() []string {
	st := d.styles
	w := d.width
	const labelW = 10
	label := func(s string) string { return st.Label.Render(fit(s, labelW)) }
	field := func(name, value string) []string {
		out := wrap(value, w-labelW, 0)
		out[0] = label(name) + out[0]
		for k := 1; k < len(out); k++ {
			out[k] = strings.Repeat(" ", labelW) + out[k]
		}
		return out
	}
	r := d.row
	if r == nil {
		return []string{st.Muted.Render("no channel selected")}
	}
	var out []string
	title := st.DetailTitle.Render(r.Channel) + st.Muted.Render("  "+r.TopicID)
	out = append(out, fit(title, w))
	facts := "settled " + startText(r.Settled) + " · received up to " + posText(r.ReceivedUpTo)
	if r.ReceivedUpTo < 0 {
		facts = "settled " + startText(r.Settled) + " · nothing received yet"
	}
	if r.LogEnd >= 0 {
		facts += " · log end " + posText(r.LogEnd)
	}
	facts += " · held " + count(int64(r.Held))
	out = append(out, fit(st.Muted.Render(facts), w))

	switch {
	case r.Held == 0:
		out = append(out, label("head")+"nothing held")
	case r.Head < 0 || r.Head >= len(d.snap.Heads):
		out = append(out, label("head")+st.Muted.Render("@"+posText(r.HeadOffset)+" — detail cut ("+count(int64(d.snap.HeadsOmitted))+" heads beyond the cap)"))
	default:
		out = append(out, d.head(&d.snap.Heads[r.Head], label, field)...)
	}
	stamp := d.snap.Stamp
	if n := d.snap.StampEntries; n > 8 {
		stamp += st.Muted.Render("  (" + strconv.Itoa(n) + " entries)")
	}
	out = append(out, field("stamp", stamp)...)
	return out
}

func (d *detail) head(h *view.HeadDetail, label func(string) string, field func(string, string) []string) []string {
	st := d.styles
	var out []string
	// Both ages, named: holds reports the one since written.
	head := st.Glyphs.Blocked + " @" + strconv.FormatInt(h.Offset, 10) + " held for " + ageText(h.Age)
	if d.snap.Offline {
		head += " (since written, on the replay's clock)"
	} else {
		head += " since received · written " + ageText(h.Written) + " ago"
	}
	if h.Undecodable != "" {
		head = st.Glyphs.Undecodable + " @" + strconv.FormatInt(h.Offset, 10) + " undecodable header (" + h.Undecodable + "): it never delivers"
	}
	out = append(out, label("head")+st.BlockedGlyph.Render(head))
	clk := h.Clock
	if h.ClockEntries > 8 {
		clk += st.Muted.Render("  (" + strconv.Itoa(h.ClockEntries) + " entries)")
	}
	out = append(out, field("clock", clk)...)
	for k, b := range h.Blockers {
		name := ""
		if k == 0 {
			name = "blockers"
		}
		text := b.Channel + " ≥ " + strconv.FormatInt(b.Required, 10) + ", settled " + startText(b.Settled) + "  "
		kind := b.Cause.String()
		if b.Cause == inspect.CauseHeld || b.Cause == inspect.CauseCycle {
			text += st.KindHeld.Render(kind)
			if b.Cause == inspect.CauseCycle {
				text += " " + st.Glyphs.Cycle + " in a wait cycle"
			} else if b.Root != "" {
				text += st.Glyphs.Chain + "root " + b.Root
				if h.RootWaits != nil && h.RootWaits[k] != "" {
					text += ": " + h.RootWaits[k]
				}
			}
		} else {
			text += st.KindMissing.Render(kind)
			if b.Log != nil {
				text += " (log end " + posText(b.Log.StableEnd()) + ")"
			}
			if t := b.Producer; t != nil {
				text += " producer " + strconv.FormatInt(t.ProducerID, 10)
				if t.TransactionalID != "" {
					text += " (" + escape.Text(t.TransactionalID) + ")"
				}
				text += " from " + strconv.FormatInt(t.FirstOffset, 10)
				if b.Log != nil && !b.Log.PinAgrees(t) {
					text += " (not the last stable offset: facts read at two moments)"
				}
			}
		}
		out = append(out, field(name, text)...)
	}
	if len(h.Blockers) == 0 && h.Undecodable == "" {
		out = append(out, label("blockers")+st.Muted.Render("none"))
	}
	if h.ChainLen > 1 || h.Cycle != nil {
		chain := strings.Join(h.Chain, st.Glyphs.Chain)
		if h.ChainLen > len(h.Chain) {
			chain = strings.Join(h.Chain[:len(h.Chain)-1], st.Glyphs.Chain) + st.Glyphs.Chain + "… (" + strconv.Itoa(h.ChainLen) + " channels)" + st.Glyphs.Chain + h.Chain[len(h.Chain)-1]
		}
		if h.Cycle != nil {
			chain += "  " + st.Glyphs.Cycle + " cycle: a stamp broke the contract"
		} else {
			chain += "  (root)"
		}
		out = append(out, field("chain", chain)...)
	}
	return out
}

// View renders the pane clipped to its height; a cut says how much more
// there is.
func (d *detail) View() string {
	lines := d.lines()
	if len(lines) > d.height && d.height > 0 {
		more := len(lines) - d.height + 1
		lines = append(lines[:d.height-1], d.styles.Muted.Render("… "+strconv.Itoa(more)+" more lines (enter: full detail)"))
	}
	for k := range lines {
		lines[k] = fit(lines[k], d.width)
	}
	return strings.Join(clipLines(lines, d.height), "\n")
}
