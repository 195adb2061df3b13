package demo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/record"
)

// Follow is the watched node's read of the demo's broker: it connects,
// learns the topics' names (the client's Names then resolve every channel)
// and follows the demo's topics from Starts — the log ends, or where an
// earlier run's node stopped. opts are passed on to kafka's Follow. The
// caller closes the client, which ends the follower.
func (d *Demo) Follow(ctx context.Context, opts ...kafka.ReadOption) (*kafka.Client, *kafka.Follower, error) {
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{d.Addr()}, DialTimeout: 5 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the embedded broker: %w", err)
	}
	if _, err := cl.Topics(ctx); err != nil {
		cl.Close()
		return nil, nil, err
	}
	sels := make([]kafka.TopicSel, len(Topics))
	for i, t := range Topics {
		sels[i] = kafka.TopicSel{Topic: t.Name, Partition: kafka.AllPartitions}
	}
	end := kafka.Bound{Kind: kafka.BoundLogEnd}
	opts = append([]kafka.ReadOption{kafka.WithStarts(d.Starts())}, opts...)
	fol, err := cl.Follow(ctx, sels, kafka.OffsetSpec{Start: end, End: end}, opts...)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, fol, nil
}

// Feed is the watched node's view of the broker: the items of a live
// Source over the demo's topics (a kafka.Follower), each channel delayed by
// the node's lag on its topic, as a consumer that is behind on one input
// sees it. Under FaultSlow the payments channels also stall: from the
// moment the fault is injected, nothing of them is passed on for the
// stall time, then everything that waited comes at once. Each channel
// keeps its order. A Feed is itself a live.Source.
type Feed struct {
	src      live.Source
	lag      map[clock.TopicID]time.Duration
	stall    clock.TopicID // zero: no stall
	stallFor time.Duration
	faulted  <-chan struct{}

	in      chan arrival
	flushed chan struct{}
	once    sync.Once
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	// Owned by the goroutine calling Next.
	queues     map[clock.Channel][]pending
	order      []clock.Channel // channels in order of first arrival
	stallUntil time.Time
	srcErr     error
}

type arrival struct {
	it  *record.Item
	at  time.Time
	err error
}

type pending struct {
	it  *record.Item
	due time.Time
}

// Watch returns the watched node's feed over src, reading it from now on
// in a goroutine of its own until Close. The lags are Config.Lags; the
// stall, under FaultSlow, Config.Stall.
func (d *Demo) Watch(src live.Source) *Feed { return d.watch(src, d.Faulted()) }

// watch is Watch with the fault signalled on faulted.
func (d *Demo) watch(src live.Source, faulted <-chan struct{}) *Feed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &Feed{
		src:     src,
		lag:     map[clock.TopicID]time.Duration{},
		in:      make(chan arrival, 4096),
		flushed: make(chan struct{}),
		cancel:  cancel,
		queues:  map[clock.Channel][]pending{},
	}
	for topic, lag := range d.cfg.Lags {
		if id, ok := d.ids[topic]; ok {
			f.lag[id] = lag
		}
	}
	if d.cfg.Fault == FaultSlow {
		f.stall, f.stallFor, f.faulted = d.ids[TopicPayments], d.cfg.Stall, faulted
	}
	f.wg.Go(func() { f.read(ctx) })
	return f
}

func (f *Feed) read(ctx context.Context) {
	for {
		it, err := f.src.Next(ctx)
		a := arrival{it: it, at: time.Now(), err: err}
		if err != nil && ctx.Err() != nil {
			return
		}
		select {
		case f.in <- a:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// Flush ends the lags and the stall: from now on every item is passed on
// as soon as it is read, so the node catches up with the log.
func (f *Feed) Flush() { f.once.Do(func() { close(f.flushed) }) }

// Close stops reading the source and waits for the reading goroutine.
func (f *Feed) Close() {
	f.cancel()
	f.wg.Wait()
}

// LogEnds returns the source's log ends.
func (f *Feed) LogEnds() map[clock.Channel]int64 { return f.src.LogEnds() }

// HighWatermarks returns the source's high watermarks, when it knows them
// (a kafka.Follower does); nil otherwise.
func (f *Feed) HighWatermarks() map[clock.Channel]int64 {
	if hs, ok := f.src.(interface {
		HighWatermarks() map[clock.Channel]int64
	}); ok {
		return hs.HighWatermarks()
	}
	return nil
}

// Next returns the next item that is due, waiting for it; the source's
// error once everything read before it was passed on.
func (f *Feed) Next(ctx context.Context) (*record.Item, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := time.Now()
		flushing := false
		select {
		case <-f.flushed:
			flushing = true
		default:
		}
		var best clock.Channel
		var bestDue time.Time
		found := false
		for _, ch := range f.order {
			q := f.queues[ch]
			if len(q) == 0 {
				continue
			}
			due := q[0].due
			switch {
			case flushing:
				due = time.Time{}
			case ch.Topic == f.stall && now.Before(f.stallUntil):
				due = f.stallUntil
			}
			if !found || due.Before(bestDue) {
				best, bestDue, found = ch, due, true
			}
		}
		if found && !bestDue.After(now) {
			q := f.queues[best]
			it := q[0].it
			q[0] = pending{}
			f.queues[best] = q[1:]
			return it, nil
		}
		if !found && f.srcErr != nil {
			return nil, f.srcErr
		}
		var wake <-chan time.Time
		if found {
			if timer == nil {
				timer = time.NewTimer(bestDue.Sub(now))
			} else {
				timer.Reset(bestDue.Sub(now)) // no stale tick since Go 1.23
			}
			wake = timer.C
		}
		in := f.in
		if f.srcErr != nil {
			in = nil
		}
		flush := f.flushed
		if flushing {
			flush = nil
		}
		select {
		case a := <-in:
			if a.err != nil {
				f.srcErr = a.err
				continue
			}
			f.add(a)
		case <-wake:
		case <-f.faulted:
			f.stallUntil = time.Now().Add(f.stallFor)
			f.faulted = nil
		case <-flush:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (f *Feed) add(a arrival) {
	ch := clock.Channel{Topic: a.it.TopicID, Partition: a.it.Partition}
	q, seen := f.queues[ch]
	if !seen {
		f.order = append(f.order, ch)
	}
	due := a.at.Add(f.lag[ch.Topic])
	if n := len(q); n > 0 && due.Before(q[n-1].due) {
		due = q[n-1].due // keep the channel's order
	}
	f.queues[ch] = append(q, pending{it: a.it, due: due})
}
