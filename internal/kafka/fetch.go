package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// This file is the fetch loop that a Range and a Follower share: resolving
// the channels and their starts, fetching from each leader, retrying
// failing brokers, and queueing the items read. What the two do
// differently with a fetched partition — a Range stops at its end, a
// Follower waits at the log end — is theirs, behind the partSink interface.

// Defaults of the read options.
const (
	DefaultRetryFor            = DefaultRequestTimeout
	DefaultFetchPartitionBytes = 1 << 20
	// DefaultFollowWait is a Follower's long-poll wait: it bounds how
	// late a record on one leader is seen while another leader's fetch
	// of the same round waits.
	DefaultFollowWait = 500 * time.Millisecond
	// defaultRangeWait is a Range's: every channel of a range has
	// committed data below its end, so its fetches rarely wait at all.
	defaultRangeWait     = 100 * time.Millisecond
	defaultFetchMaxBytes = 16 << 20
	minBackoff           = 100 * time.Millisecond
	maxBackoff           = 2 * time.Second
)

// ReadOption configures OpenRange and Follow.
type ReadOption interface{ apply(*readConfig) }

type readOpt func(*readConfig)

func (o readOpt) apply(c *readConfig) { o(c) }

type readConfig struct {
	starts    map[clock.Channel]int64
	retryFor  time.Duration
	forever   bool // RetryForever
	partBytes int32
	maxWait   time.Duration // how long a fetch may wait for data
	clock     Clock
	facts     bool                  // WithLogFacts
	allowGaps bool                  // AllowGaps
	onNew     func(ChannelProgress) // OnNewChannel
	keep      func(int32) bool      // OnlyPartitions
	// toHWM ends a range at each channel's high watermark
	// (ToHighWatermark); txnWait is how long it waits for an open
	// transaction below it.
	toHWM   bool
	txnWait time.Duration
}

func newReadConfig(maxWait time.Duration, opts []ReadOption) (readConfig, error) {
	cfg := readConfig{retryFor: DefaultRetryFor, partBytes: DefaultFetchPartitionBytes, maxWait: maxWait, clock: wallClock{}}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.retryFor <= 0 || cfg.partBytes <= 0 || cfg.maxWait <= 0 {
		return cfg, errors.New("read options: retry time, fetch size and wait must be positive")
	}
	if cfg.clock == nil {
		return cfg, errors.New("read options: no clock")
	}
	if cfg.txnWait < 0 {
		return cfg, errors.New("read options: the wait for an open transaction must not be negative")
	}
	return cfg, nil
}

// OnlyPartitions makes a range read only the partitions keep keeps, of
// every topic selected, and leave the others unfetched: a shard of a
// per-task replay (replay --tasks --shard) reads its own tasks' channels.
func OnlyPartitions(keep func(partition int32) bool) ReadOption {
	return readOpt(func(c *readConfig) { c.keep = keep })
}

// WithStarts sets explicit start positions for some channels (from
// --start or from GroupOffsets), overriding the spec's start for them.
// Channels of the read that are not in starts use the spec's start; entries
// for channels outside it are ignored. Each start is clamped to the
// channel's log start and current end like any other.
func WithStarts(starts map[clock.Channel]int64) ReadOption {
	return readOpt(func(c *readConfig) { c.starts = maps.Clone(starts) })
}

// RetryFor sets how long a channel may keep failing (broker gone, leader
// moving) before Next gives up with a *RangeError, overriding the default:
// the client's request timeout (Config.RequestTimeout). Any progress on
// the channel resets the clock.
func RetryFor(d time.Duration) ReadOption {
	return readOpt(func(c *readConfig) { c.retryFor = d })
}

// RetryForever makes a read retry a failing channel for as long as its
// context lasts, instead of giving up after RetryFor: what a shadow node
// run as a sidecar wants, since it reports being disconnected (Follower's
// Retrying) and a broker outage longer than the request timeout must not
// end it. Backoff between tries is unchanged.
func RetryForever() ReadOption {
	return readOpt(func(c *readConfig) { c.forever = true })
}

// FetchPartitionBytes sets how many bytes one fetch asks for per partition,
// overriding DefaultFetchPartitionBytes. A broker returns at least one whole
// record batch even when it is larger.
func FetchPartitionBytes(n int32) ReadOption {
	return readOpt(func(c *readConfig) { c.partBytes = n })
}

