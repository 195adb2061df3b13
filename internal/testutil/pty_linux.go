package testutil

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// PTY opens a fresh pseudo-terminal of cols×rows and returns its two ends:
// a test reads from master what a program writes to slave, and writes
// there what the program reads as typed. Both are closed when the test
// ends (closing slave earlier, once a child holds it, is allowed). A
// machine without pseudo-terminals skips the test.
func PTY(tb testing.TB, cols, rows uint16) (master, slave *os.File) {
	tb.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Skipf("no pseudo-terminals: %v", err)
	}
	tb.Cleanup(func() { master.Close() })
	var name string
	var ctlErr error
	rc, err := master.SyscallConn()
	if err == nil {
		err = rc.Control(func(fd uintptr) {
			if ctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ctlErr != nil {
				return
			}
			var n uint32
			if n, ctlErr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN); ctlErr == nil {
				name = fmt.Sprintf("/dev/pts/%d", n)
			}
		})
	}
	if err != nil || ctlErr != nil {
		tb.Fatalf("unlocking the pseudo-terminal: %v %v", err, ctlErr)
	}
	slave, err = os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { slave.Close() })
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		tb.Fatal(err)
	}
	return master, slave
}
