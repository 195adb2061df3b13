package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/testutil"
)

// bigDocument is a -o json document of a few hundred kilobytes.
func bigDocument(t *testing.T) []byte {
	type finding struct {
		Kind    string `json:"kind"`
		Channel string `json:"channel"`
		Offset  int    `json:"offset"`
	}
	var doc struct {
		Findings []finding `json:"findings"`
	}
	for i := range 10000 {
		doc.Findings = append(doc.Findings, finding{"hole", "orders/1", i})
	}
	b, err := render.JSONLine(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// interruptRun is one run of Interruptible whose grace timer the test
// fires.
type interruptRun struct {
	sigs  chan os.Signal
	grace chan time.Time
	final *FinalOutput
	out   *testutil.ProcessStdout
	err   bytes.Buffer
}

// interruptAtFirstChunk makes the first chunk written to stdout bring
// Ctrl-C and the end of the grace; the rest goes out only once the exit is
// decided: either the process exits now, cutting what is being written, or
// it waits for it.
func (r *interruptRun) interruptAtFirstChunk() {
	r.out.OnChunk = func() {
		r.sigs <- syscall.SIGINT
		r.grace <- time.Time{}
		select {
		case <-r.final.stopStarted():
		case <-r.out.Exited:
		}
	}
}

func newInterruptRun() *interruptRun {
	return &interruptRun{
		sigs:  make(chan os.Signal, 2),
		grace: make(chan time.Time, 1),
		final: &FinalOutput{},
		out:   testutil.NewProcessStdout(),
	}
}

// run runs command under Interruptible and returns its exit code; the
// process's stdout is closed when it returns.
func (r *interruptRun) run(t *testing.T, command func(context.Context) int) int {
	t.Helper()
	after := func(d time.Duration) <-chan time.Time {
		if d != InterruptGrace {
			t.Errorf("grace %v, want %v", d, InterruptGrace)
		}
		return r.grace
	}
	code := Interruptible(r.sigs, after, r.final, &r.err, command)
	close(r.out.Exited)
	return code
}

// TestInterruptDuringFinalDocumentFinishesIt: Ctrl-C arrives, and the grace
// runs out, while a large JSON document is being written through a slow
// stdout; the exit waits for the document, which parses whole.
func TestInterruptDuringFinalDocumentFinishesIt(t *testing.T) {
	r := newInterruptRun()
	doc := bigDocument(t)
	r.interruptAtFirstChunk()
	stuck := make(chan struct{}) // the command never returns by itself
	defer close(stuck)
	wrote := make(chan error, 1)
	code := r.run(t, func(ctx context.Context) int {
		wrote <- r.final.Write(r.out, doc)
		<-stuck
		return ExitOK
	})
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if err := <-wrote; err != nil {
		t.Errorf("writing the document: %v", err)
	}
	got := r.out.Written()
	if !json.Valid(got) || !bytes.Equal(got, doc) {
		t.Errorf("stdout holds %d of the document's %d bytes (valid JSON: %v)", len(got), len(doc), json.Valid(got))
	}
	if !strings.Contains(r.err.String(), "causalctl: interrupted") {
		t.Errorf("stderr %q does not say it was interrupted", r.err.String())
	}
}

// TestInterruptBeforeFinalDocumentWritesNothing: the grace runs out before
// the command began its document: exit 130 with the account on stderr, and
// the document, when the command gets to it, is not written at all.
func TestInterruptBeforeFinalDocumentWritesNothing(t *testing.T) {
	r := newInterruptRun()
	doc := bigDocument(t)
	proceed, wrote := make(chan struct{}), make(chan error, 1)
	r.sigs <- syscall.SIGTERM
	r.grace <- time.Time{}
	code := r.run(t, func(ctx context.Context) int {
		<-ctx.Done()
		<-proceed
		wrote <- r.final.Write(r.out, doc)
		return ExitInterrupted
	})
	if code != ExitInterrupted || !strings.Contains(r.err.String(), "causalctl: interrupted") {
		t.Errorf("exit %d, stderr %q; want %d and the interruption", code, r.err.String(), ExitInterrupted)
	}
	close(proceed)
	if err := <-wrote; err == nil {
		t.Error("a document begun after the exit was decided was written")
	}
	if got := r.out.Written(); len(got) != 0 {
		t.Errorf("stdout holds %d bytes, want none", len(got))
	}
}

// TestSecondInterruptCutsFinalDocument: a second Ctrl-C exits at once,
// even in the middle of the document: the user asked twice.
func TestSecondInterruptCutsFinalDocument(t *testing.T) {
	r := newInterruptRun()
	doc := bigDocument(t)
	r.out.OnChunk = func() {
		r.sigs <- syscall.SIGINT
		r.sigs <- syscall.SIGINT
		<-r.out.Exited
	}
	written := make(chan struct{})
	code := r.run(t, func(ctx context.Context) int {
		defer close(written)
		r.final.Write(r.out, doc)
		return ExitOK
	})
	<-written
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if got := r.out.Written(); len(got) >= len(doc) {
		t.Errorf("stdout holds the whole document (%d bytes): the second Ctrl-C waited for it", len(got))
	}
}

// TestFinishedCommandKeepsItsExitCode: a command that returns within the
// grace exits with its own code, and one that is never interrupted too.
func TestFinishedCommandKeepsItsExitCode(t *testing.T) {
	r := newInterruptRun()
	if code := r.run(t, func(context.Context) int { return ExitFound }); code != ExitFound {
		t.Errorf("exit %d, want %d", code, ExitFound)
	}
	r = newInterruptRun()
	r.sigs <- syscall.SIGINT
	code := r.run(t, func(ctx context.Context) int {
		<-ctx.Done()
		return ExitHeld
	})
	if code != ExitHeld || r.err.Len() != 0 {
		t.Errorf("exit %d, stderr %q; want %d and the command's own account", code, r.err.String(), ExitHeld)
	}
}
