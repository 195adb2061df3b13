package cmdutil

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// eventLine is the n-th line of an ndjson stream; lengths vary, so no
// buffer boundary falls on a line's end by design.
func eventLine(n int) string {
	return fmt.Sprintf(`{"type":"deliver","seq":%d,"channel":"orders/%d","offset":%d}`+"\n", n, n%7, n*13)
}

// TestInterruptDuringStreamEndsOnALine: Ctrl-C arrives, and the grace runs
// out, while a stream of ndjson lines is being written through a slow
// stdout; what the process wrote before it exited ends with a newline and
// every line of it parses.
func TestInterruptDuringStreamEndsOnALine(t *testing.T) {
	r := newInterruptRun()
	r.interruptAtFirstChunk()
	stuck := make(chan struct{}) // the command never returns by itself
	defer close(stuck)
	stopped := make(chan error, 1)
	code := r.run(t, func(ctx context.Context) int {
		lw := NewLineWriter(r.out, r.final)
		var err error
		for n := 0; err == nil && n < 1_000_000; n++ {
			// A byte at a time, as a writer buffering in front of it
			// (capture's) may hand it a line: its buffer fills mid-line.
			line := eventLine(n)
			for i := 0; err == nil && i < len(line); i++ {
				_, err = lw.Write([]byte{line[i]})
			}
		}
		stopped <- err
		<-stuck
		return ExitOK
	})
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if err := <-stopped; err == nil {
		t.Error("the stream went on being written after the process exited")
	}
	got := r.out.Written()
	if len(got) == 0 || got[len(got)-1] != '\n' {
		t.Fatalf("stdout (%d bytes) does not end with a newline: …%q", len(got), got[max(0, len(got)-40):])
	}
	lines := bytes.Split(got[:len(got)-1], []byte("\n"))
	for i, line := range lines {
		if !json.Valid(line) {
			t.Fatalf("line %d does not parse: %q", i+1, line)
		}
		if want := eventLine(i); string(line)+"\n" != want {
			t.Fatalf("line %d is %q, want %q", i+1, line, want)
		}
	}
}

// countingWriter counts the writes it is given.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestLineWriterBatchesWholeLines: many lines go out in a few writes, each
// of whole lines; an unfinished line waits for its newline or Finish.
func TestLineWriterBatchesWholeLines(t *testing.T) {
	var out countingWriter
	lw := NewLineWriter(&out, &FinalOutput{})
	var want bytes.Buffer
	const lines = 20000
	for n := range lines {
		want.WriteString(eventLine(n))
		if _, err := lw.WriteString(eventLine(n)); err != nil {
			t.Fatal(err)
		}
		if b := out.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("after line %d, stdout ends mid-line", n+1)
		}
	}
	if max := want.Len()/lineBufferSize + 1; out.writes > max {
		t.Errorf("%d lines took %d writes, want at most %d", lines, out.writes, max)
	}
	lw.Write([]byte(`{"type":"summary"`))
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out.Bytes(), []byte("summary")) {
		t.Error("Flush wrote a line without its newline")
	}
	err := lw.Finish(func() error {
		_, err := lw.WriteString(`,"held":0}` + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want.WriteString(`{"type":"summary","held":0}` + "\n")
	if out.String() != want.String() {
		t.Errorf("stdout holds %d bytes, want the %d written", out.Len(), want.Len())
	}
}

// TestLineWriterAfterStopWritesNothing: once the process is exiting, the
// next batch is refused whole and the stream reports it.
func TestLineWriterAfterStopWritesNothing(t *testing.T) {
	var out bytes.Buffer
	final := &FinalOutput{}
	lw := NewLineWriter(&out, final)
	lw.WriteString(eventLine(0))
	final.Stop()
	if err := lw.Flush(); err == nil {
		t.Error("Flush after Stop succeeded")
	}
	if err := lw.Finish(nil); err == nil {
		t.Error("Finish after Stop succeeded")
	}
	if out.Len() != 0 {
		t.Errorf("stdout holds %q after Stop", out.String())
	}
}

// BenchmarkLineWriter writes ndjson events through a LineWriter under a
// FinalOutput, and through a bufio.Writer for comparison.
func BenchmarkLineWriter(b *testing.B) {
	line := eventLine(123456)
	b.Run("line-writer", func(b *testing.B) {
		lw := NewLineWriter(io.Discard, &FinalOutput{})
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			lw.WriteString(line)
		}
	})
	b.Run("bufio", func(b *testing.B) {
		bw := bufio.NewWriterSize(io.Discard, lineBufferSize)
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			bw.WriteString(line)
		}
	})
}