// FetchWait sets how long the broker may hold a fetch open waiting for new
// records, overriding the default: 100ms for a Range, DefaultFollowWait for
// a Follower. A shorter wait sees records on other leaders sooner and costs
// more idle fetches.
func FetchWait(d time.Duration) ReadOption {
	return readOpt(func(c *readConfig) { c.maxWait = d })
}

// Clock is the time a read runs on: Now dates failures and retry
// deadlines, Sleep waits out a backoff. Requests to brokers keep their own
// timeouts in wall time.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or until ctx is done, then returning ctx's error.
	Sleep(ctx context.Context, d time.Duration) error
}

// WithClock sets the Clock of a read, overriding the wall clock. Tests use
// it to run out a RetryFor time without waiting for it.
func WithClock(c Clock) ReadOption {
	return readOpt(func(cfg *readConfig) { cfg.clock = c })
}

// WallClock is the clock reads run on unless WithClock says otherwise.
func WallClock() Clock { return wallClock{} }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ChannelProgress describes one channel of a read and how far it got.
type ChannelProgress struct {
	Topic     string
	TopicID   clock.TopicID
	Partition int32
	// Start is the position the read started at.
	Start int64
	// The partition's offsets when the read was opened.
	LogStart, HighWatermark, LastStable int64
	// Position is the consumer's position: every offset below it was read.
	Position int64
	// LastOffset is the offset of the last record yielded, -1 for none.
	LastOffset int64
	// Records is the number of records yielded.
	Records int64
}

// Channel returns the channel's identity.
func (p ChannelProgress) Channel() clock.Channel {
	return clock.Channel{Topic: p.TopicID, Partition: p.Partition}
}

// StableEnd is the end a read_committed reader reads up to: the last stable
// offset, or the high watermark when the broker gives none (lso < 0). It is
// the one place causalctl decides that.
func StableEnd(lso, hwm int64) int64 {
	if lso >= 0 {
		return lso
	}
	return hwm
}

// rchan is the state of one channel of a read.
type rchan struct {
	ChannelProgress
	index   int // in reader.chans
	leader  int32
	emitted int64 // the position already told to the caller

	failingSince time.Time // zero while healthy
	failures     int
	retryAt      time.Time
	lastErr      error

	buf      []*chunk // items read and not yet taken, oldest first
	head     int      // the next item of buf[0]
	bufBytes int      // record bytes in buf

	item record.Item    // the item taken last (unless the reader keeps items)
	hdrs []clock.Header // its headers
}

func (ch *rchan) key() chanKey { return chanKey{ch.Topic, ch.Partition} }

func (ch *rchan) label() string { return fmt.Sprintf("%s/%d", ch.Topic, ch.Partition) }

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

// failNoProgress marks ch failing after a fetch that moved it nowhere.
func (ch *rchan) failNoProgress(now time.Time, err error) {
	if err == nil {
		err = errors.New("the fetch made no progress")
	}
	ch.fail(now, err)
}

// fetched is one channel's part of a fetch response, once its errors are
// handled: the partition's records, still encoded (nil when there are
// none to read and next says where the position moves instead), and the
// stable end and the high watermark the broker reported (-1 when it
// reported none).
type fetched struct {
	rp   *kmsg.FetchResponseTopicPartition
	next int64
	end  int64
	hwm  int64
	gap  bool // the offsets from the position to next were deleted unread
}

// partSink is what a Range and a Follower do differently.
type partSink interface {
	// active returns the channels still to be read.
	active() []*rchan
	// take handles ch's part of a fetch; an error ends the read.
	take(now time.Time, ch *rchan, p fetched)
}

// reader is the fetch loop shared by Range and Follower. It is used by one
// goroutine at a time.
type reader struct {
	c     *Client
	cfg   readConfig
	chans []*rchan

	buffers  // the items read, per channel (buffer.go)
	dec      batchDecoder
	flight   *flight // the fetch round in flight, if any
	err      error   // latched: returned once the buffers are drained
	needMeta bool

	// observe, when set, is told after every round which channels are
	// failing (a Follower publishes it as its retrying state).
	observe func(active []*rchan)
}

