package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
)

// NotifierApp is the notifier's application id, which is also its
// consumer group id (SPEC §6).
const NotifierApp = "notifier"

// NotifierChangelog is the notifier's ordering changelog topic.
var NotifierChangelog = parsley.ChangelogTopic(NotifierApp)

// NotifierTxnID is the transactional id the notifier writes its changelog
// and commits its offsets with.
const NotifierTxnID = NotifierApp + "-causalctl-demo"

// notifierBatch bounds the items one transaction takes.
const notifierBatch = 512

// Notifier is the demo's Parsley process: application id NotifierApp,
// receiving every demo topic with the watched node's lags (the same Feed
// the shadow of `demo` reads through), one gate per task — task p receives
// partition p of every topic that has one — and its ordering state kept in
// SPEC §6 format in NotifierChangelog, one partition per task. Each batch
// of items it receives is one transaction: the changelog entries it
// caused (held records written, delivered ones tombstoned, fed-up-to,
// frontier and delivered past) and the group's offsets, which move past
// held records as under exactly-once (the store carries them). While it
// runs a member of group NotifierApp subscribes to its topics (it reads
// and commits nothing), so the group shows the process's subscription.
type Notifier struct {
	d      *Demo
	cl     *kafka.Client
	feed   *Feed
	prod   *kgo.Client // transactional
	member *kgo.Client // membership only
	tasks  []*task

	cancel     context.CancelFunc
	done       chan struct{}
	stopOnce   sync.Once
	joined     chan struct{}
	joinedOnce sync.Once

	mu       sync.Mutex // held while a batch is fed and committed
	next     map[clock.Channel]int64
	records  atomic.Int64
	err      error
	progress chan struct{} // closed and replaced after each batch

	// skipTombstones breaks the writer: a test proves the state test fails.
	skipTombstones bool
}

// task is one task: its gate, and what its changelog partition holds.
type task struct {
	p     int32
	r     *replay.Replayer
	scope []clock.Channel
	// held are the clocks of the records written as held, by key.
	held map[heldAt]clock.Clock
	// written are the positions last written per tag and channel.
	written map[parsley.Tag]map[clock.Channel]int64
	past    map[clock.Channel]int64 // delivered causal past, in scope
	dirty   bool
}

type heldAt struct {
	ch  clock.Channel
	off int64
}

// StartNotifier creates the notifier's changelog topic (a resumed data
// directory's is recreated: the notifier starts over where this run
// begins, as the shadow does), writes each task's version and name
// entries, joins the group's member and starts receiving. Stop it with
// Stop; Close stops it too.
func (d *Demo) StartNotifier(ctx context.Context) (n *Notifier, err error) {
	if err := d.createChangelog(ctx); err != nil {
		return nil, err
	}
	started := &Notifier{d: d, done: make(chan struct{}), joined: make(chan struct{}), next: map[clock.Channel]int64{}, progress: make(chan struct{})}
	n = started
	defer func() {
		if err != nil {
			started.closeClients() // n is nil on an error return
		}
	}()
	if n.prod, err = kgo.NewClient(
		kgo.SeedBrokers(d.addr),
		kgo.ClientID(NotifierApp),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.DisableClientMetrics(),
		kgo.TransactionalID(NotifierTxnID),
		kgo.TransactionTimeout(10*time.Second),
	); err != nil {
		return nil, fmt.Errorf("notifier producer: %w", err)
	}
	partitions := map[clock.TopicID]int32{}
	var topics []string
	for _, t := range Topics {
		partitions[d.ids[t.Name]] = t.Partitions
		topics = append(topics, t.Name)
	}
	for p := range changelogPartitions() {
		scope := parsley.TaskScope(p, partitions)
		r, err := replay.New(replay.Config{Scope: scope, Names: d.Names()})
		if err != nil {
			return nil, err
		}
		n.tasks = append(n.tasks, &task{p: p, r: r, scope: scope, held: map[heldAt]clock.Clock{},
			written: map[parsley.Tag]map[clock.Channel]int64{}, past: map[clock.Channel]int64{}})
	}
	// As Parsley does before its first start, the first transaction also
	// commits the group's initial positions (where this run begins), so
	// the group has offsets from the moment the notifier exists.
	if err := n.commit(ctx, n.bootstrap(), d.Starts()); err != nil {
		return nil, fmt.Errorf("notifier: writing its store's version and names: %w", err)
	}
	if n.member, err = kgo.NewClient(
		kgo.SeedBrokers(d.addr),
		kgo.ClientID(NotifierApp),
		kgo.ConsumerGroup(NotifierApp),
		kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableClientMetrics(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			n.joinedOnce.Do(func() { close(n.joined) })
		}),
	); err != nil {
		return nil, fmt.Errorf("notifier group member: %w", err)
	}
	var fol *kafka.Follower
	if n.cl, fol, err = d.Follow(ctx, kafka.FetchWait(100*time.Millisecond)); err != nil {
		return nil, err
	}
	n.feed = d.Watch(fol)
	rctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go n.run(rctx)
	d.mu.Lock()
	d.notifiers = append(d.notifiers, n)
	d.mu.Unlock()
	return n, nil
}

