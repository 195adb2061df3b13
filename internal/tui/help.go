package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// helpView is the help overlay: the caller's intro (the demo's commands
// to try, which the alternate screen hid), every enabled binding of the
// key map in titled columns, and a legend of the table's columns and
// marks. It scrolls when it is taller than the screen.
type helpView struct {
	common
	intro   []string
	offline bool // a replay: the live-only columns are not shown
	offset  int  // first line on screen
}

// keyColumns renders the enabled bindings of each group.
func (h *helpView) keyColumns() []string {
	st := h.styles
	var cols []string
	for _, g := range h.keys.Groups() {
		var lines []string
		for _, b := range g.Bindings {
			if !b.Enabled() {
				continue
			}
			lines = append(lines, st.HelpKey.Render(fit(b.Help().Key, 9))+" "+st.HelpDesc.Render(b.Help().Desc))
		}
		if len(lines) == 0 {
			continue
		}
		cols = append(cols, st.HelpGroup.Render(g.Title)+"\n"+strings.Join(lines, "\n"))
	}
	return cols
}

// lines renders the whole overlay, unclipped.
func (h *helpView) lines() []string {
	st := h.styles
	var lines []string
	if len(h.intro) > 0 {
		lines = append(lines, st.Title.Render(h.intro[0]))
		lines = append(lines, h.intro[1:]...)
		lines = append(lines, "")
	}

	cols := h.keyColumns()
	var body string
	switch {
	case h.width >= 110:
		// Side by side when they fit.
		for k := range cols[:len(cols)-1] {
			cols[k] = st.Column.Render(cols[k])
		}
		body = lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	default:
		body = strings.Join(cols, "\n\n")
		if strings.Count(body, "\n")+3 > h.height && len(cols) > 1 {
			// Two columns of groups when one is too tall for the screen.
			left, right := cols[0], strings.Join(cols[1:], "\n\n")
			body = lipgloss.JoinHorizontal(lipgloss.Top, st.Column.Render(left), right)
		}
	}
	lines = append(lines, st.Title.Render("Keys"), "")
	lines = append(lines, strings.Split(body, "\n")...)

	// The legend: one line a column, from the columns themselves.
	const labelW = 10
	lines = append(lines, "", st.HelpGroup.Render("Columns"))
	legend := func(label, text string) {
		for k, l := range wrap(text, h.width-labelW-1, 0) {
			if k == 0 {
				lines = append(lines, st.HelpKey.Render(fit(label, labelW))+" "+st.HelpDesc.Render(l))
			} else {
				lines = append(lines, strings.Repeat(" ", labelW+1)+st.HelpDesc.Render(strings.TrimLeft(l, " ")))
			}
		}
	}
	t := table{offline: h.offline}
	for _, c := range t.shown() {
		legend(c.title(), c.legend(h.offline))
	}
	legend("marks", unknownMark+" unknown · "+startMark+" nothing settled or received yet · "+noneMark+" nothing held")
	legend("by cause", "the rule under the header counts heads by their own cause (held: behind another held head), as the status line and the metrics do")
	lines = append(lines, "", st.Muted.Render("? or esc closes this help · ↑/↓ pgup/pgdn scroll"))
	for k := range lines {
		lines[k] = fit(lines[k], h.width)
	}
	return lines
}

// Scroll moves the overlay by d lines; Top and Bottom are d = ∓len.
func (h *helpView) Scroll(d int) {
	h.offset += d
	h.clamp(len(h.lines()))
}

func (h *helpView) clamp(n int) {
	h.offset = max(min(h.offset, n-h.height), 0)
}

// View renders the overlay from its scroll offset; a last line says when
// there is more below.
func (h *helpView) View() string {
	lines := h.lines()
	h.clamp(len(lines))
	lines = lines[h.offset:]
	if len(lines) > h.height && h.height > 0 {
		more := len(lines) - h.height + 1
		lines = append(lines[:h.height-1], fit(h.styles.Muted.Render("↓ "+strconv.Itoa(more)+" more lines (↓/pgdn)"), h.width))
	}
	return strings.Join(clipLines(lines, h.height), "\n")
}

// shortHelp renders the footer: the enabled short-help bindings that fit.
func shortHelp(c common, bs []key.Binding) string {
	st := c.styles
	var parts []string
	used := 0
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		item := st.HelpKey.Render(b.Help().Key) + " " + st.Muted.Render(b.Help().Desc)
		w := lipgloss.Width(item) + 2
		if used+w > c.width {
			break
		}
		parts = append(parts, item)
		used += w
	}
	return fit(strings.Join(parts, "  "), c.width)
}