// open checks the options and the spec, resolves the selected channels,
// lists their offsets and sets each channel's start from spec.Start (or a
// WithStarts entry), clamped to [log start, stable end], queueing a start
// position item for each. maxWait is the default FetchWait.
func (c *Client) open(ctx context.Context, sels []TopicSel, spec OffsetSpec, maxWait time.Duration, opts []ReadOption) (*reader, error) {
	// Without RetryFor, a read retries a silent cluster for the
	// client's request timeout (--request-timeout), which the user set.
	opts = append([]ReadOption{RetryFor(c.cfg.requestTimeout())}, opts...)
	cfg, err := newReadConfig(maxWait, opts)
	if err != nil {
		return nil, err
	}
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	start := spec.Start
	if len(sels) == 0 {
		return nil, errors.New("no topic selected")
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

	rd := &reader{c: c, cfg: cfg, dec: batchDecoder{decompressor: c.decompressor}}
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
			if seen[k] || cfg.keep != nil && !cfg.keep(p) {
				continue
			}
			seen[k] = true
			rd.chans = append(rd.chans, &rchan{
				ChannelProgress: ChannelProgress{Topic: tm.name, TopicID: tm.id, Partition: p, LastOffset: -1},
				index:           len(rd.chans),
				leader:          tm.leaders[p],
			})
		}
	}

	if err := c.checkRead(ctx, rd.topics()); err != nil {
		return nil, err
	}
	offs, err := c.listOffsets(ctx, rd.keys(), rd.listBound())
	if err != nil {
		return nil, err
	}
	startTimes, err := rd.listTimes(ctx, start)
	if err != nil {
		return nil, err
	}
	for _, ch := range rd.chans {
		o := offs[ch.key()]
		ch.LogStart, ch.HighWatermark, ch.LastStable = o.logStart, o.hwm, o.lso
		s := resolveBound(start, o.logStart, ch.stableEnd(), startTimes[ch.key()])
		if st, ok := cfg.starts[ch.Channel()]; ok && !ch.TopicID.IsZero() {
			s = st
		}
		s = clamp(s, o.logStart, ch.stableEnd())
		ch.Start, ch.Position, ch.emitted = s, s, s
	}
	if cfg.facts { // first, a log-facts item for each channel
		for i, it := range c.logFacts(ctx, rd) {
			rd.begin()
			rd.addItem(it)
			rd.commit(rd.chans[i])
		}
	}
	for _, ch := range rd.chans {
		rd.begin()
		rd.addPosition(ch, ch.Start)
		rd.commit(ch)
	}
	return rd, nil
}

// stableEnd is the channel's end as listed when the read opened.
func (p ChannelProgress) stableEnd() int64 { return StableEnd(p.LastStable, p.HighWatermark) }

func (rd *reader) keys() []chanKey {
	keys := make([]chanKey, len(rd.chans))
	for i, ch := range rd.chans {
		keys[i] = ch.key()
	}
	return keys
}

// listBound is how long the read's listings ask again a partition that
// answers with a retriable error: its RetryFor, at most the request
// timeout, on its clock.
func (rd *reader) listBound() listBound {
	return listBound{clock: rd.cfg.clock, wait: min(rd.cfg.retryFor, rd.c.cfg.requestTimeout())}
}

// listTimes lists the offsets of every channel at a time bound; nil for
// any other bound.
func (rd *reader) listTimes(ctx context.Context, b Bound) (map[chanKey]listed, error) {
	if b.Kind != BoundTime {
		return nil, nil
	}
	return rd.c.listAt(ctx, rd.keys(), b.Time.UnixMilli(), 1, rd.c.deadline(rd.listBound()))
}

// progress returns every channel of the read, in selection order.
func (rd *reader) progress() []ChannelProgress {
	out := make([]ChannelProgress, len(rd.chans))
	for i, ch := range rd.chans {
		out[i] = ch.ChannelProgress
	}
	return out
}

// advance moves ch's position forward to pos after a successful read.
func (ch *rchan) advance(pos int64) {
	ch.ok()
	ch.Position = pos
}

// flight is a fetch round in flight: one request to each leader with due
// channels, answered on their own goroutines. Requests are built before it
// starts, so nothing of the reader is touched while it flies.
type flight struct {
	now     time.Time
	leaders []int32
	due     map[int32][]*rchan
	results []fetchResult
	done    chan struct{}
}