// changelogPartitions is the number of tasks: the widest topic's
// partition count.
func changelogPartitions() int32 {
	var n int32
	for _, t := range Topics {
		n = max(n, t.Partitions)
	}
	return n
}

// createChangelog creates the compacted changelog topic, after deleting
// one an earlier run left.
func (d *Demo) createChangelog(ctx context.Context) error {
	adm := kadm.NewClient(d.plain)
	md, err := adm.Metadata(ctx, NotifierChangelog)
	if err != nil {
		return fmt.Errorf("embedded broker metadata: %w", err)
	}
	if td, ok := md.Topics[NotifierChangelog]; ok && td.Err == nil {
		if _, err := adm.DeleteTopic(ctx, NotifierChangelog); err != nil {
			return fmt.Errorf("deleting the earlier run's %s: %w", NotifierChangelog, err)
		}
	}
	policy := "compact"
	resp, err := adm.CreateTopic(ctx, changelogPartitions(), 1, map[string]*string{"cleanup.policy": &policy}, NotifierChangelog)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", NotifierChangelog, err)
	}
	return nil
}

// bootstrap returns every task's version and name entries.
func (n *Notifier) bootstrap() []*kgo.Record {
	var recs []*kgo.Record
	for _, t := range n.tasks {
		recs = append(recs, t.record(parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion}))
		for _, topic := range Topics {
			recs = append(recs, t.record(parsley.Key{Tag: parsley.TagName, Name: topic.Name},
				parsley.AppendNameValue(nil, n.d.ids[topic.Name])))
		}
	}
	return recs
}

func (t *task) record(k parsley.Key, value []byte) *kgo.Record {
	return &kgo.Record{Topic: NotifierChangelog, Partition: t.p, Key: parsley.AppendKey(nil, k), Value: value}
}

