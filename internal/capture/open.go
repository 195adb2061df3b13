package capture

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// OpenPath opens the capture file at path for reading. Opening honours
// ctx: open(2) of a FIFO waits for a writer, and a cancelled ctx ends that
// wait (ctx's error is returned). Rereadable reports whether the file can
// be read again from its start by opening it again: a regular file can; a
// FIFO, a pipe (/dev/stdin, process substitution's /dev/fd/N), a socket or
// a device yields its bytes once, and must be read once — spooled by the
// caller when it needs a second reading.
func OpenPath(ctx context.Context, path string) (f *os.File, rereadable bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false, fmt.Errorf("capture: %w", err)
	}
	if fi.IsDir() {
		return nil, false, fmt.Errorf("capture %s: is a directory", path)
	}
	if fi.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, false, fmt.Errorf("capture: %w", err)
		}
		return f, true, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, false, fmt.Errorf("capture: %w", o.err)
		}
		return o.f, false, nil
	case <-ctx.Done():
	}
	if fi.Mode()&os.ModeNamedPipe != 0 {
		// Be the writer the open waits for, so that it returns and its
		// goroutine ends; the file is closed unread.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	go func() {
		if o := <-done; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, false, ctx.Err()
}