// launch starts a round for the eligible channels of active, first looking
// up leaders again when a failure asked for it. It returns nil when no
// channel is due, after waiting for the earliest retry when none is
// healthy; an error ends the read.
func (rd *reader) launch(ctx context.Context, active []*rchan) (*flight, error) {
	now := rd.cfg.clock.Now()
	if rd.needMeta {
		bctx, cancel := rd.budget(ctx, now, active)
		err := rd.refresh(bctx, active)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if isFatal(err) {
				return nil, rd.rangeError(active[0], err)
			}
			for _, ch := range active {
				if isCtxErr(err) && ch.lastErr != nil {
					ch.fail(now, ch.lastErr) // out of budget: keep the real cause
				} else {
					ch.fail(now, err)
				}
			}
			return nil, rd.checkBounds(ctx, rd.cfg.clock.Now(), active, active)
		}
	}
	eligible := rd.eligible(active)
	due := make(map[int32][]*rchan)
	for _, ch := range eligible {
		switch {
		case now.Before(ch.retryAt):
		case ch.leader < 0:
			ch.fail(now, kerr.LeaderNotAvailable)
			rd.needMeta = true
		default:
			due[ch.leader] = append(due[ch.leader], ch)
		}
	}
	if len(due) == 0 {
		return nil, rd.checkBounds(ctx, now, active, eligible)
	}
	return rd.start(ctx, now, due), nil
}

// prefetch starts the next round at once, while what the last one read is
// taken, when every active channel is healthy: the pipelining that keeps
// the fetch and the processing of its records apart in time.
func (rd *reader) prefetch(ctx context.Context, active []*rchan) {
	if rd.err != nil || rd.needMeta || rd.flight != nil || len(active) == 0 {
		return
	}
	due := make(map[int32][]*rchan)
	for _, ch := range active {
		if !ch.failingSince.IsZero() || ch.leader < 0 {
			return // a failing read goes round by round, with its backoff
		}
	}
	for _, ch := range rd.eligible(active) {
		due[ch.leader] = append(due[ch.leader], ch)
	}
	if len(due) > 0 {
		rd.flight = rd.start(ctx, rd.cfg.clock.Now(), due)
	}
}

// start sends one fetch to each leader of due.
func (rd *reader) start(ctx context.Context, now time.Time, due map[int32][]*rchan) *flight {
	f := &flight{now: now, leaders: slices.Sorted(maps.Keys(due)), due: due, done: make(chan struct{})}
	f.results = make([]fetchResult, len(f.leaders))
	reqs := make([]*kmsg.FetchRequest, len(f.leaders))
	for i, leader := range f.leaders {
		reqs[i] = rd.request(due[leader])
	}
	go func() {
		defer close(f.done)
		var wg sync.WaitGroup
		for i, leader := range f.leaders {
			wg.Go(func() { f.results[i] = rd.send(ctx, leader, reqs[i]) })
		}
		wg.Wait()
	}()
	return f
}

