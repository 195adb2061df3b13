package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// Minimum terminal size; below it the view says so instead of drawing.
const (
	MinWidth  = 80
	MinHeight = 20
)

// TickInterval is how often a running stepper is advanced and redrawn:
// ten snapshots a second at most.
const TickInterval = 100 * time.Millisecond

// SnapshotMsg carries a new state to draw. Live drivers send at most about
// ten a second (Feed, or Options.Snapshots); never one per record.
type SnapshotMsg struct {
	Snapshot view.Snapshot
}

// FeedClosedMsg says the snapshot channel was closed: the live feed ended.
type FeedClosedMsg struct{}

// TickMsg advances a running stepper; At is when the tick fired.
type TickMsg struct {
	At time.Time
}

// Model is the bubbletea model of the view. It owns no gate logic: it
// renders snapshots and forwards stepper keys to a Controller.
type Model struct {
	common
	header header
	table  *table
	detail detail
	events events
	help   helpView
	prompt prompt

	snap     view.Snapshot
	haveSnap bool

	// The view is paused: latest holds what arrived meanwhile.
	paused       bool
	latest       *view.Snapshot
	pendingSnaps int

	zoom     bool // the detail pane fills the body
	showHelp bool

	ctrl       Controller
	feed       <-chan view.Snapshot
	done       <-chan struct{}
	feedClosed bool

	status    string
	statusErr bool

	ticking  bool
	lastTick time.Time
}

// NewModel returns the model for opts, drawn with styles (NewStyles).
func NewModel(styles *Styles, opts Options) *Model {
	keys := DefaultKeyMap()
	if opts.KeyMap != nil {
		keys = *opts.KeyMap
	}
	keys.SetStepper(opts.Controller != nil)
	c := common{styles: styles, keys: &keys}
	m := &Model{
		common: c,
		header: header{common: c},
		table:  newTable(c),
		detail: detail{common: c},
		events: events{common: c},
		help:   helpView{common: c, intro: opts.Intro},
		// The intro screen: shown until a key closes it.
		showHelp: opts.ShowIntro && len(opts.Intro) > 0,
		prompt:   prompt{common: c},
		ctrl:     opts.Controller,
		feed:     opts.Snapshots,
	}
	m.snap.Title = escape.Text(cmpOr(opts.Title, "causalctl"))
	m.header.snap = &m.snap
	// Until the terminal reports its size (it never does when out is not a
	// terminal), draw at the classic 80×24.
	m.SetSize(80, 24)
	if m.ctrl != nil {
		m.show(m.ctrl.Snapshot())
	}
	return m
}

// Init starts waiting for snapshots of a live feed.
func (m *Model) Init() tea.Cmd {
	if m.feed != nil {
		return waitSnapshot(m.feed, m.done)
	}
	return nil
}

// waitSnapshot is a command that waits for the next snapshot on ch.
func waitSnapshot(ch <-chan view.Snapshot, done <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		select {
		case s, ok := <-ch:
			if !ok {
				return FeedClosedMsg{}
			}
			return SnapshotMsg{Snapshot: s}
		case <-done:
			return nil
		}
	}
}

func tick() tea.Cmd {
	return tea.Tick(TickInterval, func(t time.Time) tea.Msg { return TickMsg{At: t} })
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
	case SnapshotMsg:
		m.receive(msg.Snapshot)
		if m.feed != nil {
			return m, waitSnapshot(m.feed, m.done)
		}
	case FeedClosedMsg:
		m.feedClosed = true
		m.setStatus("the feed ended", false)
	case TickMsg:
		return m, m.onTick(msg.At)
	case tea.KeyMsg:
		return m, m.onKey(msg)
	}
	return m, nil
}

// receive takes a new snapshot: shown at once, or kept while paused.
func (m *Model) receive(s view.Snapshot) {
	if m.paused {
		m.latest = &s
		m.pendingSnaps++
		m.syncHeader()
		return
	}
	m.show(s)
}

func (m *Model) show(s view.Snapshot) {
	// Escaped once, at the door: every string a broker, a store or a file
	// handed the snapshot, today's fields and any added later, is drawn
	// with no control byte raw (escape.Deep).
	m.snap, m.haveSnap = escape.Deep(s), true
	m.table.SetRows(&m.snap)
	m.help.offline = m.snap.Offline
	m.events.Set(m.snap.Recent)
	m.syncHeader()
	m.syncDetail()
}

func (m *Model) syncHeader() {
	m.header.snap = &m.snap
	m.header.paused = m.paused
	m.header.pendingSnaps = m.pendingSnaps
	m.header.pendingRecords = 0
	if m.latest != nil {
		m.header.pendingRecords = m.latest.Received - m.snap.Received
	}
}

func (m *Model) syncDetail() {
	m.detail.Set(&m.snap, m.table.Selected())
}

