package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// InterruptGrace is how long a command may take, after Ctrl-C or
// SIGTERM, to stop and print what it did before causalctl exits 130
// without waiting for it: whatever the command waits on (a FIFO nobody
// opens, a broker that never answers) cannot keep the process alive.
// A final document being written when it runs out is finished first
// (FinalOutput).
const InterruptGrace = 3 * time.Second

// errFinalStopped refuses a final document begun after the process
// decided to exit: none of it is written.
var errFinalStopped = errors.New("interrupted before the output was written")

// FinalOutput guards a command's final document (a -o json report, a
// summary) against the hard exit that follows an interrupt: a document
// whose write has begun is written whole, and one begun after the exit
// was decided is not written at all, so stdout never holds cut JSON.
// The zero value is ready; a nil *FinalOutput writes without a guard.
type FinalOutput struct {
	mu      sync.Mutex // held while a document is written
	stopped bool       // under mu: the process is exiting

	stoppingMu sync.Mutex
	stopping   chan struct{} // closed when Stop starts waiting (tests wait on it)
}

// Write writes b to w in one write, as the command's final document.
func (g *FinalOutput) Write(w io.Writer, b []byte) error {
	return g.Do(func() error {
		_, err := w.Write(b)
		return err
	})
}

// Do runs write, which writes the command's final document (in as many
// writes as it takes: check's findings are streamed through a buffer), as
// one: once begun it is finished, even when the grace after an interrupt
// runs out meanwhile. When the process is already exiting it writes
// nothing and returns an error.
func (g *FinalOutput) Do(write func() error) error {
	if g == nil {
		return write()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return errFinalStopped
	}
	return write()
}

// Stop waits for a document being written to be finished and refuses
// every later one. Interruptible calls it when the grace has run out.
func (g *FinalOutput) Stop() {
	if g == nil {
		return
	}
	close(g.stopStarted())
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// Stopping is closed once Stop has begun waiting for the output being
// written: a test's slow stdout waits on it, to write the rest of a write
// only once the exit is decided.
func (g *FinalOutput) Stopping() <-chan struct{} { return g.stopStarted() }

// stopStarted is closed when Stop starts waiting for a document.
func (g *FinalOutput) stopStarted() chan struct{} {
	g.stoppingMu.Lock()
	defer g.stoppingMu.Unlock()
	if g.stopping == nil {
		g.stopping = make(chan struct{})
	}
	return g.stopping
}

// Interruptible runs run with the interruption rules of every command
// (cli.Main): the first signal on sigs cancels run's context and the
// command stops and reports; when it has not returned InterruptGrace
// later (after(InterruptGrace) fires), the final document being written,
// if any, is finished (final.Stop) and the result is exit 130 without
// waiting for run. A second signal exits 130 at once, even in the middle
// of a document: the user asked for it twice. after is time.After in
// production and a clock the test drives in tests.
func Interruptible(sigs <-chan os.Signal, after func(time.Duration) <-chan time.Time, final *FinalOutput, errOut io.Writer, run func(context.Context) int) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx) }()
	select {
	case code := <-done:
		return code
	case <-sigs:
		cancel()
	}
	select {
	case code := <-done:
		return code
	case <-sigs:
	case <-after(InterruptGrace):
		finished := make(chan struct{})
		go func() { final.Stop(); close(finished) }()
		select {
		case code := <-done:
			return code
		case <-sigs:
		case <-finished:
		}
	}
	fmt.Fprintln(errOut, "causalctl: interrupted")
	return ExitInterrupted
}
