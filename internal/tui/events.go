package tui

import (
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/view"
)

// events is the recent-events strip: the last deliveries, drops, holds and
// the failure, newest last.
type events struct {
	common
	recent []view.RecentEvent
}

// Set shows the events of a snapshot.
func (e *events) Set(recent []view.RecentEvent) { e.recent = recent }

// View renders the newest events that fit, newest at the bottom.
func (e *events) View() string {
	st := e.styles
	rs := e.recent
	if len(rs) > e.height {
		rs = rs[len(rs)-e.height:]
	}
	lines := make([]string, 0, e.height)
	if len(rs) == 0 {
		lines = append(lines, st.Muted.Render("no events yet"))
	}
	for _, r := range rs {
		style := st.EventDrop
		switch r.Kind {
		case "deliver":
			style = st.EventDeliver
		case "hold":
			style = st.EventHold
		case "fail-closed", "error", "gap":
			style = st.EventFail
		}
		text := r.Text
		if r.Repeats > 1 {
			text += " (×" + strconv.Itoa(r.Repeats) + ")"
		}
		lines = append(lines, style.Render(fit(text, e.width)))
	}
	return strings.Join(clipLines(lines, e.height), "\n")
}
