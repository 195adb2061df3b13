package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the view answers to. The help overlay and the
// footer are generated from it, so they cannot drift from what the keys
// do. Stepper bindings are disabled (and left out of help) when no
// Controller drives the view.
type KeyMap struct {
	// Navigation
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Detail                                  key.Binding
	Filter                                  key.Binding
	SortPrev, SortNext, Sort                key.Binding

	// View
	Pause, Help, Back, Quit key.Binding

	// Stepper
	Step, NextDelivery, NextHold key.Binding
	Run, Faster, Slower          key.Binding
	JumpStart, JumpEnd, Jump     key.Binding
}

// DefaultKeyMap returns the keys in the k9s tradition: arrows or j/k to
// move, enter for detail, / to filter, s to sort, p to pause the view, ?
// for help, q to quit; and for the stepper space/n, d, h, r, +/-, g/G and :.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "move up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "move down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "first channel")),
		Bottom:   key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "last channel")),
		Detail:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail of the channel")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter channels")),
		SortPrev: key.NewBinding(key.WithKeys("left", "<"), key.WithHelp("←/<", "previous sort column")),
		SortNext: key.NewBinding(key.WithKeys("right", ">"), key.WithHelp("→/>", "next sort column")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by column (again reverses)")),

		Pause: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause the view")),
		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:  key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc/bksp", "back, clear filter/sort")),
		Quit:  key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),

		Step:         key.NewBinding(key.WithKeys(" ", "n"), key.WithHelp("space/n", "step one receive")),
		NextDelivery: key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "step to next delivery")),
		NextHold:     key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "step to next hold")),
		Run:          key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run/pause the replay")),
		Faster:       key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster")),
		Slower:       key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower")),
		JumpStart:    key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "jump to start")),
		JumpEnd:      key.NewBinding(key.WithKeys("G"), key.WithHelp("G", "jump to end")),
		Jump:         key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "jump to CH@OFFSET or item")),
	}
}

// stepperBindings returns pointers to the bindings that need a Controller.
func (k *KeyMap) stepperBindings() []*key.Binding {
	return []*key.Binding{&k.Step, &k.NextDelivery, &k.NextHold, &k.Run, &k.Faster, &k.Slower, &k.JumpStart, &k.JumpEnd, &k.Jump}
}

// SetStepper enables or disables the stepper bindings.
func (k *KeyMap) SetStepper(on bool) {
	for _, b := range k.stepperBindings() {
		b.SetEnabled(on)
	}
}

// HelpGroup is one titled column of the help overlay.
type HelpGroup struct {
	Title    string
	Bindings []key.Binding
}

// Groups returns every binding, grouped for the help overlay.
func (k KeyMap) Groups() []HelpGroup {
	return []HelpGroup{
		{"Channels", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Detail, k.Filter, k.SortPrev, k.SortNext, k.Sort}},
		{"View", []key.Binding{k.Pause, k.Help, k.Back, k.Quit}},
		{"Stepper", []key.Binding{k.Step, k.NextDelivery, k.NextHold, k.Run, k.Faster, k.Slower, k.JumpStart, k.JumpEnd, k.Jump}},
	}
}

// ShortHelp returns the bindings of the one-line footer.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Quit, k.Step, k.NextDelivery, k.NextHold, k.Run, k.Jump, k.Detail, k.Filter, k.Sort, k.Pause}
}

// BackHint is the Back binding as the footer shows it where it leads back
// to the table: in the detail view and in help.
func (k KeyMap) BackHint() key.Binding {
	b := k.Back
	b.SetHelp(k.Back.Help().Key, "back to the table")
	return b
}

// FullHelp returns every binding in columns (bubbles/help's KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range k.Groups() {
		out = append(out, g.Bindings)
	}
	return out
}
