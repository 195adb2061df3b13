package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
)

// Defaults of the range options.
const (
	DefaultRetryFor            = 30 * time.Second
	DefaultFetchPartitionBytes = 1 << 20
	defaultFetchMaxBytes       = 16 << 20
	minBackoff                 = 100 * time.Millisecond
	maxBackoff                 = 2 * time.Second
)

// RangeOption configures OpenRange.
type RangeOption interface{ apply(*rangeConfig) }

type rangeOpt struct{ fn func(*rangeConfig) }

func (o rangeOpt) apply(c *rangeConfig) { o.fn(c) }

type rangeConfig struct {
	starts    map[clock.Channel]int64
	retryFor  time.Duration
	partBytes int32
	maxWait   time.Duration // how long a fetch may wait for data (see follow.go)
}

// WithStarts sets explicit start positions for some channels (from
// --start or from GroupOffsets), overriding the spec's start for them.
// Channels of the range that are not in starts use the spec's start; entries
// for channels outside the range are ignored. Each start is clamped to the
// channel's log start and current end like any other.
func WithStarts(starts map[clock.Channel]int64) RangeOption {
	return rangeOpt{func(c *rangeConfig) { c.starts = maps.Clone(starts) }}
}

// RetryFor sets how long a channel may keep failing (broker gone, leader
// moving) before Next gives up with a *RangeError, overriding the default
// DefaultRetryFor. Any progress on the channel resets the clock.
func RetryFor(d time.Duration) RangeOption {
	return rangeOpt{func(c *rangeConfig) { c.retryFor = d }}
}

// FetchPartitionBytes sets how many bytes one fetch asks for per partition,
// overriding DefaultFetchPartitionBytes. A broker returns at least one whole
// record batch even when it is larger.
func FetchPartitionBytes(n int32) RangeOption {
	return rangeOpt{func(c *rangeConfig) { c.partBytes = n }}
}

// RangeChannel describes one channel of a range and how far it was read.
type RangeChannel struct {
	Topic     string
	TopicID   clock.TopicID
	Partition int32
	// Start and End bound the range: offsets Start ≤ o < End.
	Start, End int64
	// The partition's offsets when the range was opened.
	LogStart, HighWatermark, LastStable int64
	// Position is the consumer's position: every offset below it was read.
	Position int64
	// LastOffset is the offset of the last record yielded, -1 for none.
	LastOffset int64
	// Records is the number of records yielded.
	Records int64
	// Done is true once the channel's final position item is queued.
	Done bool
}

// Channel returns the channel's identity.
func (rc RangeChannel) Channel() clock.Channel {
	return clock.Channel{Topic: rc.TopicID, Partition: rc.Partition}
}

// Range is a finite, read_committed read of some channels: see OpenRange.
// A Range is read by one goroutine at a time.
type Range struct {
	c     *Client
	cfg   rangeConfig
	chans []*rchan

	queue    []*capture.Item
	err      error // latched: returned once the queue is drained
	needMeta bool

	follow *followState // set by Follow: the range never ends (follow.go)
}

// rchan is the state of one channel of a range.
type rchan struct {
	RangeChannel
	leader  int32
	emitted int64 // the position already told to the caller

	failingSince time.Time // zero while healthy
	failures     int
	retryAt      time.Time
	lastErr      error
}

func (ch *rchan) label() string { return fmt.Sprintf("%s/%d", ch.Topic, ch.Partition) }

func (ch *rchan) position(p int64) *capture.Item {
	return &capture.Item{Kind: capture.KindPosition, Topic: ch.Topic, TopicID: ch.TopicID, Partition: ch.Partition, Offset: p}
}

func (ch *rchan) fail(now time.Time, err error) {
	if ch.failingSince.IsZero() {
		ch.failingSince = now
	}
	ch.failures++
	ch.retryAt = now.Add(min(maxBackoff, minBackoff<<min(ch.failures-1, 8)))
	ch.lastErr = err
}

func (ch *rchan) ok() {
	ch.failingSince, ch.failures, ch.retryAt, ch.lastErr = time.Time{}, 0, time.Time{}, nil
}

