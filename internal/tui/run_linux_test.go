package tui

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"
)

// TestRunOnTerminal runs the view as watch does, on a pseudo-terminal of
// 100×30: it takes the alternate screen, draws the snapshot it is fed —
// its channels in the table — and q, read from the keys, ends it with no
// error. Without a terminal the view has no size and draws nothing, so
// only a terminal shows that Run wires the feed, the keys and the screen.
func TestRunOnTerminal(t *testing.T) {
	term := openTerminal(t, 100, 30)
	keys, press, err := os.Pipe() // buffered: a key is sent whether or not it is read
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	defer press.Close()
	snaps := make(chan view.Snapshot, 1)
	snaps <- liveSnapshot(3, 1)
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), keys, term.slave, Options{Snapshots: snaps}) }()

	term.waitFor(t, "\x1b[?1049h") // the alternate screen
	term.waitFor(t, "shipments/0") // a channel of the snapshot, drawn
	select {
	case err := <-done:
		t.Fatalf("the view ended before a key: %v", err)
	default:
	}
	if _, err := press.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("q: Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("q did not end the view; screen so far:\n%q", term.output())
	}
}

// terminal is a pseudo-terminal: the view writes to slave, the test reads
// what it wrote from master.
type terminal struct {
	slave   *os.File
	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{}
}

// openTerminal opens a pseudo-terminal of cols×rows (testutil.PTY) and
// reads what is written to it; it skips the test on a machine without
// pseudo-terminals.
func openTerminal(t *testing.T, cols, rows uint16) *terminal {
	t.Helper()
	master, slave := testutil.PTY(t, cols, rows)
	term := &terminal{slave: slave, changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return // closed, or EIO once the slave is
			}
		}
	}()
	return term
}

func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor waits until the screen's output holds want, failing the test
// after a deadline that only ends a hung test.
func (term *terminal) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(term.output(), want) {
		select {
		case <-term.changed:
		case <-deadline:
			t.Fatalf("the screen never showed %q:\n%q", want, term.output())
		}
	}
}