// run receives until ctx is done or a batch fails.
func (n *Notifier) run(ctx context.Context) {
	defer close(n.done)
	type arrival struct {
		it  *record.Item
		err error
	}
	in := make(chan arrival, notifierBatch)
	go func() {
		for {
			it, err := n.feed.Next(ctx)
			select {
			case in <- arrival{it, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var batch []*record.Item
	for {
		batch = batch[:0]
		var srcErr error
		select {
		case a := <-in:
			if a.err != nil {
				srcErr = a.err
				break
			}
			batch = append(batch, a.it)
		drain:
			for len(batch) < notifierBatch {
				select {
				case a := <-in:
					if a.err != nil {
						srcErr = a.err
						break drain
					}
					batch = append(batch, a.it)
				default:
					break drain
				}
			}
		case <-ctx.Done():
		}
		err := n.process(batch)
		if err == nil && srcErr != nil && ctx.Err() == nil {
			err = fmt.Errorf("notifier: reading its topics: %w", srcErr)
		}
		if err != nil || ctx.Err() != nil {
			n.mu.Lock()
			n.err = err
			n.mu.Unlock()
			if err != nil {
				// A process that failed leaves its group, as a
				// crashed one does once its session times out.
				n.member.LeaveGroup()
			}
			return
		}
	}
}

// process feeds a batch to the tasks' gates and commits what it changed:
// the changelog entries and the offsets, in one transaction. A record a
// gate fails closed on ends the notifier, as it ends Parsley: what came
// before it is committed, nothing after.
func (n *Notifier) process(batch []*record.Item) error {
	n.mu.Lock()
	defer func() {
		close(n.progress)
		n.progress = make(chan struct{})
		n.mu.Unlock()
	}()
	var recs []*kgo.Record
	offsets := map[clock.Channel]int64{}
	var failed error
	for _, it := range batch {
		if int(it.Partition) >= len(n.tasks) || it.Kind == record.KindLogFacts {
			continue
		}
		t := n.tasks[it.Partition]
		err := t.r.Feed(it, func(ev *replay.Event) error {
			recs = n.event(t, it, ev, recs)
			return nil
		})
		if err != nil {
			failed = err
			break
		}
		t.dirty = true
		ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
		next := it.Offset
		if it.Kind == record.KindRecord {
			next++
			n.records.Add(1)
		}
		if next > n.next[ch] {
			n.next[ch], offsets[ch] = next, next
		}
	}
	for _, t := range n.tasks {
		recs = t.positions(recs)
	}
	if len(recs) > 0 || len(offsets) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.commit(ctx, recs, offsets); err != nil {
			return fmt.Errorf("notifier: committing a transaction: %w", err)
		}
	}
	if failed != nil {
		return fmt.Errorf("notifier: %w", failed)
	}
	return nil
}

// event turns one gate event into changelog entries: a held record is
// written, a delivered one that was written is tombstoned.
func (n *Notifier) event(t *task, it *record.Item, ev *replay.Event, recs []*kgo.Record) []*kgo.Record {
	at := heldAt{ev.Channel, ev.Offset}
	key := parsley.Key{Tag: parsley.TagHeld, Channel: ev.Channel, Position: ev.Offset}
	switch ev.Type {
	case replay.EventHold:
		// A hold is always of the record just received.
		c, _, _ := clock.FromHeaders(it.Headers)
		t.held[at] = c
		v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: it.Timestamp, Key: it.Key, Value: it.Value,
			Headers: it.Headers, Causes: c.Entries()})
		recs = append(recs, t.record(key, v))
	case replay.EventDeliver:
		c, wasHeld := t.held[at]
		if wasHeld {
			delete(t.held, at)
			if !n.skipTombstones {
				recs = append(recs, t.record(key, nil))
			}
		} else {
			c, _, _ = clock.FromHeaders(it.Headers) // delivered on receipt
		}
		for _, e := range c.Entries() {
			if slices.Contains(t.scope, e.Channel) {
				t.past[e.Channel] = max(t.past[e.Channel], e.Position)
			}
		}
	}
	return recs
}

// positions appends the fed-up-to, frontier and delivered-past entries of
// t's channels that changed since they were last written.
func (t *task) positions(recs []*kgo.Record) []*kgo.Record {
	if !t.dirty {
		return recs
	}
	t.dirty = false
	g := t.r.Gate()
	stamp := g.Stamp()
	for _, ch := range t.scope {
		front, ok := stamp.Get(ch)
		if !ok {
			front = -1
		}
		past, ok := t.past[ch]
		if !ok {
			past = -1
		}
		for _, w := range []struct {
			tag parsley.Tag
			pos int64
		}{{parsley.TagFedUpTo, g.Fed(ch)}, {parsley.TagFrontier, front}, {parsley.TagDeliveredPast, past}} {
			m := t.written[w.tag]
			if m == nil {
				m = map[clock.Channel]int64{}
				t.written[w.tag] = m
			}
			if last, ok := m[ch]; w.pos < 0 || (ok && last == w.pos) {
				continue
			}
			m[ch] = w.pos
			recs = append(recs, t.record(parsley.Key{Tag: w.tag, Channel: ch}, parsley.AppendPosition(nil, w.pos)))
		}
	}
	return recs
}

// commit writes recs and commits offsets to the group in one transaction,
// and makes sure it committed (Demo.transact).
func (n *Notifier) commit(ctx context.Context, recs []*kgo.Record, offsets map[clock.Channel]int64) error {
	if len(recs) == 0 {
		// A transaction that writes nothing is not begun: rewrite the
		// version so that the offsets commit inside one.
		recs = []*kgo.Record{n.tasks[0].record(parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})}
	}
	return n.d.transact(ctx, n.prod, func() ([]*kgo.Record, error) {
		written, err := produceSync(ctx, n.prod, recs)
		if err != nil {
			return written, err
		}
		if len(offsets) > 0 {
			return written, n.commitOffsets(ctx, offsets)
		}
		return written, nil
	}, nil)
}