// OpenRange resolves the selected channels and their range bounds once, now,
// and returns a Range to read them with Next.
//
// Every channel's end is at most its last stable offset at this moment (the
// range reads committed data only, so it ends below any open transaction),
// which makes every range finite: Next reaches io.EOF even when a channel
// ends in transaction markers, aborted records or an open transaction.
// Starts are clamped to [log start, end] and ends to [start, end].
//
// Unknown topics and partitions, topics the credentials may not describe,
// and topics whose UUID changed since an earlier lookup of this client are
// errors naming the topic.
func (c *Client) OpenRange(ctx context.Context, sels []TopicSel, spec OffsetSpec, opts ...RangeOption) (*Range, error) {
	return c.openRange(ctx, sels, spec, nil, opts)
}

// openRange is OpenRange, or with follow set the start of a Follower: its
// channels get no end.
func (c *Client) openRange(ctx context.Context, sels []TopicSel, spec OffsetSpec, follow *followState, opts []RangeOption) (*Range, error) {
	cfg := rangeConfig{retryFor: DefaultRetryFor, partBytes: DefaultFetchPartitionBytes, maxWait: defaultRangeWait}
	if follow != nil {
		cfg.maxWait = DefaultFollowWait
	}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.retryFor <= 0 || cfg.partBytes <= 0 || cfg.maxWait <= 0 {
		return nil, errors.New("range options: retry time, fetch size and wait must be positive")
	}
	if len(sels) == 0 {
		return nil, errors.New("no topic selected")
	}
	if err := checkSpec(spec); err != nil {
		return nil, err
	}

	var ask []string
	for _, s := range sels {
		if s.Topic == "" {
			ask = nil // a topic given by UUID: look at every topic
			break
		}
		ask = append(ask, s.Topic)
	}
	if ask != nil {
		ask = slices.Compact(slices.Sorted(slices.Values(ask)))
	}
	meta, err := c.metadata(ctx, ask, false)
	if err != nil {
		return nil, err
	}

	r := &Range{c: c, cfg: cfg, follow: follow}
	seen := make(map[chanKey]bool)
	for _, s := range sels {
		tm, err := findTopic(meta, s)
		if err != nil {
			return nil, err
		}
		parts := []int32{s.Partition}
		if s.Partition == AllPartitions {
			parts = tm.partitions()
		} else if _, ok := tm.leaders[s.Partition]; !ok {
			return nil, &UnknownPartitionError{Topic: tm.name, Partition: s.Partition, Partitions: len(tm.leaders)}
		}
		for _, p := range parts {
			k := chanKey{tm.name, p}
			if seen[k] {
				continue
			}
			seen[k] = true
			r.chans = append(r.chans, &rchan{
				RangeChannel: RangeChannel{Topic: tm.name, TopicID: tm.id, Partition: p, LastOffset: -1},
				leader:       tm.leaders[p],
			})
		}
	}

	keys := make([]chanKey, len(r.chans))
	for i, ch := range r.chans {
		keys[i] = chanKey{ch.Topic, ch.Partition}
	}
	offs, err := c.listOffsets(ctx, keys)
	if err != nil {
		return nil, err
	}
	atTime := func(b Bound) (map[chanKey]listed, error) {
		if b.Kind != BoundTime {
			return nil, nil
		}
		return c.listAt(ctx, keys, b.Time.UnixMilli(), 1)
	}
	startTimes, err := atTime(spec.Start)
	if err != nil {
		return nil, err
	}
	endTimes, err := atTime(spec.End)
	if err != nil {
		return nil, err
	}

	for _, ch := range r.chans {
		k := chanKey{ch.Topic, ch.Partition}
		o := offs[k]
		ch.LogStart, ch.HighWatermark, ch.LastStable = o.logStart, o.hwm, o.lso
		end := o.lso
		if end < 0 {
			end = o.hwm
		}
		s := resolveBound(spec.Start, o.logStart, end, startTimes[k])
		if st, ok := cfg.starts[ch.Channel()]; ok && !ch.TopicID.IsZero() {
			s = st
		}
		s = clamp(s, o.logStart, end)
		e := clamp(resolveBound(spec.End, o.logStart, end, endTimes[k]), s, end)
		if follow != nil {
			e = followEnd
			follow.setEnd(ch.Channel(), end)
		}
		ch.Start, ch.End, ch.Position, ch.emitted = s, e, s, s
		r.queue = append(r.queue, ch.position(s))
		if s == e {
			ch.Done = true // one position item is both start and end
		}
	}
	return r, nil
}

func checkSpec(spec OffsetSpec) error {
	switch spec.Start.Kind {
	case BoundLogStart, BoundLogEnd, BoundOffset, BoundAfterStart, BoundBeforeEnd, BoundTime:
	default:
		return errors.New("offsets: invalid start (use ParseOffsets)")
	}
	switch spec.End.Kind {
	case BoundLogEnd, BoundOffset, BoundTime:
	default:
		return errors.New("offsets: invalid end (use ParseOffsets)")
	}
	return nil
}

