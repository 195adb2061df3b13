// Package tracker follows every Parsley process of a cluster, for
// `causalctl exporter`: it discovers the ordering changelogs (topics named
// APP-__parsley.ordering-changelog), follows each one read_committed from
// its log start (a kafka.Follower folding into a parsley.Changelog, which
// keeps only the live store), and on every refresh reads each process's
// group, committed offsets and business topics' log facts, diagnoses the
// tasks whose store or facts changed (inspect.DiagnoseTask), and publishes
// a Snapshot. Broker reads are read-only: groups are described, never
// joined.
package tracker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// Defaults of Config.
const (
	DefaultRefresh  = 15 * time.Second
	DefaultDiscover = time.Minute
)

// Config configures a Tracker.
type Config struct {
	// Client reads the cluster; the tracker does not close it.
	Client *kafka.Client
	// AppPrefix, when set, narrows the processes to the application ids
	// that start with it.
	AppPrefix string
	// Refresh is the interval of Run's refreshes (default DefaultRefresh);
	// Discover that of its rediscoveries (default DefaultDiscover).
	Refresh, Discover time.Duration
	// TxnWait bounds how long a refresh waits for a changelog to be read
	// up to the end listed when the refresh began (default
	// kafka.DefaultTxnWait); a task not read that far keeps its last
	// committed offsets and is said to be behind a transaction. A
	// follower that began failing meanwhile (a leader moving) is given
	// 5 s (at most the request timeout) from then to read again before
	// the refresh fails.
	TxnWait time.Duration
	// Now reads the clock (default time.Now).
	Now func() time.Time
	// ReadOptions are added to every changelog follower's (tests).
	ReadOptions []kafka.ReadOption
	// OnError, when set, is called with each failed discovery's or
	// refresh's error as it fails, on the tracker's goroutine: a snapshot
	// keeps only the latest refresh's, which a quick success clears.
	OnError func(error)
}

// Tracker follows the processes of one cluster. Discover, Refresh and Run
// are called from one goroutine; Latest from any.
type Tracker struct {
	cfg    Config
	names  *clock.Names
	procs  map[string]*process // by changelog topic
	latest atomic.Pointer[Snapshot]

	errors       uint64
	diagnosed    uint64
	lastSuccess  time.Time
	failingSince time.Time
}

// New returns a tracker; it reads nothing until Discover or Run.
func New(cfg Config) *Tracker {
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.Discover <= 0 {
		cfg.Discover = DefaultDiscover
	}
	if cfg.TxnWait <= 0 {
		cfg.TxnWait = kafka.DefaultTxnWait
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Tracker{cfg: cfg, names: &clock.Names{}, procs: map[string]*process{}}
}

// Latest returns the latest snapshot; false before the first refresh.
func (t *Tracker) Latest() (*Snapshot, bool) {
	s := t.latest.Load()
	return s, s != nil
}

// Run discovers and refreshes at once, then refreshes every Refresh and
// rediscovers every Discover until ctx is done, and stops every follower.
// A failed refresh or discovery is kept in the snapshot (LastError,
// Errors) and retried at the next tick; Run returns only ctx.Err().
func (t *Tracker) Run(ctx context.Context) error {
	defer t.Close()
	t.Discover(ctx)
	t.Refresh(ctx)
	refresh := time.NewTicker(t.cfg.Refresh)
	defer refresh.Stop()
	discover := time.NewTicker(t.cfg.Discover)
	defer discover.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-discover.C:
			t.Discover(ctx)
		case <-refresh.C:
			t.Refresh(ctx)
		}
	}
}

// Close stops every follower and waits for them.
func (t *Tracker) Close() {
	for topic, p := range t.procs {
		p.stop()
		delete(t.procs, topic)
	}
}

