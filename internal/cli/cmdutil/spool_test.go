package cmdutil

import (
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// emptyDir fails unless dir holds no file.
func emptyDir(t *testing.T, dir, when string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("%s: %s holds %v", when, dir, ents[0].Name())
	}
}

// TestStdinSpoolLeavesNoFile: the spool of stdin is unlinked as soon as it
// is created, so that TMPDIR holds nothing while the capture is read, after
// it, and after a reading interrupted mid-stream — a process killed at any
// moment leaves no spool.
func TestStdinSpoolLeavesNoFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be unlinked on Windows; Close removes it")
	}
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)

	ios, in, _, _ := iostreams.Test()
	in.WriteString(twoTopics)
	c, err := input.OpenCapture(context.Background(), ios, "-", capture.DefaultMaxLineSize, &clock.Names{})
	if err != nil {
		t.Fatal(err)
	}
	emptyDir(t, dir, "while the spool is open")
	rd, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := rd.Next(); err == nil; _, err = rd.Next() {
		n++
	}
	if n != 3 {
		t.Errorf("the second reading of the spool gave %d items, want 3", n)
	}
	c.Close()
	emptyDir(t, dir, "after Close")

	// Interrupted: stdin stays open after some lines, and the context ends.
	pr, pw := io.Pipe()
	defer pw.Close()
	ios, _, _, _ = iostreams.Test()
	ios.In = pr
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write([]byte(twoTopics)) // returns once the reader took it all
		emptyDir(t, dir, "mid-stream")
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := input.OpenCapture(ctx, ios, "-", capture.DefaultMaxLineSize, &clock.Names{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("interrupted reading: %v, want it interrupted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted reading did not end")
	}
	emptyDir(t, dir, "after an interrupted reading")
}
