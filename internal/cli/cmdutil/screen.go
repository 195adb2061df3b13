package cmdutil

import (
	"fmt"

	"github.com/causalctl/causalctl/internal/iostreams"
)

// TakeScreen reports whether a live view may start on ios: stdout is a
// terminal and the process is in that terminal's foreground. A job started
// in the background (`causalctl demo &`) may not: putting the terminal in
// raw mode would stop it (SIGTTOU, "Stopped (tty output)"). Then it says
// on stderr, in one line, that it prints instead what it names, and the
// caller goes on as without the view. The check is made once, at start.
func TakeScreen(ios *iostreams.IOStreams, instead string) bool {
	if ios.CanTakeScreen() {
		return true
	}
	if ios.OutTTY {
		fmt.Fprintf(ios.ErrOut, "causalctl: not in the terminal's foreground: %s instead of the live view\n", instead)
	}
	return false
}
