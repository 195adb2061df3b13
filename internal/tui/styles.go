package tui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Glyphs mark rows and states so that nothing is told by colour alone.
type Glyphs struct {
	Selected    string // the cursor row
	Blocked     string // a channel whose head is held
	Undecodable string // a head held because its header is undecodable
	Cycle       string // a wait chain that runs into a cycle
	SortAsc     string
	SortDesc    string
	Chain       string // between channels of a wait chain
}

// Styles is every style of the view, built for one renderer: with colour
// off (NO_COLOR, TERM=dumb, a test) every style renders plain text and the
// glyphs still mark what matters.
type Styles struct {
	Glyphs Glyphs

	Title, Source, Muted, Label, Value lipgloss.Style
	Rule                               lipgloss.Style

	StateRunning, StatePaused, StateFinished, StateFailed lipgloss.Style
	PauseBadge, Notice, Error                             lipgloss.Style

	TableHeader, TableHeaderActive lipgloss.Style
	Row, SelectedRow, BlockedRow   lipgloss.Style
	BlockedGlyph                   lipgloss.Style

	DetailTitle           lipgloss.Style
	KindHeld, KindMissing lipgloss.Style

	EventDeliver, EventDrop, EventHold, EventFail lipgloss.Style

	HelpGroup, HelpKey, HelpDesc lipgloss.Style
	Column                       lipgloss.Style // a column of the help overlay
	Prompt                       lipgloss.Style
	TooSmall                     lipgloss.Style
}

// NewStyles returns the styles for renderer r; color false forces plain
// text whatever the terminal can do.
func NewStyles(r *lipgloss.Renderer, color bool) *Styles {
	if !color {
		r.SetColorProfile(termenv.Ascii)
	}
	var (
		red    = lipgloss.Color("1")
		green  = lipgloss.Color("2")
		yellow = lipgloss.Color("3")
		blue   = lipgloss.Color("4")
		cyan   = lipgloss.Color("6")
		grey   = lipgloss.Color("8")
	)
	st := r.NewStyle
	return &Styles{
		Glyphs: Glyphs{
			Selected:    "›",
			Blocked:     "▲",
			Undecodable: "✗",
			Cycle:       "↺",
			SortAsc:     "↑",
			SortDesc:    "↓",
			Chain:       " → ",
		},
		Title:  st().Bold(true),
		Source: st().Foreground(cyan),
		Muted:  st().Foreground(grey),
		Label:  st().Foreground(grey),
		Value:  st().Bold(true),
		Rule:   st().Foreground(grey),

		StateRunning:  st().Bold(true).Foreground(green),
		StatePaused:   st().Bold(true).Foreground(yellow),
		StateFinished: st().Bold(true).Foreground(blue),
		StateFailed:   st().Bold(true).Foreground(lipgloss.Color("15")).Background(red),
		PauseBadge:    st().Bold(true).Foreground(lipgloss.Color("0")).Background(yellow),
		Notice:        st().Foreground(cyan),
		Error:         st().Foreground(red),

		TableHeader:       st().Bold(true).Foreground(grey),
		TableHeaderActive: st().Bold(true).Underline(true),
		Row:               st(),
		SelectedRow:       st().Reverse(true),
		BlockedRow:        st().Foreground(yellow),
		BlockedGlyph:      st().Bold(true).Foreground(red),

		DetailTitle: st().Bold(true),
		KindHeld:    st().Foreground(yellow),
		KindMissing: st().Foreground(red),

		EventDeliver: st().Foreground(green),
		EventDrop:    st().Foreground(grey),
		EventHold:    st().Foreground(yellow),
		EventFail:    st().Bold(true).Foreground(red),

		HelpGroup: st().Bold(true).Underline(true),
		HelpKey:   st().Bold(true).Foreground(cyan),
		HelpDesc:  st(),
		Column:    st().PaddingRight(4),
		Prompt:    st().Bold(true).Foreground(cyan),
		TooSmall:  st().Bold(true),
	}
}
