package tui

import (
	"context"
	"io"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/causalctl/causalctl/internal/view"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// ProcessList is the list of a cluster's Parsley processes (the
// `processes` table), from which enter picks one to shadow: `watch` with
// no topics and no --app. It renders rows read beforehand and owns no
// logic; Chosen says which process was picked.
type ProcessList struct {
	common
	title    string
	rows     []inspect.ProcessSummary
	roots    map[string]upstream.Root // each process's upstream root
	selected int
	offset   int
	chosen   string
}

// NewProcessList returns the list of rows (their order kept) under title.
func NewProcessList(styles *Styles, title string, rows []inspect.ProcessSummary, roots map[string]upstream.Root) *ProcessList {
	keys := DefaultKeyMap()
	return &ProcessList{common: common{styles: styles, keys: &keys}, title: title, rows: rows, roots: roots}
}

// Chosen is the application id enter picked; "" when the list was left
// with q or ctrl+c.
func (l *ProcessList) Chosen() string { return l.chosen }

// Init implements tea.Model.
func (l *ProcessList) Init() tea.Cmd { return nil }

// Update implements tea.Model: the cursor keys of the table, enter to
// pick the cursor row (not one that could not be read), q to leave.
func (l *ProcessList) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		l.SetSize(msg.Width, msg.Height)
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return l, tea.Quit
		case "up", "k":
			l.move(-1)
		case "down", "j":
			l.move(1)
		case "home", "g":
			l.move(-len(l.rows))
		case "end", "G":
			l.move(len(l.rows))
		case "enter":
			if l.selected < len(l.rows) && l.rows[l.selected].Err == nil {
				l.chosen = l.rows[l.selected].App
				return l, tea.Quit
			}
		}
	}
	return l, nil
}

func (l *ProcessList) move(d int) {
	l.selected = max(min(l.selected+d, len(l.rows)-1), 0)
	page := l.page()
	if l.selected < l.offset {
		l.offset = l.selected
	}
	if l.selected >= l.offset+page {
		l.offset = l.selected - page + 1
	}
}

// page is the number of rows on screen: all but the title, the column
// titles and the footer.
func (l *ProcessList) page() int { return max(l.height-3, 1) }

// View implements tea.Model.
func (l *ProcessList) View() string {
	st := l.styles
	w := l.width
	lines := []string{spread(st.Title.Render(l.title), st.Muted.Render(view.Count(len(l.rows), "process", "processes")), w)}
	cells := make([][]string, len(l.rows))
	widths := make([]int, len(view.ProcessColumns))
	for k, c := range view.ProcessColumns {
		widths[k] = len(c)
	}
	for i := range l.rows {
		cells[i] = view.ProcessCells(&l.rows[i], view.UpstreamOf(l.roots, l.rows[i].App))
		for k, c := range cells[i] {
			widths[k] = max(widths[k], lipgloss.Width(c))
		}
	}
	line := func(cs []string) string {
		var b strings.Builder
		for k, c := range cs {
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(fit(c, widths[k]))
		}
		return b.String()
	}
	lines = append(lines, st.TableHeader.Render(fit("  "+line(view.ProcessColumns), w)))
	if len(l.rows) == 0 {
		lines = append(lines, st.Muted.Render(fit("  no Parsley processes (no topic named …-__parsley.ordering-changelog)", w)))
	}
	for i := l.offset; i < len(l.rows) && i < l.offset+l.page(); i++ {
		text := fit("  "+line(cells[i]), w)
		switch {
		case i == l.selected:
			text = st.SelectedRow.Render(fit(st.Glyphs.Selected+" "+line(cells[i]), w))
		case l.rows[i].HeldHeads > 0:
			text = st.BlockedRow.Render(text)
		default:
			text = st.Row.Render(text)
		}
		lines = append(lines, text)
	}
	for len(lines) < l.height-1 {
		lines = append(lines, "")
	}
	lines = append(lines, st.Muted.Render(fit("enter shadow the process: its tasks and hold queues  ↑/↓ move  q quit", w)))
	return strings.Join(clipLines(lines, l.height), "\n")
}

// ChooseProcess shows the process list on the alternate screen of out,
// reading keys from in, and returns the process enter picked; "" when the
// user left with q. Like Run, it returns ctx's error when ctx is
// cancelled.
func ChooseProcess(ctx context.Context, in io.Reader, out io.Writer, title string, rows []inspect.ProcessSummary, roots map[string]upstream.Root, color bool) (string, error) {
	var l *ProcessList
	err := runProgram(ctx, in, out, color, func(styles *Styles) tea.Model {
		l = NewProcessList(styles, title, rows, roots)
		return l
	})
	if err != nil {
		return "", err
	}
	return l.Chosen(), nil
}