// Discover lists the cluster's topics, starts following every ordering
// changelog not followed yet (again, when its follower ended) and stops
// following those deleted. A failed listing is recorded as a refresh
// error would be, and changes nothing.
func (t *Tracker) Discover(ctx context.Context) error {
	topics, changed := t.topics(ctx)
	err := errors.Join(changed...)
	if topics == nil {
		t.fail(fmt.Errorf("discovering ordering changelogs: %w", err))
		return err
	}
	if err != nil {
		t.fail(err)
	}
	for topic, p := range t.procs {
		// A follower that ended over a gap is kept: following the
		// changelog again from its new log start would read a store
		// missing the deleted entries as if it were whole.
		if _, ok := topics[topic]; !ok || p.ended() && !errors.Is(p.failure(), kafka.ErrGap) {
			p.stop()
			delete(t.procs, topic)
		}
	}
	for topic := range topics {
		app, ok := parsley.AppOf(topic)
		if !ok || !strings.HasPrefix(app, t.cfg.AppPrefix) || t.procs[topic] != nil {
			continue
		}
		t.procs[topic] = t.follow(ctx, app, topic)
	}
	return nil
}

// topics lists the cluster's topics. A topic deleted and recreated since
// the client learned it (a new topic ID) fails the listing with an
// identity change: it is reported (in changed), forgotten, its changelog
// followed anew from the new topic's start when it is one, and the
// listing retried. nil when the listing failed (the error last in
// changed).
func (t *Tracker) topics(ctx context.Context) (map[string][]int32, []error) {
	var changed []error
	for range 16 {
		topics, err := t.cfg.Client.TopicPartitions(ctx)
		var ice *kafka.IdentityChangedError
		if !errors.As(err, &ice) {
			if err != nil {
				return nil, append(changed, fmt.Errorf("listing topics: %w", err))
			}
			return topics, changed
		}
		changed = append(changed, t.identityChanged(ctx, ice))
	}
	return nil, append(changed, errors.New("listing topics: too many identity changes at once"))
}

// identityChanged reports that a topic was deleted and recreated: the
// client forgets its old ID, and a changelog followed under its name is
// followed anew — a new store from the new topic's log start, never merged
// with the old one's; the old store is no longer published.
func (t *Tracker) identityChanged(ctx context.Context, ice *kafka.IdentityChangedError) error {
	t.cfg.Client.Forget(ice.Topic)
	p, ok := t.procs[ice.Topic]
	if !ok {
		return ice
	}
	p.stop()
	t.procs[ice.Topic] = t.follow(ctx, p.app, p.topic)
	return fmt.Errorf("%s: %w: its ordering state is read anew from the new topic, never merged with the old one's", p.app, ice)
}

// fail records a failed read.
func (t *Tracker) fail(err error) {
	if t.cfg.OnError != nil {
		t.cfg.OnError(err)
	}
	t.errors++
	if t.failingSince.IsZero() {
		t.failingSince = t.cfg.Now()
	}
	s := Snapshot{}
	if old, ok := t.Latest(); ok {
		s = *old
	}
	s.Errors, s.FailingSince, s.LastError, s.Diagnosed = t.errors, t.failingSince, err.Error(), t.diagnosed
	t.latest.Store(&s)
}

