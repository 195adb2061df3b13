package testutil

import (
	"os"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records Skipf and Fatalf instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = format }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = format }

// TestShared: a path in ../shared is found from any package; a missing one
// skips the test, except on CI, where it fails it.
func TestShared(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	path := Shared(r, "SPEC.md")
	if r.skipped != "" || r.failed != "" {
		t.Skip("../shared is not beside the checkout") // the cases below need it not
	}
	if _, err := os.Stat(path); err != nil || !strings.HasSuffix(path, "/shared/SPEC.md") {
		t.Errorf("Shared(SPEC.md) = %q: %v", path, err)
	}

	r = &recorder{TB: t}
	Shared(r, "no-such-file")
	if r.skipped == "" || r.failed != "" {
		t.Errorf("missing, not on CI: skipped %q, failed %q; want a skip", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Shared(r, "no-such-file")
	if r.skipped != "" || r.failed == "" {
		t.Errorf("missing on CI: skipped %q, failed %q; want a failure", r.skipped, r.failed)
	}
}

// TestSyncBufferWait: Wait returns once a write makes its condition true,
// whichever write that is.
func TestSyncBufferWait(t *testing.T) {
	var b SyncBuffer
	done := make(chan string)
	go func() {
		done <- b.Wait(t, 10*time.Second, "three lines", func(s string) bool { return Lines(s) >= 3 })
	}()
	for _, line := range []string{"one\n", "two\n", "three\n"} {
		b.Write([]byte(line))
	}
	if got := <-done; got != "one\ntwo\nthree\n" {
		t.Errorf("Wait returned %q", got)
	}
}
