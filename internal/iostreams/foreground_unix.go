//go:build unix

package iostreams

import (
	"os"

	"golang.org/x/sys/unix"
)

// isForeground reports whether f is a terminal whose foreground process
// group is ours (tcgetpgrp(fd) == getpgrp()). Asking raises no SIGTTOU; a
// terminal that is not our controlling terminal answers with an error,
// and is not ours to take either.
func isForeground(f *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