// Refresh reads every followed process's group, offsets and log facts,
// diagnoses the tasks whose inputs changed, and publishes a snapshot. A
// process that cannot be read keeps its last state in the snapshot, and
// the error is recorded (LastError, Errors); the refresh goes on with the
// others.
func (t *Tracker) Refresh(ctx context.Context) error {
	start := t.cfg.Now()
	exist, errs := t.topics(ctx)
	for _, topic := range slices.Sorted(maps.Keys(t.procs)) {
		if exist == nil {
			break
		}
		p := t.procs[topic]
		var ice *kafka.IdentityChangedError
		var gap *kafka.GapError
		switch ferr := p.failure(); {
		case errors.As(ferr, &gap):
			errs = append(errs, p.gapped(gap)...)
			continue
		case errors.As(ferr, &ice) && ice.Topic == p.topic:
			errs = append(errs, t.identityChanged(ctx, ice))
			continue
		}
		if rerr := t.refresh(ctx, p, exist); rerr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.As(rerr, &gap) { // the follower ended over it meanwhile
				errs = append(errs, p.gapped(gap)...)
				continue
			}
			if errors.As(rerr, &ice) {
				// Forgotten, so that the next refresh reads the new topic.
				if cerr := t.identityChanged(ctx, ice); ice.Topic == p.topic {
					errs = append(errs, cerr)
					continue
				}
			}
			errs = append(errs, fmt.Errorf("%s: %w", p.app, rerr))
		}
	}
	s := &Snapshot{Followed: len(t.procs)}
	for _, topic := range slices.Sorted(maps.Keys(t.procs)) {
		if st := t.procs[topic].state; st != nil {
			s.Processes = append(s.Processes, *st)
		}
	}
	slices.SortFunc(s.Processes, func(a, b Process) int { return cmp.Compare(a.App, b.App) })
	s.Taken = t.cfg.Now()
	s.RefreshDuration = s.Taken.Sub(start)
	if len(errs) == 0 {
		t.lastSuccess, t.failingSince = s.Taken, time.Time{}
	} else {
		t.errors += uint64(len(errs))
		if t.failingSince.IsZero() {
			t.failingSince = start
		}
		s.LastError = errors.Join(errs...).Error()
		if t.cfg.OnError != nil {
			for _, err := range errs {
				t.cfg.OnError(err)
			}
		}
	}
	s.LastSuccess, s.FailingSince, s.Errors, s.Diagnosed = t.lastSuccess, t.failingSince, t.errors, t.diagnosed
	t.latest.Store(s)
	return errors.Join(errs...)
}

// process is one followed changelog. The follower goroutine folds into cl
// under mu; the refresh (the tracker's goroutine) reads cl under mu and
// owns everything below the line.
type process struct {
	app, topic string
	cancel     context.CancelFunc
	done       chan struct{}

	mu    sync.Mutex
	cl    *parsley.Changelog
	dirty map[int32]bool  // partitions whose store changed since diagnosed
	moved chan struct{}   // closed (and replaced) when a read position moves
	err   error           // why the follower ended
	fol   *kafka.Follower // once open

	committed map[clock.Channel]int64
	tasks     map[int32]*cachedTask
	state     *Process
	refusals  map[parsley.Reason]int // the next start's, as of the last diagnosis; nil until first checked
	gap       *kafka.GapError        // the follower ended over it (reported once)
}

// cachedTask is a task's last diagnosis and the digest of its inputs.
type cachedTask struct {
	digest uint64
	task   Task
}

// follow starts following topic.
func (t *Tracker) follow(ctx context.Context, app, topic string) *process {
	fctx, cancel := context.WithCancel(ctx)
	p := &process{app: app, topic: topic, cancel: cancel, done: make(chan struct{}),
		cl: parsley.NewChangelog(topic, clock.TopicID{}), dirty: map[int32]bool{}, moved: make(chan struct{}),
		committed: map[clock.Channel]int64{}, tasks: map[int32]*cachedTask{}}
	go p.run(fctx, t.cfg.Client, t.cfg.ReadOptions)
	return p
}

// run follows the changelog from its log start, without end: read once to
// its end, then incrementally, only committed entries.
func (p *process) run(ctx context.Context, c *kafka.Client, opts []kafka.ReadOption) {
	defer close(p.done)
	sels := []kafka.TopicSel{{Topic: p.topic, Partition: kafka.AllPartitions}}
	spec := kafka.OffsetSpec{Start: kafka.Bound{Kind: kafka.BoundLogStart}, End: kafka.Bound{Kind: kafka.BoundLogEnd}}
	fol, err := c.Follow(ctx, sels, spec, append([]kafka.ReadOption{kafka.RetryForever()}, opts...)...)
	if err != nil {
		p.end(err)
		return
	}
	p.mu.Lock()
	p.fol = fol
	p.mu.Unlock()
	for {
		it, err := fol.Next(ctx)
		if err != nil {
			p.end(err)
			return
		}
		p.mu.Lock()
		if p.cl.TopicID.IsZero() {
			p.cl.TopicID = it.TopicID
		}
		kafka.FoldChangelog(p.cl, it)
		if it.Kind == record.KindRecord {
			p.dirty[it.Partition] = true
		}
		// Wake a refresh waiting for positions once the batch is taken.
		if fol.Buffered() == 0 {
			close(p.moved)
			p.moved = make(chan struct{})
		}
		p.mu.Unlock()
	}
}

