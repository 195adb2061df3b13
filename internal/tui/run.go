// Package tui is the live view of a delivery gate — `causalctl watch`,
// `demo` and `replay --tui`: a header with the state and counters, the
// channels table with held heads marked, a detail pane for the selected
// channel (the head's full clock, every blocker and its chain, the node's
// stamp) and a strip of recent events.
//
// The view owns no gate logic. A live driver builds replay.Snapshots on
// the goroutine that runs the gate, at most about ten a second, and hands
// them over a channel (Options.Snapshots, or Feed for a program of one's
// own); the offline stepper is driven through a Controller on the
// program's own event loop, with no goroutine at all.
package tui

import (
	"context"
	"errors"
	"io"

	"github.com/causalctl/causalctl/internal/view"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// Options configure Run and NewModel.
type Options struct {
	// Title is shown until the first snapshot brings its own.
	Title string
	// Snapshots is the live feed: the model waits on it and draws each
	// snapshot; a closed channel ends the feed (the view stays). Send at
	// most about ten a second, never one per record.
	Snapshots <-chan view.Snapshot
	// Controller drives a stepper (replay --tui); nil disables the
	// stepper keys.
	Controller Controller
	// Color enables colour: pass IOStreams.Color, the one colour decision
	// (it is off with NO_COLOR set or TERM=dumb).
	Color bool
	// KeyMap replaces DefaultKeyMap.
	KeyMap *KeyMap
	// Intro opens the help overlay (?): what the caller printed before
	// the view took the screen, which the alternate screen hides — the
	// demo's commands to try. The first line is its heading.
	Intro []string
	// ShowIntro opens the view on the intro (with the keys beside it)
	// until a key closes it: the demo's explanation stays readable instead
	// of being covered by the table at once.
	ShowIntro bool
}

// Run runs the view on the alternate screen of out, reading keys from in,
// until q or ctrl+c, or until ctx is cancelled (then it returns ctx's
// error). Callers check that out is a terminal first; in a pipe they print
// live.Status lines instead.
func Run(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	return runProgram(ctx, in, out, opts.Color, func(styles *Styles) tea.Model {
		m := NewModel(styles, opts)
		m.done = ctx.Done()
		return m
	})
}

// runProgram runs the model build makes with the styles of out on the
// alternate screen of out, keys from in, until it quits or ctx is
// cancelled (then it returns ctx's error).
func runProgram(ctx context.Context, in io.Reader, out io.Writer, color bool, build func(*Styles) tea.Model) error {
	r := lipgloss.NewRenderer(out)
	// The view's colours are the terminal's own 16: it never needs the
	// background colour, so the terminal is never asked for it (see
	// iostreams' quiet.go).
	r.SetHasDarkBackground(true)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(out), tea.WithAltScreen()}
	if in != nil {
		popts = append(popts, tea.WithInput(in))
	}
	_, err := tea.NewProgram(build(NewStyles(r, color)), popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Feed sends every snapshot from ch to p until ch is closed (then it sends
// FeedClosedMsg) or ctx is done. Run it on a goroutine of its own, for a
// program built without Options.Snapshots.
func Feed(ctx context.Context, p *tea.Program, ch <-chan view.Snapshot) {
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-ch:
			if !ok {
				p.Send(FeedClosedMsg{})
				return
			}
			p.Send(SnapshotMsg{Snapshot: s})
		}
	}
}
