package capture

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/causalctl/causalctl/internal/clock"
)

// A capture file that can be read at any offset (a regular file) is read
// by a ParallelReader in parts of partSize bytes, each by one of several
// workers with a Reader of its own, and handed to its consumer in file
// order. A part holds the lines that start in its bytes: its worker skips
// the end of the line before, and reads its last line past its end. Line
// numbers are counted from each part's start and made the file's as the
// consumer takes the part, once every part before it is counted.
const partSize = 1 << 20

// mergeFault breaks the merge of parts on purpose, for the test that must
// catch a broken merge.
type mergeFault uint8

const (
	mergeRight    mergeFault = iota
	mergeSwapped             // hand parts 2k and 2k+1 over swapped
	mergeNoRebase            // leave line numbers counted from each part's start
)

// Batch is a list of items copied out of a Reader's buffers into storage of
// its own, so that it stays valid after the Reader moves on. Reset empties
// it for reuse, keeping its storage: a recycled Batch allocates nothing once
// it has grown to its items.
type Batch struct {
	Items   []Item
	headers []clock.Header
	arena   []byte
}

// Reset empties b.
func (b *Batch) Reset() {
	b.Items, b.headers, b.arena = b.Items[:0], b.headers[:0], b.arena[:0]
}

// Add copies it into b. Header lists and byte slices point into b's own
// storage.
func (b *Batch) Add(it *Item) {
	c := *it
	c.Headers = nil
	c.Key = b.keep(it.Key)
	c.Value = b.keep(it.Value)
	if len(it.Headers) > 0 {
		start := len(b.headers)
		for _, h := range it.Headers {
			b.headers = append(b.headers, clock.Header{Key: h.Key, Value: b.keep(h.Value)})
		}
		c.Headers = b.headers[start:len(b.headers):len(b.headers)]
	}
	b.Items = append(b.Items, c)
}

// keep copies v into the arena, keeping nil (null) distinct from empty.
// When the arena must grow, earlier slices keep pointing into the old
// array, which stays valid: nothing is written there again.
func (b *Batch) keep(v []byte) []byte {
	switch {
	case v == nil:
		return nil
	case len(v) == 0:
		return emptyBytes // not nil: an empty value is not a null one
	}
	if cap(b.arena)-len(b.arena) < len(v) {
		b.arena = make([]byte, 0, max(2*cap(b.arena), len(v), 4096))
	}
	start := len(b.arena)
	b.arena = append(b.arena, v...)
	return b.arena[start:len(b.arena):len(b.arena)]
}

// ParallelReader reads the items of a capture file, in file order and with
// the file's line numbers, on several goroutines: what Reader.Next returns,
// item for item and error for error, at a multiple of its speed. Close it
// when done, whether or not it was read to the end.
type ParallelReader struct {
	f        io.ReaderAt
	size     int64
	cfg      readerConfig
	partSize int64
	fault    mergeFault
	jobs     chan *part
	stop     chan struct{}
	workers  sync.WaitGroup
	free     chan *Batch

	queue  []*part // parts handed to the workers, in file order
	issued int64   // the next part's start
	window int     // parts in flight

	// parent is the Reader Parallel was called on: it learns the stopped
	// line (Reader.Stopped), which a part's reader meets.
	parent  *Reader
	stopped *Stopped // the stopped line met, with its file line

	cur      *part
	next     int
	base     int64 // lines of the parts before cur
	consumed int
	err      error // sticky
}

// part is one part of the file and, once done is closed, what was read of
// it.
type part struct {
	start, end int64 // end < 0: to the end of the file
	done       chan struct{}
	b          *Batch
	lines      int64    // lines started in the part
	err        error    // io.EOF at the part's end, or the first error
	stopped    *Stopped // the stopped line that ended the part, if one did
	// afterStop is the part's line after its stopped line that the part's
	// reader refused (its message names the stopped line by the part's
	// numbering, so the merge words it again); 0 when none.
	afterStop int64
}

// Parallel returns a ParallelReader of the same lines with the same
// options, when r reads a regular file from its start and has read nothing
// yet; otherwise nil. Use either r or the ParallelReader, not both.
func (r *Reader) Parallel() *ParallelReader {
	f, ok := r.src.(*os.File)
	if !ok || r.line != 0 || r.br.Buffered() != 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return nil
	}
	p := newParallelReader(f, fi.Size(), r.cfg, runtime.GOMAXPROCS(0), partSize, mergeRight)
	p.parent = r
	return p
}

func newParallelReader(f io.ReaderAt, size int64, cfg readerConfig, workers, partSize int, fault mergeFault) *ParallelReader {
	workers = max(workers, 1)
	p := &ParallelReader{
		f: f, size: size, cfg: cfg, partSize: int64(partSize), fault: fault,
		window: 4 * workers,
		stop:   make(chan struct{}),
	}
	p.jobs = make(chan *part, p.window)
	p.free = make(chan *Batch, p.window+1)
	for range workers {
		p.workers.Add(1)
		go p.work()
	}
	for len(p.queue) < p.window && p.issue() {
	}
	return p
}