func findTopic(meta map[string]*topicMeta, s TopicSel) (*topicMeta, error) {
	if s.Topic != "" {
		if tm, ok := meta[s.Topic]; ok {
			return tm, nil
		}
		return nil, &UnknownTopicError{Topic: s.Topic}
	}
	for _, tm := range meta {
		if tm.id == s.ID {
			return tm, nil
		}
	}
	return nil, &UnknownTopicError{ID: s.ID}
}

// resolveBound turns a bound into an offset of a partition whose log runs
// from logStart to end (exclusive). at is the ListOffsets answer for a time
// bound: -1 means no record at or after the time, so the end.
func resolveBound(b Bound, logStart, end int64, at listed) int64 {
	switch b.Kind {
	case BoundLogStart:
		return logStart
	case BoundOffset:
		return b.N
	case BoundAfterStart:
		if b.N > end-logStart {
			return end
		}
		return logStart + b.N
	case BoundBeforeEnd:
		if b.N > end-logStart {
			return logStart
		}
		return end - b.N
	case BoundTime:
		if at.offset < 0 {
			return end
		}
		return at.offset
	}
	return end // BoundLogEnd
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// Channels returns every channel of the range, in selection order, with how
// far it has been read. Use it for progress reports and summaries.
func (r *Range) Channels() []RangeChannel {
	out := make([]RangeChannel, len(r.chans))
	for i, ch := range r.chans {
		out[i] = ch.RangeChannel
	}
	return out
}

// Next returns the next item of the range, or io.EOF after the last one.
//
// Per channel, in offset order, it yields: a KindPosition item at the range
// start; each committed record as a KindRecord item; before a record, a
// KindPosition item at the record's offset when the offsets just below it
// carried no record (transaction markers, aborted records, compacted
// offsets); and a final KindPosition item at the range end (a range with
// start = end has the single start item). Items of different channels
// interleave in fetch order.
//
// A broker that fails is retried, with a fresh look at the partition
// leaders, until a channel has made no progress for the RetryFor time; then
// the items read so far are returned and after them a *RangeError naming
// the channel and how far it got. Authorization failures, unknown topics and
// topic identity changes fail at once.
func (r *Range) Next(ctx context.Context) (*capture.Item, error) {
	for {
		if len(r.queue) > 0 {
			it := r.queue[0]
			r.queue[0] = nil
			r.queue = r.queue[1:]
			return it, nil
		}
		if r.err != nil {
			return nil, r.err
		}
		if !slices.ContainsFunc(r.chans, func(ch *rchan) bool { return !ch.Done }) {
			return nil, io.EOF
		}
		if err := r.round(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.err = err
		}
	}
}

// round fetches once from every leader that has channels due, queueing
// what it reads.
func (r *Range) round(ctx context.Context) error {
	now := time.Now()
	var active []*rchan
	for _, ch := range r.chans {
		if !ch.Done {
			active = append(active, ch)
		}
	}
	if r.needMeta {
		bctx, cancel := r.budget(ctx, now, active)
		err := r.refresh(bctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if isFatal(err) {
				return r.rangeError(active[0], err)
			}
			for _, ch := range active {
				if isCtxErr(err) && ch.lastErr != nil {
					ch.fail(now, ch.lastErr) // out of budget: keep the real cause
				} else {
					ch.fail(now, err)
				}
			}
			return r.checkBounds(ctx, time.Now(), active)
		}
	}

	due := make(map[int32][]*rchan)
	for _, ch := range active {
		switch {
		case now.Before(ch.retryAt):
		case ch.leader < 0:
			ch.fail(now, kerr.LeaderNotAvailable)
			r.needMeta = true
		default:
			due[ch.leader] = append(due[ch.leader], ch)
		}
	}
	leaders := slices.Sorted(maps.Keys(due))
	results := make([]fetchResult, len(leaders))
	var wg sync.WaitGroup
	for i, leader := range leaders {
		wg.Go(func() { results[i] = r.fetch(ctx, leader, due[leader]) })
	}
	wg.Wait()

	for i, res := range results {
		chans := due[leaders[i]]
		if res.err != nil {
			err := r.c.classify(res.err)
			if isFatal(err) {
				return r.rangeError(chans[0], err)
			}
			for _, ch := range chans {
				ch.fail(now, err)
			}
			r.needMeta = true
			continue
		}
		for _, ch := range chans {
			if err := r.handle(ctx, now, ch, res.resp); err != nil {
				return r.rangeError(ch, err)
			}
		}
	}
	return r.checkBounds(ctx, now, active)
}

// budget bounds ctx by the time left before the longest-failing channel
// exhausts its retries, so that a lookup against a dead cluster cannot
// outlast RetryFor.
func (r *Range) budget(ctx context.Context, now time.Time, active []*rchan) (context.Context, context.CancelFunc) {
	var first time.Time
	for _, ch := range active {
		if !ch.failingSince.IsZero() && (first.IsZero() || ch.failingSince.Before(first)) {
			first = ch.failingSince
		}
	}
	if first.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, max(first.Add(r.cfg.retryFor).Sub(now), minBackoff))
}