func (m *Model) setStatus(s string, isErr bool) {
	m.status, m.statusErr = s, isErr
}

func (m *Model) onTick(at time.Time) tea.Cmd {
	if m.ctrl == nil || !m.ctrl.Running() {
		m.ticking = false
		return nil
	}
	elapsed := TickInterval
	if !m.lastTick.IsZero() {
		elapsed = min(at.Sub(m.lastTick), time.Second)
	}
	m.lastTick = at
	m.ctrl.Advance(elapsed)
	m.receive(m.ctrl.Snapshot())
	if !m.ctrl.Running() {
		m.ticking = false
		return nil
	}
	return tick()
}

// startTicking starts the ticks of a running stepper, once.
func (m *Model) startTicking() tea.Cmd {
	if m.ticking || m.ctrl == nil || !m.ctrl.Running() {
		return nil
	}
	m.ticking = true
	m.lastTick = time.Time{}
	return tick()
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if m.prompt.Active() {
		// Quit keys that type nothing (ctrl+c) still quit.
		if msg.Type != tea.KeyRunes && key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return m.onPromptKey(msg)
	}
	if key.Matches(msg, k.Quit) {
		return tea.Quit
	}
	m.setStatus("", false)
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help, k.Back):
			m.showHelp = false
		case key.Matches(msg, k.Up):
			m.help.Scroll(-1)
		case key.Matches(msg, k.Down):
			m.help.Scroll(1)
		case key.Matches(msg, k.PageUp):
			m.help.Scroll(-m.help.height)
		case key.Matches(msg, k.PageDown):
			m.help.Scroll(m.help.height)
		case key.Matches(msg, k.Top):
			m.help.offset = 0
		case key.Matches(msg, k.Bottom):
			m.help.Scroll(len(m.help.lines()))
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp, m.help.offset = true, 0
	case key.Matches(msg, k.Back):
		switch {
		case m.zoom:
			m.zoom = false
			m.layout()
		case m.table.filter != "":
			m.table.SetFilter("")
		case m.table.Sorted():
			m.table.SortDefault()
		}
	case key.Matches(msg, k.Pause):
		m.togglePause()
	case key.Matches(msg, k.Up):
		m.table.Move(-1)
	case key.Matches(msg, k.Down):
		m.table.Move(1)
	case key.Matches(msg, k.PageUp):
		m.table.Move(-m.table.pageRows())
	case key.Matches(msg, k.PageDown):
		m.table.Move(m.table.pageRows())
	case key.Matches(msg, k.Top):
		m.table.Top()
	case key.Matches(msg, k.Bottom):
		m.table.Bottom()
	case key.Matches(msg, k.Detail):
		m.zoom = !m.zoom
		m.layout()
	case key.Matches(msg, k.Filter):
		m.prompt.Open(promptFilter, "filter: ", m.table.filter)
	case key.Matches(msg, k.SortPrev):
		m.table.MoveColumn(-1)
	case key.Matches(msg, k.SortNext):
		m.table.MoveColumn(1)
	case key.Matches(msg, k.Sort):
		m.table.Sort()
	default:
		return m.onStepperKey(msg)
	}
	m.syncDetail()
	return nil
}

func (m *Model) onStepperKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	c := m.ctrl
	if c == nil {
		return nil
	}
	switch {
	case key.Matches(msg, k.Step):
		c.Step()
	case key.Matches(msg, k.NextDelivery):
		c.NextDelivery()
	case key.Matches(msg, k.NextHold):
		c.NextHold()
	case key.Matches(msg, k.Run):
		c.ToggleRun()
	case key.Matches(msg, k.Faster):
		c.Faster()
	case key.Matches(msg, k.Slower):
		c.Slower()
	case key.Matches(msg, k.JumpStart):
		c.JumpStart()
	case key.Matches(msg, k.JumpEnd):
		c.JumpEnd()
	case key.Matches(msg, k.Jump):
		m.prompt.Open(promptJump, "jump to (CH@OFFSET or item): ", "")
		return nil
	default:
		return nil
	}
	m.receive(c.Snapshot())
	return m.startTicking()
}

func (m *Model) onPromptKey(msg tea.KeyMsg) tea.Cmd {
	res := m.prompt.Update(msg)
	kind := m.prompt.kind
	switch res {
	case promptCancel:
		m.prompt.Close()
		if kind == promptFilter {
			m.table.SetFilter("")
		}
	case promptSubmit:
		m.prompt.Close()
		if kind == promptJump && m.ctrl != nil && strings.TrimSpace(m.prompt.value) != "" {
			if err := m.ctrl.Jump(m.prompt.value); err != nil {
				m.setStatus(err.Error(), true)
			}
			m.receive(m.ctrl.Snapshot())
		}
	case promptEditing:
		if kind == promptFilter {
			m.table.SetFilter(m.prompt.value)
		}
	}
	m.syncDetail()
	return nil
}

