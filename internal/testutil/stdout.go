package testutil

import (
	"bytes"
	"os"
	"sync"
)

// ProcessStdout is stdout as a process sees it until it exits: each Write
// goes out in 4 KiB chunks, OnChunk runs once, after the first chunk, with
// the rest still to come, and writes after Exited is closed are lost, as
// they are when the process ends. Tests of interrupted output use it to
// stop a command in the middle of a write.
type ProcessStdout struct {
	Exited  chan struct{}
	OnChunk func()

	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
}

// NewProcessStdout returns a ProcessStdout whose OnChunk does nothing.
func NewProcessStdout() *ProcessStdout {
	return &ProcessStdout{Exited: make(chan struct{}), OnChunk: func() {}}
}

func (o *ProcessStdout) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 4096 {
		select {
		case <-o.Exited:
			return i, os.ErrClosed
		default:
		}
		o.mu.Lock()
		o.buf.Write(p[i:min(i+4096, len(p))])
		o.mu.Unlock()
		o.once.Do(o.OnChunk)
	}
	return len(p), nil
}

// Written returns a copy of what was written so far.
func (o *ProcessStdout) Written() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}
