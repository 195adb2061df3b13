package input

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/record"
)

// TestCaptureChangedBetweenReadings: replay -f reads a capture twice (its
// channels, then its records). A file changed in between — grown, or
// rewritten to the same size and time with a line fewer — fails the second
// reading with ErrChanged naming the file (and, caught while reading, the
// line), instead of replaying another input than the first reading
// described. An unchanged file reads alike twice.
func TestCaptureChangedBetweenReadings(t *testing.T) {
	orig, err := os.ReadFile("../../testdata/captures/basic.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(orig), "\n"), "\n")
	last := lines[len(lines)-1]
	for _, c := range []struct {
		name   string
		change func(path string) // between the readings; nil: none
		line   bool              // the error names a line
	}{
		{"unchanged", nil, false},
		{"appended", func(p string) { appendTo(t, p, last) }, false},
		{"same size and time, a line blanked", func(p string) {
			fi, _ := os.Stat(p)
			blank := strings.Join(lines[:len(lines)-1], "") + strings.Repeat(" ", len(last)) + "\n"
			if err := os.WriteFile(p, []byte(blank), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.ndjson")
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			ios, _, _, _ := iostreams.Test()
			seen := 0
			_ = seen
			src, err := Open(context.Background(), Env{IO: ios, Now: time.Now}, &Spec{Input: path}, Read{Observe: func(it *record.Item) error {
				// The first reading's last line: change the file now.
				if seen++; it.Line == int64(len(lines)) && c.change != nil {
					c.change(path)
				}
				return nil
			}})
			if err == nil {
				defer src.Close()
				err = drain(src)
			}
			switch {
			case c.change == nil && err != nil:
				t.Fatalf("an unchanged capture: %v", err)
			case c.change != nil && !errors.Is(err, ErrChanged):
				t.Fatalf("changed between readings: %v, want ErrChanged", err)
			case c.change != nil && !strings.Contains(err.Error(), "c.ndjson"):
				t.Errorf("the error does not name the file: %v", err)
			}
			var ie *engine.InputError
			if c.line && (!errors.As(err, &ie) || ie.Line <= 0) {
				t.Errorf("the error names no line: %v", err)
			}
		})
	}
}

func appendTo(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func drain(src engine.Source) error {
	for {
		if _, err := src.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