// checkBounds fails the range when a channel has been failing for too long,
// and otherwise waits until the earliest retry when nothing is due now.
func (r *Range) checkBounds(ctx context.Context, now time.Time, active []*rchan) error {
	var next time.Time
	for _, ch := range active {
		if ch.failingSince.IsZero() || ch.Done {
			continue
		}
		if now.Sub(ch.failingSince) >= r.cfg.retryFor {
			return r.rangeError(ch, fmt.Errorf("no progress for %s: %w", now.Sub(ch.failingSince).Round(time.Millisecond), ch.lastErr))
		}
		if next.IsZero() || ch.retryAt.Before(next) {
			next = ch.retryAt
		}
	}
	for _, ch := range active {
		if !ch.Done && ch.failingSince.IsZero() {
			return nil // a healthy channel is due at once
		}
	}
	if next.IsZero() {
		return nil
	}
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (r *Range) rangeError(ch *rchan, err error) error {
	return &RangeError{
		Channel:    ch.label(),
		Position:   ch.Position,
		LastOffset: ch.LastOffset,
		Progress:   r.Channels(),
		Err:        err,
	}
}

// isFatal reports whether retrying err cannot help.
func isFatal(err error) bool {
	return IsAuthError(err) || errors.Is(err, ErrIdentityChanged) || errors.Is(err, ErrUnknownTopic) ||
		errors.Is(err, ErrUnknownPartition) || errors.Is(err, kgo.ErrClientClosed)
}

// refresh looks up the leaders of the active channels again, checking that
// their topics still have the same identity.
func (r *Range) refresh(ctx context.Context) error {
	var names []string
	for _, ch := range r.chans {
		if !ch.Done {
			names = append(names, ch.Topic)
		}
	}
	meta, err := r.c.metadata(ctx, slices.Compact(slices.Sorted(slices.Values(names))), false)
	if err != nil {
		return err
	}
	for _, ch := range r.chans {
		tm := meta[ch.Topic]
		if tm == nil || ch.Done {
			continue
		}
		if !ch.TopicID.IsZero() && tm.id != ch.TopicID {
			return &IdentityChangedError{Topic: ch.Topic, Old: ch.TopicID, New: tm.id}
		}
		leader, ok := tm.leaders[ch.Partition]
		if !ok {
			return &UnknownPartitionError{Topic: ch.Topic, Partition: ch.Partition, Partitions: len(tm.leaders)}
		}
		ch.leader = leader
	}
	r.needMeta = false
	return nil
}

type fetchResult struct {
	resp *kmsg.FetchResponse
	err  error
}

// fetch issues one read_committed fetch, outside any fetch session, to
// leader for chans.
func (r *Range) fetch(ctx context.Context, leader int32, chans []*rchan) fetchResult {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = int32(r.cfg.maxWait.Milliseconds())
	req.MinBytes = 1
	req.MaxBytes = defaultFetchMaxBytes
	req.IsolationLevel = 1 // read_committed
	req.SessionID, req.SessionEpoch = 0, -1
	idx := make(map[string]int)
	for _, ch := range chans {
		i, ok := idx[ch.Topic]
		if !ok {
			i = len(req.Topics)
			idx[ch.Topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = ch.Topic, ch.TopicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = ch.Partition
		rp.FetchOffset = ch.Position
		rp.PartitionMaxBytes = r.cfg.partBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	fctx, cancel := context.WithTimeout(ctx, r.c.cfg.requestTimeout()+r.cfg.maxWait)
	defer cancel()
	kresp, err := r.c.cl.Broker(int(leader)).Request(fctx, req)
	if err != nil {
		return fetchResult{err: fmt.Errorf("fetch from broker %d: %w", leader, err)}
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fetchResult{err: fmt.Errorf("fetch from broker %d: %w", leader, err)}
	}
	return fetchResult{resp: resp}
}

// handle processes ch's part of a fetch response. It returns only errors
// that end the range; others mark the channel failing, to be retried.
func (r *Range) handle(ctx context.Context, now time.Time, ch *rchan, resp *kmsg.FetchResponse) error {
	var rp *kmsg.FetchResponseTopicPartition
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Topic != ch.Topic && (ch.TopicID.IsZero() || clock.TopicID(t.TopicID) != ch.TopicID) {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].Partition == ch.Partition {
				rp = &t.Partitions[j]
			}
		}
	}
	if rp == nil {
		ch.fail(now, errors.New("partition missing from the fetch response"))
		return nil
	}
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return &AuthorizationError{Op: "read", Topic: ch.Topic, Err: err}
	case errors.Is(err, kerr.OffsetOutOfRange):
		return r.outOfRange(ctx, now, ch, err)
	case kerr.IsRetriable(err) || errors.Is(err, kerr.UnknownTopicID):
		ch.fail(now, err)
		r.needMeta = true
		return nil
	default:
		return err
	}

	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset:         ch.Position,
		IsolationLevel: kgo.ReadCommitted(),
		Topic:          ch.Topic,
		Partition:      ch.Partition,
	}, rp, r.c.decompressor, nil)
	for _, rec := range fp.Records {
		if rec.Offset >= ch.End {
			break
		}
		r.emit(ch, rec)
	}
	if r.follow != nil {
		r.follow.fetched(ch, rp)
	}
	if next <= ch.Position {
		if r.follow != nil && r.follow.idle(ch, rp, fp.Err) {
			ch.ok() // a follower at the end of the log: nothing new yet
			return nil
		}
		if fp.Err == nil {
			fp.Err = errors.New("the fetch made no progress")
		}
		ch.fail(now, fp.Err)
		return nil
	}
	r.moveTo(ch, next)
	return nil
}