// commitOffsets adds the group's offsets to the open transaction.
// franz-go commits transactional offsets only for a client that consumes
// in the group itself (GroupTransactSession); the notifier reads through
// causalctl's own reader, so it sends AddOffsetsToTxn and TxnOffsetCommit
// itself, as a generation-less (admin-style) commit.
func (n *Notifier) commitOffsets(ctx context.Context, offsets map[clock.Channel]int64) error {
	id, epoch, err := n.prod.ProducerID(ctx)
	if err != nil {
		return err
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = NotifierTxnID, id, epoch, NotifierApp
	for attempt := 0; ; attempt++ {
		addResp, err := add.RequestWith(ctx, n.prod)
		if err != nil {
			return err
		}
		err = kerr.ErrorForCode(addResp.ErrorCode)
		if err == nil {
			break
		}
		// The previous transaction may still be ending: retry a while,
		// as franz-go does for its own requests of a transaction.
		if !errors.Is(err, kerr.ConcurrentTransactions) || attempt == 20 {
			return fmt.Errorf("AddOffsetsToTxn: %w", err)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = NotifierTxnID, NotifierApp, id, epoch
	req.Generation, req.MemberID = -1, ""
	chans := make([]clock.Channel, 0, len(offsets))
	for ch := range offsets {
		chans = append(chans, ch)
	}
	slices.SortFunc(chans, clock.Channel.Compare)
	for _, ch := range chans {
		name, _ := n.d.names.Name(ch.Topic)
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != name {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = name, ch.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = ch.Partition, offsets[ch], -1
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	resp, err := req.RequestWith(ctx, n.prod)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("TxnOffsetCommit %s/%d: %w", rt.Topic, rp.Partition, err)
			}
		}
	}
	return nil
}

// Flush ends the notifier's lags, as Feed.Flush does the shadow's.
func (n *Notifier) Flush() { n.feed.Flush() }

// Stop stops the notifier: it finishes the batch in hand (its transaction
// ends), then its gates stop and its member leaves the group. Its store
// and committed offsets stay: what a stopped process leaves. Stop waits
// for all that and may be called more than once.
func (n *Notifier) Stop() {
	n.stopOnce.Do(func() {
		n.cancel()
		<-n.done
		n.closeClients()
	})
}

func (n *Notifier) closeClients() {
	if n.feed != nil {
		n.feed.Close()
	}
	if n.cl != nil {
		n.cl.Close()
	}
	if n.member != nil {
		n.member.Close()
	}
	if n.prod != nil {
		n.prod.Close()
	}
}

// Done is closed once the notifier stopped receiving: stopped, failed
// closed, or its feed failed (Err says which).
func (n *Notifier) Done() <-chan struct{} { return n.done }

// Joined is closed once the notifier's group member has its assignment.
func (n *Notifier) Joined() <-chan struct{} { return n.joined }

// Err returns why the notifier stopped by itself (a record it failed
// closed on, a broker error), or nil.
func (n *Notifier) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Records returns how many records the notifier has received (and
// committed the state of).
func (n *Notifier) Records() int64 { return n.records.Load() }

// WaitRecords waits until the notifier has received at least count
// records, it stopped, or ctx is done.
func (n *Notifier) WaitRecords(ctx context.Context, count int64) error {
	return n.Wait(ctx, func([]TaskState) bool { return n.Records() >= count })
}

// Wait waits until ok holds of the tasks' state, checked at the start and
// after each transaction; an error once the notifier stopped without it,
// or ctx is done.
func (n *Notifier) Wait(ctx context.Context, ok func([]TaskState) bool) error {
	for {
		n.mu.Lock()
		progress := n.progress
		n.mu.Unlock()
		if ok(n.State()) {
			return nil
		}
		select {
		case <-progress:
		case <-n.done:
			if ok(n.State()) {
				return nil
			}
			if err := n.Err(); err != nil {
				return err
			}
			return errors.New("the notifier stopped")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TaskState is one task's gate state: what its changelog partition says.
type TaskState struct {
	Task     int32
	Channels []ChannelState
}

// ChannelState is one channel of a task, as its gate has it.
type ChannelState struct {
	Channel clock.Channel
	FedUpTo int64
	Settled int64
	// Held are the held offsets, head first, with their clocks.
	Held   []int64
	Clocks []clock.Clock
	// Committed is the group offset committed for it; −1 when none.
	Committed int64
}

// State returns every task's gate state between two transactions: what
// its committed changelog partition holds.
func (n *Notifier) State() []TaskState {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []TaskState
	for _, t := range n.tasks {
		g := t.r.Gate()
		ts := TaskState{Task: t.p}
		for _, ch := range t.scope {
			cs := ChannelState{Channel: ch, FedUpTo: g.Fed(ch), Settled: g.Settled(ch), Committed: -1}
			if next, ok := n.next[ch]; ok {
				cs.Committed = next
			}
			for _, h := range g.Queue(ch) {
				cs.Held = append(cs.Held, h.Offset)
				cs.Clocks = append(cs.Clocks, h.Clock)
			}
			ts.Channels = append(ts.Channels, cs)
		}
		out = append(out, ts)
	}
	return out
}
