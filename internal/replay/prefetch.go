package replay

import (
	"context"
	"io"
	"sync"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// Prefetcher reads a Source on its own goroutine, a batch of items ahead of
// its consumer, so that parsing a capture and running the gate use two
// cores. Items are copied out of the source's buffers into batches that are
// recycled, so a steady stream allocates nothing. A capture.Reader of a
// regular file (under WithContext or not) is read in parts on every core
// instead (capture.ParallelReader), as parsing costs more than the gate.
type Prefetcher struct {
	par  *capture.ParallelReader
	src  engine.Source // par, under the source's context
	full chan *batch
	free chan *batch
	stop chan struct{}
	done sync.WaitGroup

	cur  *batch
	next int
	err  error
}

type batch struct {
	capture.Batch
	err error // after the items: the source's error, io.EOF at the end
}

// prefetchBatch is the number of items handed over at once: large enough
// to make the hand-over cheap, small enough to stay in cache.
const prefetchBatch = 256

// Prefetch starts reading src ahead. The consumer must call Close when done
// with it, whether or not it read to the end.
func Prefetch(src engine.Source) *Prefetcher {
	if par, ctx := parallel(src); par != nil {
		p := &Prefetcher{par: par, src: par}
		if ctx != nil {
			p.src = engine.WithContext(ctx, par)
		}
		return p
	}
	p := &Prefetcher{
		full: make(chan *batch, 2),
		free: make(chan *batch, 3),
		stop: make(chan struct{}),
	}
	for range 3 {
		p.free <- &batch{Batch: capture.Batch{Items: make([]record.Item, 0, prefetchBatch)}}
	}
	p.done.Add(1)
	go p.run(src)
	return p
}

// parallel returns a ParallelReader of src when src is a capture.Reader
// that can have one, with the context src reads under (nil for none).
func parallel(src engine.Source) (*capture.ParallelReader, context.Context) {
	src, ctx := engine.Underlying(src)
	if r, ok := src.(*capture.Reader); ok {
		if par := r.Parallel(); par != nil {
			return par, ctx
		}
	}
	return nil, nil
}

func (p *Prefetcher) run(src engine.Source) {
	defer p.done.Done()
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.Reset()
		b.err = nil
		for len(b.Items) < prefetchBatch {
			it, err := src.Next()
			if err != nil {
				b.err = err
				break
			}
			b.Add(it)
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

// Next returns the next item. It stays valid until the next call.
func (p *Prefetcher) Next() (*record.Item, error) {
	if p.par != nil {
		return p.src.Next()
	}
	for {
		if p.cur != nil && p.next < len(p.cur.Items) {
			p.next++
			return &p.cur.Items[p.next-1], nil
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
	if p.par != nil {
		p.par.Close()
		return
	}
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
