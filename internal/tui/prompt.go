package tui

import (
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
)

// promptKind says what a prompt's answer is for.
type promptKind int

const (
	promptNone   promptKind = iota
	promptFilter            // / : the channel filter, applied as typed
	promptJump              // : : a stepper jump target
)

// prompt is a one-line input in the footer. It draws a static cursor, so
// the view never changes without a key.
type prompt struct {
	common
	kind  promptKind
	label string
	value string
}

// Open starts a prompt with an initial value.
func (p *prompt) Open(kind promptKind, label, value string) {
	p.kind, p.label, p.value = kind, label, value
}

// Close ends the prompt.
func (p *prompt) Close() { p.kind = promptNone }

// Active reports whether the prompt takes the keys.
func (p *prompt) Active() bool { return p.kind != promptNone }

// promptResult says what a key did to the prompt.
type promptResult int

const (
	promptEditing promptResult = iota
	promptSubmit
	promptCancel
)

// Update edits the value with one key.
func (p *prompt) Update(msg tea.KeyMsg) promptResult {
	switch msg.Type {
	case tea.KeyEnter:
		return promptSubmit
	case tea.KeyEsc:
		return promptCancel
	case tea.KeyBackspace, tea.KeyCtrlH:
		if p.value != "" {
			_, n := utf8.DecodeLastRuneInString(p.value)
			p.value = p.value[:len(p.value)-n]
		}
	case tea.KeyCtrlU:
		p.value = ""
	case tea.KeySpace:
		p.value += " "
	case tea.KeyRunes:
		p.value += string(msg.Runes)
	}
	return promptEditing
}

// View renders the prompt line.
func (p *prompt) View() string {
	return fit(p.styles.Prompt.Render(p.label)+p.value+"█", p.width)
}
