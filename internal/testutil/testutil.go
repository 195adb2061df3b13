// Package testutil holds small helpers shared by tests: a buffer a command
// writes while the test reads it, a wait for goroutines to end, golden
// files. Only tests import it.
package testutil

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writes and reads, which
// a test can wait on (Wait).
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed by the next write, when someone waits
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// Wait waits until ok holds for what was written so far, looking again
// after every write, and returns it. It fails t when timeout passes first:
// the deadline only ends a hung test.
func (s *SyncBuffer) Wait(t testing.TB, timeout time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got := s.b.String()
		if ok(got) {
			s.mu.Unlock()
			return got
		}
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		select {
		case <-written:
		case <-deadline.C:
			t.Fatalf("waiting %v for %s; written so far:\n%s", timeout, what, got)
		}
	}
}

// Lines counts the complete lines of out.
func Lines(out string) int { return strings.Count(out, "\n") }

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitGoroutines waits up to five seconds for the number of goroutines to
// fall to n or below, and fails the test with every goroutine's stack when
// it does not: something was left behind.
func WaitGoroutines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Golden compares got with the file testdata/name, or rewrites the file
// when update is set (a package's -update flag).
func Golden(t testing.TB, update bool, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it after review):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// FreeAddr returns a 127.0.0.1 address nothing listens on now, for a
// server a test starts in another process.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