// gapped publishes the process as one whose changelog lost entries before
// they were read: its store cannot be rebuilt from the changelog, so none
// of it is published, only the gap. The first time it returns the error
// that says so; the process stays so until its topic is recreated.
func (p *process) gapped(gap *kafka.GapError) []error {
	text := fmt.Sprintf("offsets %d to %d of %s were deleted before the exporter read them (retention or DeleteRecords): "+
		"the store can no longer be trusted from the changelog, and the process's holds are no longer exported", gap.From, gap.To-1, gap.Channel)
	p.state = &Process{App: p.app, Changelog: p.topic, Gap: text}
	if p.gap != nil {
		return nil
	}
	p.gap = gap
	return []error{fmt.Errorf("%s: %s", p.app, text)}
}

// failure is why the follower ended (or is ending); nil while it runs.
func (p *process) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *process) end(err error) {
	p.mu.Lock()
	p.err = err
	close(p.moved)
	p.moved = make(chan struct{})
	p.mu.Unlock()
}

// ended reports whether the follower stopped (the topic deleted or
// recreated, or a fatal read error): rediscovery starts it anew.
func (p *process) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) stop() {
	p.cancel()
	<-p.done
}

// waitRead waits until every partition's read reached ends, or until
// deadline, and returns the partitions that did not: those an open
// transaction holds back. A read short of its end because the follower
// cannot read (not open yet, or retrying a failing broker for longer than
// grace) is an error naming where it is stuck, never "behind a
// transaction": the store it has is not the one the changelog holds.
func (p *process) waitRead(ctx context.Context, ends map[int32]int64, deadline time.Time, grace time.Duration) (map[int32]bool, error) {
	for {
		p.mu.Lock()
		behind := map[int32]bool{}
		for part, end := range ends {
			if !p.cl.Has(part) || p.cl.Partition(part).ReadTo < end {
				behind[part] = true
			}
		}
		moved, ferr, fol := p.moved, p.err, p.fol
		p.mu.Unlock()
		if len(behind) == 0 {
			return nil, nil
		}
		if ferr != nil {
			return nil, fmt.Errorf("following %s: %w", p.topic, ferr)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			switch {
			case fol == nil:
				return nil, fmt.Errorf("following %s: not open yet (its partitions' offsets not listed)", p.topic)
			case fol.Failing() != nil:
				// A follower that began failing within the last grace (a
				// leader that moved: it looks the leader up again and
				// goes on) gets the grace from then to catch up; one
				// failing longer fails the refresh.
				if since := fol.Retrying(); !since.IsZero() && time.Since(since) < grace {
					deadline = since.Add(grace)
					continue
				}
				return nil, fmt.Errorf("following %s: %w", p.topic, fol.Failing())
			}
			return behind, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-moved:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// moveGrace bounds how long a refresh waits for a follower that began
// failing to read again: a follower finds a moved leader within a fetch
// wait and a backoff or two (about a second), so a failure lasting longer
// is the broker's, and the refresh says so rather than wait the whole
// request timeout.
const moveGrace = 5 * time.Second

// retryGrace is moveGrace, or the request timeout when that is shorter (a
// read retries no longer before it fails).
func (t *Tracker) retryGrace() time.Duration {
	rt := t.cfg.Client.Config().RequestTimeout
	if rt <= 0 {
		rt = kafka.DefaultRequestTimeout
	}
	return min(rt, moveGrace)
}

// refresh reads one process and rebuilds its state.
func (t *Tracker) refresh(ctx context.Context, p *process, exist map[string][]int32) error {
	c := t.cfg.Client
	// The group first, then the changelog's ends, then the store read up
	// to them: a running process commits its offsets in the transactions
	// that write its store, so offsets paired with a store read past
	// where they were taken never run ahead of it.
	group, err := c.DescribeGroup(ctx, p.app)
	if err != nil {
		return err
	}
	committed, err := c.GroupOffsets(ctx, p.app)
	if errors.Is(err, kafka.ErrNoCommittedOffsets) {
		committed, err = map[clock.Channel]int64{}, nil
	}
	if err != nil {
		return err
	}
	clFacts, _, err := c.LogFacts(ctx, []kafka.TopicSel{{Topic: p.topic, Partition: kafka.AllPartitions}})
	if err != nil {
		return err
	}
	ends := map[int32]int64{}
	for ch, f := range clFacts {
		ends[ch.Partition] = kafka.StableEnd(f.LastStable, f.HighWatermark)
	}
	behind, err := p.waitRead(ctx, ends, time.Now().Add(t.cfg.TxnWait), t.retryGrace())
	if err != nil {
		return err
	}
	// A partition read short of its end keeps the offsets paired last.
	for ch, off := range committed {
		if !behind[ch.Partition] {
			p.committed[ch] = off
		}
	}
	for ch := range p.committed {
		if _, ok := committed[ch]; !ok && !behind[ch.Partition] {
			delete(p.committed, ch)
		}
	}

	// The business topics: those subscribed and those the stores bind.
	proc := inspect.NewProcess(p.app, p.cl, t.names)
	proc.Group, proc.Committed = group, p.committed
	want := proc.Subscribed()
	p.mu.Lock()
	parts := p.cl.Partitions()
	decoded := map[int32]*parsley.Task{}
	for _, part := range parts {
		if ct, ok := p.tasks[part]; ok && !p.dirty[part] {
			for _, th := range ct.task.Topics {
				want = append(want, th.Topic)
			}
			for _, ch := range ct.task.Channels {
				want = append(want, ch.Topic)
			}
			continue
		}
		st := p.cl.Partition(part).Store.Decode()
		decoded[part] = st
		for name := range st.Names {
			want = append(want, name)
		}
	}
	p.mu.Unlock()
	var sels []kafka.TopicSel
	for _, name := range slices.Compact(slices.Sorted(slices.Values(want))) {
		if _, ok := exist[name]; ok {
			sels = append(sels, kafka.TopicSel{Topic: name, Partition: kafka.AllPartitions})
		}
	}
	if len(sels) > 0 {
		facts, chans, err := c.LogFacts(ctx, sels)
		if err != nil {
			return err
		}
		proc.Facts = facts
		for _, ch := range chans {
			proc.Learn(ch.Topic, ch.TopicID, ch.Partition)
		}
	}

	gd := groupDigest(group)
	st := &Process{App: p.app, Changelog: p.topic, GroupState: group.State, Members: len(group.Members)}
	now := t.cfg.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := len(p.tasks) != len(parts) || p.refusals == nil
	for _, part := range parts {
		st.EntriesRead += p.cl.Partition(part).Entries
		d := taskDigest(part, gd, proc, behind[part])
		ct, ok := p.tasks[part]
		if !ok || p.dirty[part] || ct.digest != d {
			changed = true
			dt, err := inspect.DiagnoseTask(proc, part, now)
			if err != nil {
				return err
			}
			t.diagnosed++
			ct = &cachedTask{digest: d, task: taskOf(proc, dt, behind[part])}
			p.tasks[part] = ct
			delete(p.dirty, part)
			changed = true
		}
		st.Tasks = append(st.Tasks, ct.task)
	}
	// The next start's refusals read every store, the group and the
	// topics' partition counts: checked again when a task's inputs moved
	// (a digest holds the counts), so that partitions added to a received
	// topic are seen as TASK_WIDTH_CHANGED at once.
	if changed {
		p.refusals = map[parsley.Reason]int{}
		for _, r := range proc.NextStart(nil) {
			p.refusals[r.Reason]++
		}
	}
	st.StartRefusals = p.refusals
	p.state = st
	return nil
}

// groupDigest digests what of a group a task's diagnosis reads: the
// members' subscriptions and assignments.
func groupDigest(g *parsley.Group) uint64 {
	h := fnv.New64a()
	for _, m := range g.Members {
		fmt.Fprintln(h, m.MemberID, m.Subscription)
		for _, topic := range slices.Sorted(maps.Keys(m.Assignment)) {
			fmt.Fprintln(h, topic, m.Assignment[topic])
		}
	}
	return h.Sum64()
}

// taskDigest digests task part's inputs besides its store: the group, and
// the committed offsets and log facts of the channels of partition part.
func taskDigest(part int32, group uint64, p *inspect.Process, behind bool) uint64 {
	h := fnv.New64a()
	fmt.Fprintln(h, group, behind)
	var lines []string
	for ch, off := range p.Committed {
		if ch.Partition == part {
			lines = append(lines, "c "+ch.Topic.String()+" "+strconv.FormatInt(off, 10))
		}
	}
	for ch, f := range p.Facts {
		if ch.Partition == part {
			lines = append(lines, fmt.Sprintf("f %s %d %d %d %d", ch.Topic, f.LogStart, f.LastStable, f.HighWatermark, len(f.OpenTransactions)))
		}
	}
	for name, n := range p.Counts {
		lines = append(lines, fmt.Sprintf("n %s %s %d", name, p.IDs[name], n))
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Fprintln(h, l)
	}
	return h.Sum64()
}

// taskOf turns a task's diagnosis into what the snapshot keeps of it.
func taskOf(p *inspect.Process, dt *inspect.Task, behind bool) Task {
	t := Task{Task: dt.State.Task, Assigned: dt.AssignedTo != "", Heads: map[inspect.Cause]int{},
		Corrupt: len(dt.State.Corrupt), BehindTransaction: behind || dt.Read.BehindTransaction()}
	topics := map[string]*TopicHolds{}
	for _, c := range dt.State.Channels {
		if len(c.Held) == 0 {
			continue
		}
		name := topicName(p.Names, c.Channel.Topic)
		th := topics[name]
		if th == nil {
			th = &TopicHolds{Topic: name}
			topics[name] = th
		}
		th.Held += len(c.Held)
		for _, h := range c.Held {
			if h.Record.Timestamp < 0 {
				continue
			}
			if ts := time.UnixMilli(h.Record.Timestamp); th.OldestWritten.IsZero() || ts.Before(th.OldestWritten) {
				th.OldestWritten = ts
			}
		}
	}
	// Every topic of the scope has its count, 0 included, so that graphs
	// and alerts see a series before the first hold.
	for _, ch := range dt.Scope {
		if name := topicName(p.Names, ch.Topic); topics[name] == nil {
			topics[name] = &TopicHolds{Topic: name}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		t.Topics = append(t.Topics, *topics[name])
	}
	for _, h := range dt.Report.Heads {
		t.Heads[h.Cause]++
	}
	if len(dt.Ready) > 0 {
		t.Heads[inspect.CauseReady] += len(dt.Ready)
	}
	for _, ch := range dt.Scope {
		row := Channel{Topic: topicName(p.Names, ch.Topic), Partition: ch.Partition, FedLag: -1, CommittedLag: -1}
		f, ok := p.Facts[ch]
		if !ok {
			t.Channels = append(t.Channels, row)
			continue
		}
		end := kafka.StableEnd(f.LastStable, f.HighWatermark)
		if c := dt.State.Channel(ch); c != nil && c.FedUpTo >= 0 && end >= 0 {
			row.FedLag = max(end-(c.FedUpTo+1), 0)
		}
		if off, ok := p.Committed[ch]; ok && off >= 0 && end >= 0 {
			row.CommittedLag = max(end-off, 0)
		}
		t.Channels = append(t.Channels, row)
	}
	slices.SortFunc(t.Channels, func(a, b Channel) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return t
}

// topicName is a topic's name, or its UUID when none is known.
func topicName(n *clock.Names, id clock.TopicID) string {
	if name, ok := n.Name(id); ok {
		return name
	}
	return id.String()
}
