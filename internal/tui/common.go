package tui

import (
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/charmbracelet/x/ansi"
)

// common is what every component shares: its size, the styles and the
// keys. Components embed it and keep their own size through SetSize.
type common struct {
	width, height int
	styles        *Styles
	keys          *KeyMap
}

// SetSize sets the size the component renders to.
func (c *common) SetSize(width, height int) {
	c.width, c.height = width, height
}

// fit truncates s to w cells (with an ellipsis) and pads it with spaces
// to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// fitRight is fit with the text aligned right.
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-n) + s
}

// spread puts left and right on one line of width w, right-aligned right;
// left is cut when both do not fit.
func spread(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w {
		return fit(right, w)
	}
	return fit(left, w-rw-1) + " " + right
}

// The marks of what is not a number: a position or age not known, a
// channel that settled or received nothing yet, a cell of a channel with
// nothing held. docs/live-view.md explains them.
const (
	unknownMark = "?"
	startMark   = "start"
	noneMark    = "-"
)

// posText writes a position, unknownMark when unknown (−1).
func posText(p int64) string {
	if p < 0 {
		return unknownMark
	}
	return strconv.FormatInt(p, 10)
}

// startText writes a settled or received position, −1 (nothing yet) as
// startMark: the channel is at its start.
func startText(p int64) string {
	if p < 0 {
		return startMark
	}
	return strconv.FormatInt(p, 10)
}

// ageText writes an age, unknownMark when unknown.
func ageText(a inspect.Age) string {
	if !a.Known {
		return unknownMark
	}
	return view.AgeText(a)
}

// heldText is s for a channel holding a head, noneMark for one that holds
// nothing (no head, no age).
func heldText(held bool, s string) string {
	if !held {
		return noneMark
	}
	return s
}

// count writes n with groups of three digits: 1 234 567.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

// rate writes a records/s figure.
func rate(r float64) string {
	switch {
	case r >= 100:
		return count(int64(r + 0.5))
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// clipLines keeps the first h lines of s, padding with empty lines to h.
func clipLines(lines []string, h int) []string {
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

// wrap breaks s into lines of at most w cells, preferring breaks after
// commas and spaces, and indents continuation lines by indent spaces.
func wrap(s string, w, indent int) []string {
	if w <= indent+4 {
		return []string{fit(s, w)}
	}
	first := ansi.Wrap(s, w, ",")
	lines := strings.Split(first, "\n")
	if len(lines) == 1 {
		return lines
	}
	// Re-wrap the rest narrower to leave room for the indent.
	rest := strings.Join(lines[1:], "")
	out := []string{lines[0]}
	pad := strings.Repeat(" ", indent)
	for _, l := range strings.Split(ansi.Wrap(rest, w-indent, ","), "\n") {
		out = append(out, pad+l)
	}
	return out
}
