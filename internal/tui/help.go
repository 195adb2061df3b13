package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// helpView is the help overlay, generated from the key map: every enabled
// binding, in titled columns.
type helpView struct {
	common
}

// View renders the overlay.
func (h *helpView) View() string {
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
	body := cols[0]
	if h.width >= 110 {
		// Side by side when they fit.
		for k := range cols {
			cols[k] = st.Column.Render(cols[k])
		}
		body = lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	} else {
		body = strings.Join(cols, "\n\n")
	}
	lines := append([]string{st.Title.Render("Keys"), ""}, strings.Split(body, "\n")...)
	lines = append(lines, "", st.Muted.Render("? or esc closes this help"))
	if len(lines) > h.height {
		// Two columns of groups when one is too tall.
		left, right := cols[0], strings.Join(cols[1:], "\n\n")
		body = lipgloss.JoinHorizontal(lipgloss.Top, st.Column.Render(left), right)
		lines = append([]string{st.Title.Render("Keys"), ""}, strings.Split(body, "\n")...)
	}
	for k := range lines {
		lines[k] = fit(lines[k], h.width)
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
