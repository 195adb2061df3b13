package iostreams

import "github.com/charmbracelet/lipgloss"

// Bubble Tea's package init asks the terminal on stdout for its background
// colour (OSC 11, then a cursor position report, DSR) and waits up to 5 s
// for an answer, so that every command of a program linking it, `decode`
// as much as the live view, pauses 5 s on a terminal that never answers
// (script(1), some ssh and CI terminals), whatever NO_COLOR says. Nothing
// here needs the answer: the live view draws in the terminal's own 16
// colours, which the terminal already maps for its background, and never
// uses lipgloss's light/dark adaptive colours.
//
// So the background is declared here, and nothing is asked. This has to
// run before Bubble Tea's init: Go initialises the package first in
// import-path order among those whose imports are initialised (the spec's
// "Package initialization"). Bubble Tea waits for lipgloss; so does this
// package, whose other imports (go-isatty, x/sys) lipgloss's termenv
// imports too, and its path sorts before github.com/charmbracelet/....
// Keep it so: cmd/causalctl's TestNoTerminalQueries reads the bytes a real
// pseudo-terminal receives, and fails if the order ever changes.
func init() {
	lipgloss.SetHasDarkBackground(true)
}