// issue hands the next part to the workers; false when the file has none
// left.
func (p *ParallelReader) issue() bool {
	if p.issued < 0 {
		return false
	}
	j := &part{start: p.issued, end: p.issued + p.partSize, done: make(chan struct{})}
	if j.end >= p.size {
		j.end = -1 // the last part reads to the end, wherever it now is
	}
	p.issued = j.end
	p.queue = append(p.queue, j)
	p.jobs <- j // never blocks: at most window parts are queued
	return true
}

func (p *ParallelReader) work() {
	defer p.workers.Done()
	var r *Reader
	for j := range p.jobs {
		select {
		case <-p.stop:
			close(j.done)
			continue
		default:
		}
		var b *Batch
		select {
		case b = <-p.free:
			b.Reset()
		default:
			b = &Batch{}
		}
		j.b = b
		r = p.readPart(r, j)
		close(j.done)
	}
}

// readPart reads the lines starting in j into j.b, with r (reused when not
// nil).
func (p *ParallelReader) readPart(r *Reader, j *part) *Reader {
	from := max(j.start-1, 0) // the byte before the part says whether a line starts at its start
	src := io.NewSectionReader(p.f, from, math.MaxInt64-from)
	if r == nil {
		r = NewReader(src)
		r.maxLine, r.skip, r.cfg = p.cfg.maxLine, p.cfg.skip, p.cfg
	} else {
		r.br.Reset(src)
		r.line, r.err, r.pos = 0, nil, 0
		r.stopped, r.pending = nil, nil
	}
	r.src, r.bom, r.limit = src, j.start == 0, 0
	if j.end >= 0 {
		r.limit = j.end - from
	}
	if j.start > 0 {
		// Skip to the first line that starts in the part: the end of the
		// line before is the part before's.
		for {
			chunk, err := r.br.ReadSlice('\n')
			r.pos += int64(len(chunk))
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				j.lines, j.err = 1, &LineError{Line: 1, Err: err}
				return r
			}
			break
		}
	}
	for {
		it, err := r.Next()
		if err != nil {
			j.err = err
			break
		}
		j.b.Add(it)
	}
	j.lines = r.line
	if r.stopped != nil {
		st := *r.stopped
		j.stopped = &st
		if le, ok := j.err.(*LineError); ok {
			j.afterStop = le.Line // after the stopped line, the only error a reader gives
		}
	}
	return r
}

// Next returns the next item of the file, or io.EOF after the last; any
// other error is a *LineError naming the line, as Reader.Next's. The item
// stays valid until the next call.
func (p *ParallelReader) Next() (*Item, error) {
	for {
		if p.err != nil {
			return nil, p.err
		}
		if p.cur != nil && p.stopped != nil && (len(p.cur.b.Items) > 0 || p.cur.err != io.EOF) {
			// A line after the stopped line, in a later part: the serial
			// reader refuses it, at the first such line.
			line := p.base + 1
			if len(p.cur.b.Items) > 0 {
				line = p.cur.b.Items[0].Line + p.base
			} else if le, ok := p.cur.err.(*LineError); ok {
				line = le.Line + p.base
			}
			p.err = &LineError{Line: line, Err: fieldError(fmt.Sprintf("a line after the stopped line (line %d), which ends the capture", p.stopped.Line))}
			continue
		}
		if p.cur != nil && p.next < len(p.cur.b.Items) {
			it := &p.cur.b.Items[p.next]
			p.next++
			it.Line += p.base
			return it, nil
		}
		if p.cur != nil {
			j := p.cur
			p.cur = nil
			if j.stopped != nil && p.stopped == nil {
				st := *j.stopped
				st.Line += p.base
				p.stopped = &st
				if p.parent != nil {
					p.parent.stopped = &st
				}
			}
			if j.afterStop > 0 {
				p.err = &LineError{Line: j.afterStop + p.base, Err: fieldError(fmt.Sprintf("a line after the stopped line (line %d), which ends the capture", j.stopped.Line+p.base))}
				continue
			}
			if j.err != io.EOF {
				if le, ok := j.err.(*LineError); ok {
					p.err = &LineError{Line: le.Line + p.base, Err: le.Err}
				} else {
					p.err = j.err
				}
				continue
			}
			if j.end < 0 {
				p.err = io.EOF
				continue
			}
			if p.fault != mergeNoRebase {
				p.base += j.lines
			}
			select {
			case p.free <- j.b:
			default:
			}
			p.issue()
		}
		if len(p.queue) == 0 {
			p.err = io.EOF
			continue
		}
		if p.fault == mergeSwapped && len(p.queue) > 1 && p.consumed%2 == 0 {
			p.queue[0], p.queue[1] = p.queue[1], p.queue[0]
		}
		p.consumed++
		p.cur, p.next = p.queue[0], 0
		p.queue = p.queue[1:]
		<-p.cur.done
	}
}

// Stopped returns the file's stopped line once Next has reached it, as
// Reader.Stopped does; nil before, or when the file has none.
func (p *ParallelReader) Stopped() *Stopped { return p.stopped }

// Close stops the workers and waits for them to end.
func (p *ParallelReader) Close() error {
	select {
	case <-p.stop:
		return nil
	default:
	}
	close(p.stop)
	close(p.jobs)
	p.workers.Wait()
	p.cur, p.queue = nil, nil
	if p.err == nil {
		p.err = io.ErrClosedPipe
	}
	return nil
}
