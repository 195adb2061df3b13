package replay

import (
	"io"
	"sync"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
)

// Prefetcher reads a Source on its own goroutine, a batch of items ahead of
// its consumer, so that parsing a capture and running the gate use two
// cores. Items are copied out of the source's buffers into batches that are
// recycled, so a steady stream allocates nothing.
type Prefetcher struct {
	full chan *batch
	free chan *batch
	stop chan struct{}
	done sync.WaitGroup

	cur  *batch
	next int
	err  error
}

type batch struct {
	items   []capture.Item
	headers []clock.Header
	arena   []byte
	err     error // after the items: the source's error, io.EOF at the end
}

// prefetchBatch is the number of items handed over at once: large enough
// to make the hand-over cheap, small enough to stay in cache.
const prefetchBatch = 256

// Prefetch starts reading src ahead. The consumer must call Close when done
// with it, whether or not it read to the end.
func Prefetch(src Source) *Prefetcher {
	p := &Prefetcher{
		full: make(chan *batch, 2),
		free: make(chan *batch, 3),
		stop: make(chan struct{}),
	}
	for range 3 {
		p.free <- &batch{items: make([]capture.Item, 0, prefetchBatch)}
	}
	p.done.Add(1)
	go p.run(src)
	return p
}

func (p *Prefetcher) run(src Source) {
	defer p.done.Done()
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.items, b.headers, b.arena, b.err = b.items[:0], b.headers[:0], b.arena[:0], nil
		for len(b.items) < prefetchBatch {
			it, err := src.Next()
			if err != nil {
				b.err = err
				break
			}
			b.add(it)
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// add copies it into the batch. Header lists and byte slices point into the
// batch's own storage, fixed up as they grow.
func (b *batch) add(it *capture.Item) {
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
	b.items = append(b.items, c)
}

// keep copies v into the arena, keeping nil (null) distinct from empty.
// When the arena must grow, earlier slices keep pointing into the old
// array, which stays valid: nothing is written there again.
func (b *batch) keep(v []byte) []byte {
	switch {
	case v == nil:
		return nil
	case len(v) == 0:
		return emptyValue // not nil: an empty header value is not a null one
	}
	if cap(b.arena)-len(b.arena) < len(v) {
		b.arena = make([]byte, 0, max(2*cap(b.arena), len(v), 4096))
	}
	start := len(b.arena)
	b.arena = append(b.arena, v...)
	return b.arena[start:len(b.arena):len(b.arena)]
}

var emptyValue = []byte{}

// Next returns the next item. It stays valid until the next call.
func (p *Prefetcher) Next() (*capture.Item, error) {
	for {
		if p.cur != nil && p.next < len(p.cur.items) {
			p.next++
			return &p.cur.items[p.next-1], nil
		}
		if p.err != nil {
			return nil, p.err
		}
		if p.cur != nil {
			if p.cur.err != nil {
				p.err = p.cur.err
				continue
			}
			p.free <- p.cur
			p.cur = nil
		}
		p.cur, p.next = <-p.full, 0
	}
}

// Close stops the reading goroutine and waits for it to end.
func (p *Prefetcher) Close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.done.Wait()
	p.cur = nil
	if p.err == nil {
		p.err = io.ErrClosedPipe
	}
}