// moveTo moves ch's position forward to pos after a successful read,
// ending the channel when it reaches its range end.
func (r *Range) moveTo(ch *rchan, pos int64) {
	ch.ok()
	ch.Position = min(pos, ch.End)
	if ch.Position == ch.End {
		r.queue = append(r.queue, ch.position(ch.End))
		ch.emitted = ch.End
		ch.Done = true
	}
	if r.follow != nil {
		r.followed(ch)
	}
}

// outOfRange handles OFFSET_OUT_OF_RANGE: when retention removed the offsets
// at the position, the position moves to the new log start (those records
// will never be received); anything else is retried.
func (r *Range) outOfRange(ctx context.Context, now time.Time, ch *rchan, err error) error {
	starts, lerr := r.c.listAt(ctx, []chanKey{{ch.Topic, ch.Partition}}, -2, 0)
	if lerr != nil {
		if isFatal(lerr) {
			return lerr
		}
		ch.fail(now, lerr)
		return nil
	}
	ls := starts[chanKey{ch.Topic, ch.Partition}].offset
	if ls <= ch.Position {
		ch.fail(now, err)
		r.needMeta = true
		return nil
	}
	r.moveTo(ch, ls)
	return nil
}

// emit queues a record, preceded by a position item when offsets between
// the last item and the record carried no record.
func (r *Range) emit(ch *rchan, rec *kgo.Record) {
	if rec.Offset > ch.emitted {
		r.queue = append(r.queue, ch.position(rec.Offset))
	}
	var hs []clock.Header
	if len(rec.Headers) > 0 {
		hs = make([]clock.Header, len(rec.Headers))
		for i, h := range rec.Headers {
			hs[i] = clock.Header{Key: h.Key, Value: h.Value} // kgo keeps a null value nil
		}
	}
	ts := rec.Timestamp.UnixMilli()
	r.queue = append(r.queue, &capture.Item{
		Kind:         capture.KindRecord,
		Topic:        ch.Topic,
		TopicID:      ch.TopicID,
		Partition:    ch.Partition,
		Offset:       rec.Offset,
		Timestamp:    ts,
		HasTimestamp: ts >= 0,
		Headers:      hs,
		Key:          rec.Key,
		Value:        rec.Value,
	})
	ch.emitted = rec.Offset + 1
	ch.LastOffset = rec.Offset
	ch.Records++
}
