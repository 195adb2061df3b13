package tui

import (
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/view"
)

// header shows what is watched, its state and counters: three lines, and
// a fourth saying where the gate failed when it did.
type header struct {
	common
	snap *view.Snapshot
	// While the view is paused: what arrived meanwhile.
	paused         bool
	pendingSnaps   int
	pendingRecords int64
}

// Height returns the lines View takes.
func (h *header) Height() int {
	if h.snap != nil && (h.snap.Failure != nil || h.snap.Err != "") {
		return 4
	}
	return 3
}

func (h *header) stateBadge() string {
	st := h.styles
	s := h.snap
	switch s.State {
	case engine.StateRunning:
		return st.StateRunning.Render("● RUNNING")
	case engine.StatePaused:
		return st.StatePaused.Render("‖ PAUSED")
	case engine.StateFinished:
		return st.StateFinished.Render("■ FINISHED")
	case engine.StateFailedClosed:
		code := ""
		if s.Failure != nil {
			code = " " + s.Failure.Code
		}
		return st.StateFailed.Render(st.Glyphs.Undecodable + " FAILED CLOSED" + code)
	case engine.StateError:
		return st.StateFailed.Render(st.Glyphs.Undecodable + " ERROR")
	case engine.StateDisconnected:
		return st.StateFailed.Render("◌ " + view.Retrying(s.RetryingFor))
	}
	return view.StateText(s.State)
}

// View renders the header.
func (h *header) View() string {
	st := h.styles
	s := h.snap
	title := st.Title.Render(cmpOr(s.Title, "causalctl"))
	if s.Source != "" {
		title += st.Muted.Render(" · ") + st.Source.Render(s.Source)
	}
	right := h.stateBadge()
	if h.paused {
		badge := "⏸ VIEW PAUSED +" + strconv.Itoa(h.pendingSnaps) + " " + view.Noun(h.pendingSnaps, "snapshot", "snapshots")
		if h.pendingRecords > 0 {
			badge += " +" + count(h.pendingRecords) + " " + view.Noun(h.pendingRecords, "record", "records")
		}
		right = st.PauseBadge.Render(badge) + " " + right
	}
	lines := []string{spread(title, right, h.width)}

	kv := func(label, value string) string {
		return st.Label.Render(label) + " " + st.Value.Render(value)
	}
	held := kv("held", count(s.Held))
	if s.HeldChannels > 0 {
		held += st.Label.Render(" on ") + st.Value.Render(count(int64(s.HeldChannels))) + st.Label.Render(" ch")
	}
	parts := []string{
		kv("scope", count(int64(s.Scope))),
	}
	if s.Tasks != nil {
		parts = append(parts, kv("tasks", count(int64(len(s.Tasks)))))
	}
	parts = append(parts,
		kv("received", count(s.Received)),
		kv("delivered", count(s.Delivered)),
		kv("dropped", count(s.Dropped)),
		held,
	)
	if s.Skipped > 0 {
		parts = append(parts, kv("skipped", count(s.Skipped)))
	}
	lines = append(lines, fit(strings.Join(parts, "  "), h.width))

	var third []string
	if p := s.Position; p != nil {
		third = append(third, st.Value.Render(view.PositionText(*p)))
	}
	if !s.Offline {
		third = append(third, kv("in", rate(s.RecvRate)+"/s"), kv("out", rate(s.DeliverRate)+"/s"))
	}
	oldest := noneMark
	if s.HeldChannels > 0 {
		oldest = ageText(s.OldestHold)
	}
	third = append(third, kv("oldest hold", oldest))
	if s.RowsOmitted > 0 {
		third = append(third, st.Muted.Render("rows: held first, "+count(int64(s.RowsOmitted))+" cut"))
	}
	if p := s.Position; p != nil && p.Notice.Kind != engine.NoticeNone {
		third = append(third, st.Notice.Render(view.NoticeText(p.Notice)))
	}
	lines = append(lines, fit(strings.Join(third, "  "), h.width))

	switch {
	case s.Failure != nil:
		f := s.Failure
		msg := "failed closed at " + f.Channel + " offset " + strconv.FormatInt(f.Offset, 10)
		if f.Line > 0 {
			msg += " (line " + strconv.FormatInt(f.Line, 10) + ")"
		}
		msg += ": " + f.Error + " — nothing after it was processed"
		lines = append(lines, fit(st.Error.Render(msg), h.width))
	case s.Err != "":
		lines = append(lines, fit(st.Error.Render("stopped: "+s.Err), h.width))
	}
	return strings.Join(lines, "\n")
}

// causes is the title of the rule under the header: the held heads by
// their own cause, the most telling first, as the status line and the
// metrics count them ("" when nothing is held).
func (h *header) causes() string {
	s := h.snap
	cs := s.CauseCounts()
	if len(cs) == 0 && s.HeadsOmitted == 0 {
		return ""
	}
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.Cause.String()+" "+count(int64(c.N)))
	}
	if s.HeadsOmitted > 0 {
		parts = append(parts, "not detailed "+count(int64(s.HeadsOmitted)))
	}
	return "heads by cause: " + strings.Join(parts, " · ")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