func (m *Model) togglePause() {
	m.paused = !m.paused
	if !m.paused && m.latest != nil {
		latest := *m.latest
		m.latest, m.pendingSnaps = nil, 0
		m.show(latest)
		return
	}
	m.latest, m.pendingSnaps = nil, 0
	m.syncHeader()
}

// SetSize lays the components out for a terminal of w×h cells.
func (m *Model) SetSize(w, h int) {
	m.common.SetSize(w, h)
	m.layout()
}

// heights of the regions for the current size and mode.
type regions struct {
	header, table, detail, events int
}

func (m *Model) regions() regions {
	r := regions{header: m.header.Height()}
	body := m.height - r.header - 1 - 1 // a rule under the header, the footer
	switch {
	case m.zoom:
		r.detail = body
		return r
	case m.height >= 32:
		r.events = 5
	default:
		r.events = 3
	}
	body -= r.events + 1
	if m.height >= 34 {
		r.detail = min(max(body/3, 8), 12)
		body -= r.detail + 1
	}
	r.table = body
	return r
}

func (m *Model) layout() {
	w := m.width
	r := m.regions()
	m.header.SetSize(w, r.header)
	m.table.SetSize(w, max(r.table, 2))
	m.detail.SetSize(w, r.detail)
	m.events.SetSize(w, r.events)
	m.help.SetSize(w, m.height-r.header-2)
	m.prompt.SetSize(w, 1)
}

// rule is a horizontal line with an optional title.
func (m *Model) rule(title string) string {
	st := m.styles
	if title == "" {
		return st.Rule.Render(strings.Repeat("─", m.width))
	}
	t := "── " + title + " "
	return st.Rule.Render(t + strings.Repeat("─", max(m.width-ansi.StringWidth(t), 0)))
}

// View renders the whole screen: exactly the terminal's height, no line
// wider than it.
func (m *Model) View() string {
	if m.width == 0 || m.height == 0 {
		return ""
	}
	if m.width < MinWidth || m.height < MinHeight {
		return m.tooSmall()
	}
	m.layout() // the header's height follows the snapshot
	r := m.regions()
	parts := []string{m.header.View(), m.rule(m.header.causes())}
	switch {
	case m.showHelp:
		parts = append(parts, m.help.View())
	case !m.haveSnap:
		lines := clipLines([]string{"", m.styles.Muted.Render("  waiting for the first snapshot…")}, m.height-r.header-2)
		parts = append(parts, strings.Join(lines, "\n"))
	case m.zoom:
		parts = append(parts, m.detail.View())
	default:
		parts = append(parts, m.table.View())
		if r.detail > 0 {
			parts = append(parts, m.rule(m.detailTitle()), m.detail.View())
		}
		parts = append(parts, m.rule("recent events"), m.events.View())
	}
	parts = append(parts, m.footer())
	return strings.Join(parts, "\n")
}

func (m *Model) detailTitle() string {
	if r := m.table.Selected(); r != nil {
		return "detail · " + r.Channel
	}
	return "detail"
}

func (m *Model) footer() string {
	st := m.styles
	switch {
	case m.prompt.Active():
		return m.prompt.View()
	case m.status != "":
		style := st.Notice
		if m.statusErr {
			style = st.Error
		}
		return fit(style.Render(m.status), m.width)
	}
	bs := m.keys.ShortHelp()
	if m.zoom || m.showHelp {
		// The way back first: nothing else on screen says it.
		bs = append([]key.Binding{m.keys.BackHint()}, bs...)
	}
	left := shortHelp(m.common, bs)
	var tags []string
	if f := m.table.filter; f != "" {
		tags = append(tags, "filter “"+f+"”: "+strconv.Itoa(len(m.table.view))+" of "+strconv.Itoa(len(m.table.rows)))
	}
	if m.feedClosed {
		tags = append(tags, "feed ended")
	}
	if len(tags) == 0 {
		return left
	}
	right := st.Notice.Render(strings.Join(tags, " · "))
	return spread(strings.TrimRight(left, " "), right, m.width)
}

func (m *Model) tooSmall() string {
	st := m.styles
	msg := []string{
		st.TooSmall.Render("terminal too small"),
		strconv.Itoa(m.width) + "×" + strconv.Itoa(m.height) + ", need at least " + strconv.Itoa(MinWidth) + "×" + strconv.Itoa(MinHeight),
		st.Muted.Render("q quits"),
	}
	lines := make([]string, m.height)
	top := max((m.height-len(msg))/2, 0)
	for k, s := range msg {
		if top+k >= m.height {
			break
		}
		pad := max((m.width-ansi.StringWidth(s))/2, 0)
		lines[top+k] = fit(strings.Repeat(" ", pad)+s, m.width)
	}
	return strings.Join(lines, "\n")
}