// land waits for f and hands each channel's part to sink.
func (rd *reader) land(ctx context.Context, f *flight, sink partSink) error {
	select {
	case <-f.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	now := f.now
	for i, res := range f.results {
		chans := f.due[f.leaders[i]]
		if res.err != nil {
			err := rd.c.classify(res.err)
			if isFatal(err) {
				return rd.rangeError(chans[0], err)
			}
			for _, ch := range chans {
				ch.fail(now, err)
			}
			rd.needMeta = true
			continue
		}
		for _, ch := range chans {
			p, ok, err := rd.part(ctx, now, ch, res.resp)
			if err != nil {
				return rd.rangeError(ch, err)
			}
			if ok {
				sink.take(now, ch, p)
			}
		}
	}
	active := sink.active()
	return rd.checkBounds(ctx, now, active, active)
}

// budget bounds ctx by the time left before the longest-failing channel
// exhausts its retries, so that a lookup against a dead cluster cannot
// outlast RetryFor.
func (rd *reader) budget(ctx context.Context, now time.Time, active []*rchan) (context.Context, context.CancelFunc) {
	var first time.Time
	for _, ch := range active {
		if !ch.failingSince.IsZero() && (first.IsZero() || ch.failingSince.Before(first)) {
			first = ch.failingSince
		}
	}
	if first.IsZero() || rd.cfg.forever {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, max(first.Add(rd.cfg.retryFor).Sub(now), minBackoff))
}

// checkBounds fails the read when an active channel has been failing for
// too long, and otherwise waits until the earliest retry of the eligible
// ones (those with room to buffer more) when none of them is due now.
func (rd *reader) checkBounds(ctx context.Context, now time.Time, active, eligible []*rchan) error {
	if rd.observe != nil {
		rd.observe(active)
	}
	for _, ch := range active {
		if !rd.cfg.forever && !ch.failingSince.IsZero() && now.Sub(ch.failingSince) >= rd.cfg.retryFor {
			return rd.rangeError(ch, fmt.Errorf("no progress for %s: %w", now.Sub(ch.failingSince).Round(time.Millisecond), ch.lastErr))
		}
	}
	var next time.Time
	healthy := false
	for _, ch := range eligible {
		if ch.failingSince.IsZero() {
			healthy = true
			continue
		}
		if next.IsZero() || ch.retryAt.Before(next) {
			next = ch.retryAt
		}
	}
	if healthy || next.IsZero() {
		return nil // a healthy channel is due at once
	}
	return rd.cfg.clock.Sleep(ctx, next.Sub(now))
}

func (rd *reader) rangeError(ch *rchan, err error) error {
	return &RangeError{
		Channel:    ch.label(),
		Position:   ch.Position,
		LastOffset: ch.LastOffset,
		Progress:   rd.progress(),
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
func (rd *reader) refresh(ctx context.Context, active []*rchan) error {
	var names []string
	for _, ch := range active {
		names = append(names, ch.Topic)
	}
	meta, err := rd.c.metadata(ctx, slices.Compact(slices.Sorted(slices.Values(names))), false)
	if err != nil {
		return err
	}
	for _, ch := range active {
		tm := meta[ch.Topic]
		if tm == nil {
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
	rd.needMeta = false
	return nil
}

type fetchResult struct {
	resp *kmsg.FetchResponse
	err  error
}

// request builds one read_committed fetch, outside any fetch session, for
// chans at their positions.
func (rd *reader) request(chans []*rchan) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = millis32(rd.cfg.maxWait)
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
		rp.PartitionMaxBytes = rd.cfg.partBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	return req
}

// send issues req to leader.
func (rd *reader) send(ctx context.Context, leader int32, req *kmsg.FetchRequest) fetchResult {
	fctx, cancel := context.WithTimeout(ctx, rd.c.cfg.requestTimeout()+rd.cfg.maxWait)
	defer cancel()
	kresp, err := rd.c.cl.Broker(int(leader)).Request(fctx, req)
	if err != nil {
		return fetchResult{err: fmt.Errorf("fetch from broker %d: %w", leader, err)}
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fetchResult{err: fmt.Errorf("fetch from broker %d: %w", leader, err)}
	}
	return fetchResult{resp: resp}
}

// part finds ch's part of a fetch response and handles its errors. It
// returns an error only when the read must end; ok is false when ch was
// marked failing, to be retried.
func (rd *reader) part(ctx context.Context, now time.Time, ch *rchan, resp *kmsg.FetchResponse) (p fetched, ok bool, err error) {
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
		return fetched{}, false, nil
	}
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fetched{}, false, &AuthorizationError{Op: "read", Topic: ch.Topic, Err: err}
	case errors.Is(err, kerr.OffsetOutOfRange):
		return rd.outOfRange(ctx, now, ch, err)
	case kerr.IsRetriable(err) || errors.Is(err, kerr.UnknownTopicID):
		ch.fail(now, err)
		rd.needMeta = true
		return fetched{}, false, nil
	default:
		return fetched{}, false, err
	}

	return fetched{rp: rp, end: StableEnd(rp.LastStableOffset, rp.HighWatermark), hwm: rp.HighWatermark}, true, nil
}

// outOfRange handles OFFSET_OUT_OF_RANGE: when retention removed the offsets
// at the position, the read fails with a *GapError, or with AllowGaps the
// position moves to the new log start over a gap (those records will never
// be received); anything else is retried.
func (rd *reader) outOfRange(ctx context.Context, now time.Time, ch *rchan, err error) (fetched, bool, error) {
	starts, lerr := rd.c.listAt(ctx, []chanKey{ch.key()}, -2, 0, rd.c.deadline(rd.listBound()))
	if lerr != nil {
		if isFatal(lerr) {
			return fetched{}, false, lerr
		}
		ch.fail(now, lerr)
		return fetched{}, false, nil
	}
	ls := starts[ch.key()].offset
	if ls <= ch.Position {
		ch.fail(now, err)
		rd.needMeta = true
		return fetched{}, false, nil
	}
	if !rd.cfg.allowGaps {
		return fetched{}, false, &GapError{Channel: ch.label(), From: ch.Position, To: ls}
	}
	return fetched{next: ls, end: -1, hwm: -1, gap: true}, true, nil
}
