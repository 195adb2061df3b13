// Package fleet follows every Parsley process of a cluster (its Refresher), for
// `causalctl exporter`: it discovers the ordering changelogs (topics named
// APP-__parsley.ordering-changelog) and on every refresh reads each
// process's group and committed offsets, reads its changelog
// read_committed on from where the last refresh stopped (from its log
// start the first time, folding into a parsley.Changelog, which keeps only
// the live store) when its end moved, lists its business topics' log
// facts, diagnoses the tasks whose store or inputs changed
// (inspect.DiagnoseTask), and publishes a Snapshot. The processes are read
// concurrently, a bounded number at once. Broker reads are read-only:
// groups are described, never joined.
package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
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
	readproc "github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/upstream"
)

// Defaults of Config.
const (
	DefaultRefresh  = 15 * time.Second
	DefaultDiscover = time.Minute
	// DefaultReaders bounds the processes read at once: each read holds
	// at most one fetch's worth of a changelog in memory.
	DefaultReaders = 16
)

// Config configures a Refresher.
type Config struct {
	// Client reads the cluster; the refresher does not close it.
	Client *kafka.Client
	// AppPrefix, when set, narrows the processes to the application ids
	// that start with it.
	AppPrefix string
	// Refresh is the interval of Run's refreshes (default DefaultRefresh);
	// Discover that of its rediscoveries (default DefaultDiscover).
	Refresh, Discover time.Duration
	// TxnWait bounds how long a changelog read may fail to make progress
	// (a broker gone, a leader moving) before the refresh gives up on the
	// process (default kafka.DefaultTxnWait). A changelog is read up to
	// its last stable offset: a task an open transaction holds below its
	// high watermark keeps its last committed offsets and is said to be
	// behind a transaction.
	TxnWait time.Duration
	// ReadOn bounds each process's read on from its committed offsets
	// (zero: the defaults, as processes and state read on); a task the
	// bound cut short is Task.ReadOnPartial.
	ReadOn readproc.ReadOnOptions
	// Readers bounds the processes whose group or changelog is read at
	// once (default DefaultReaders).
	Readers int
	// Now dates the snapshots and the ages in them (default time.Now).
	Now func() time.Time
	// Clock times how long a partition that keeps failing is asked again
	// (TxnWait) and the backoff between tries (default the wall clock).
	// Tests pass one they control.
	Clock kafka.Clock
	// OnError, when set, is called with each failed discovery's or
	// refresh's error as it fails, on the refresher's goroutine: a snapshot
	// keeps only the latest refresh's, which a quick success clears.
	OnError func(error)
	// OnRefresh, when set, is called by Run after each refresh, on the
	// refresher's goroutine, once its snapshot is published (the exporter
	// renders it then).
	OnRefresh func()
	// Fleet says who writes which topics where the cluster cannot tell
	// (the exporter's --fleet); nil: the cluster alone.
	Fleet upstream.Writers
}

// Refresher follows the processes of one cluster. Discover, Refresh and Run
// are called from one goroutine; Latest from any.
type Refresher struct {
	cfg    Config
	names  *clock.Names
	procs  map[string]*process // by changelog topic
	latest atomic.Pointer[Snapshot]

	errors       uint64
	diagnosed    uint64
	reads        uint64
	lastSuccess  time.Time
	failingSince time.Time
}

// New returns a refresher; it reads nothing until Discover or Run.
func New(cfg Config) *Refresher {
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
	if cfg.Readers <= 0 {
		cfg.Readers = DefaultReaders
	}
	if cfg.Clock == nil {
		cfg.Clock = kafka.WallClock()
	}
	return &Refresher{cfg: cfg, names: &clock.Names{}, procs: map[string]*process{}}
}

// Latest returns the latest snapshot; false before the first refresh.
func (t *Refresher) Latest() (*Snapshot, bool) {
	s := t.latest.Load()
	return s, s != nil
}

// Run discovers and refreshes at once, then refreshes every Refresh and
// rediscovers every Discover until ctx is done.
// A failed refresh or discovery is kept in the snapshot (LastError,
// Errors) and retried at the next tick; Run returns only ctx.Err().
func (t *Refresher) Run(ctx context.Context) error {
	defer t.Close()
	t.Discover(ctx)
	t.refreshed(ctx)
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
			t.refreshed(ctx)
		}
	}
}

// refreshed refreshes and tells OnRefresh.
func (t *Refresher) refreshed(ctx context.Context) {
	t.Refresh(ctx)
	if t.cfg.OnRefresh != nil && ctx.Err() == nil {
		t.cfg.OnRefresh()
	}
}

// Close forgets every process.
func (t *Refresher) Close() { clear(t.procs) }

// Discover lists the cluster's topics, starts following every ordering
// changelog not followed yet (read from its log start at the next
// refresh) and stops following those deleted. A failed listing is recorded as a refresh
// error would be, and changes nothing.
func (t *Refresher) Discover(ctx context.Context) error {
	topics, changed := t.topics(ctx)
	err := errors.Join(changed...)
	if topics == nil {
		t.fail(fmt.Errorf("discovering ordering changelogs: %w", err))
		return err
	}
	if err != nil {
		t.fail(err)
	}
	// A process whose changelog lost entries unread is kept: reading the
	// changelog again from its new log start would read a store missing
	// the deleted entries as if it were whole.
	for topic := range t.procs {
		if _, ok := topics[topic]; !ok {
			delete(t.procs, topic)
		}
	}
	for topic := range topics {
		app, ok := parsley.AppOf(topic)
		if !ok || !strings.HasPrefix(app, t.cfg.AppPrefix) || t.procs[topic] != nil {
			continue
		}
		t.procs[topic] = t.follow(app, topic)
	}
	return nil
}

// topics lists the cluster's topics. A topic deleted and recreated since
// the client learned it (a new topic ID) fails the listing with an
// identity change: it is reported (in changed), forgotten, its changelog
// followed anew from the new topic's start when it is one, and the
// listing retried. nil when the listing failed (the error last in
// changed).
func (t *Refresher) topics(ctx context.Context) (map[string][]int32, []error) {
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
		changed = append(changed, t.identityChanged(ice))
	}
	return nil, append(changed, errors.New("listing topics: too many identity changes at once"))
}

// identityChanged reports that a topic was deleted and recreated: the
// client forgets its old ID, and a changelog followed under its name is
// followed anew — a new store from the new topic's log start, never merged
// with the old one's; the old store is no longer published.
func (t *Refresher) identityChanged(ice *kafka.IdentityChangedError) error {
	t.cfg.Client.Forget(ice.Topic)
	p, ok := t.procs[ice.Topic]
	if !ok {
		return ice
	}
	t.procs[ice.Topic] = t.follow(p.app, p.topic)
	return fmt.Errorf("%s: %w: its ordering state is read anew from the new topic, never merged with the old one's", p.app, ice)
}

// fail records a failed read.
func (t *Refresher) fail(err error) {
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

// Refresh reads every followed process — its group and committed offsets,
// its changelog from where the last refresh stopped to the end listed now,
// its business topics' log facts — diagnoses the tasks whose inputs
// changed, and publishes a snapshot. The reads of different processes run
// concurrently, at most Readers at once; what can be listed for all of
// them at once (the changelogs' ends, the business topics' log facts) is,
// in one listing. A changelog whose end did not move is not read, a task
// whose store and inputs did not move is not diagnosed again. A process
// that cannot be read keeps its last state in the snapshot, and the error
// is recorded (LastError, Errors); the refresh goes on with the others.
func (t *Refresher) Refresh(ctx context.Context) error {
	start := t.cfg.Now()
	exist, errs := t.topics(ctx)
	if exist != nil {
		errs = append(errs, t.refreshAll(ctx, exist)...)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s := &Snapshot{Followed: len(t.procs)}
	for _, topic := range slices.Sorted(maps.Keys(t.procs)) {
		if st := t.procs[topic].state; st != nil {
			s.Processes = append(s.Processes, *st)
		}
	}
	slices.SortFunc(s.Processes, func(a, b Process) int { return cmp.Compare(a.App, b.App) })
	if err := t.resolveUpstream(ctx, s); err != nil {
		errs = append(errs, fmt.Errorf("finding who writes the topics the processes wait on: %w", err))
	}
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
	s.LastSuccess, s.FailingSince, s.Errors, s.Diagnosed, s.ChangelogReads = t.lastSuccess, t.failingSince, t.errors, t.diagnosed, t.reads
	t.latest.Store(s)
	return errors.Join(errs...)
}

// refreshAll refreshes every process in steps, each done for every
// process before the next begins: the groups and committed offsets, then
// the changelogs' ends, then the changelogs read on up to them — a running
// process commits its offsets in the transactions that write its store,
// so offsets paired with a store read past where they were taken never run
// ahead of it — then the business topics' log facts, then the diagnoses.
// A process whose step fails skips the later ones; the errors are
// returned, named by process.
func (t *Refresher) refreshAll(ctx context.Context, exist map[string][]int32) []error {
	c := t.cfg.Client
	var ps []*process
	var errs []error
	for _, topic := range slices.Sorted(maps.Keys(t.procs)) {
		if _, ok := exist[topic]; !ok {
			delete(t.procs, topic) // deleted since the last discovery
			continue
		}
		if p := t.procs[topic]; p.gap != nil {
			errs = append(errs, p.gapped(p.gap)...)
		} else {
			ps = append(ps, p)
		}
	}
	failed := make([]error, len(ps))
	apps := make([]string, len(ps))
	for i, p := range ps {
		apps[i] = p.app
	}
	groups := c.DescribeGroups(ctx, apps)
	t.each(ps, failed, func(p *process) error { return p.readGroup(ctx, c, groups[p.app]) })
	ends := t.changelogEnds(ctx, ps, failed)
	t.each(ps, failed, func(p *process) error { return p.readOn(ctx, c, ends[p.topic], t.listOpts()) })
	for _, p := range ps {
		t.reads += p.reads
		p.reads = 0
	}
	facts := t.businessFacts(ctx, ps, failed, exist)
	for i, p := range ps {
		if failed[i] == nil {
			failed[i] = t.rebuild(ctx, p, facts[p])
		}
	}
	for i, p := range ps {
		rerr := failed[i]
		if rerr == nil {
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		var gap *kafka.GapError
		var ice *kafka.IdentityChangedError
		if errors.As(rerr, &gap) {
			errs = append(errs, p.gapped(gap)...)
			continue
		}
		if errors.As(rerr, &ice) {
			// Forgotten, so that the next refresh reads the new topic.
			if cerr := t.identityChanged(ice); ice.Topic == p.topic {
				errs = append(errs, cerr)
				continue
			}
		}
		errs = append(errs, fmt.Errorf("%s: %w", p.app, rerr))
	}
	return errs
}

// each calls f for every process of ps whose failed entry is nil, at most
// Readers at once, and notes its error there.
func (t *Refresher) each(ps []*process, failed []error, f func(*process) error) {
	sem := make(chan struct{}, t.cfg.Readers)
	var wg sync.WaitGroup
	for i, p := range ps {
		if failed[i] != nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			failed[i] = f(p)
		})
	}
	wg.Wait()
}

// changelogEnds lists the log facts of every changelog of ps not failed,
// by topic and partition, in one listing (listFacts). When the listing
// fails otherwise than by a stuck partition (a topic deleted meanwhile,
// one the credentials may not read), or the cluster has no topic IDs
// (which key the facts, and so could not tell topics apart), each process
// is listed on its own, so that the error is its own.
func (t *Refresher) changelogEnds(ctx context.Context, ps []*process, failed []error) map[string]map[int32]*record.LogFacts {
	if l, err := t.listFacts(ctx, ps, failed, func(p *process) []string { return []string{p.topic} }); err == nil {
		if byTopic, ok := l.byTopic(); ok {
			return byTopic
		}
	}
	var mu sync.Mutex
	out := map[string]map[int32]*record.LogFacts{}
	t.each(ps, failed, func(p *process) error {
		facts, chans, err := t.cfg.Client.LogFacts(ctx, []kafka.TopicSel{{Topic: p.topic, Partition: kafka.AllPartitions}}, t.listOpts()...)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		out[p.topic] = map[int32]*record.LogFacts{}
		for _, ch := range chans {
			if f := facts[clock.Channel{Topic: ch.TopicID, Partition: ch.Partition}]; f != nil {
				out[p.topic][ch.Partition] = f
			}
		}
		return nil
	})
	return out
}

// listOpts bound a listing's retries of a failing partition by TxnWait on
// the refresher's clock.
func (t *Refresher) listOpts() []kafka.ReadOption {
	return []kafka.ReadOption{kafka.RetryFor(t.cfg.TxnWait), kafka.WithClock(t.cfg.Clock)}
}

// listFacts lists the log facts of the topics (of each process) of every
// process of ps not failed, in one listing. A partition still failing
// after TxnWait (a leader that does not settle: a *kafka.StuckError) fails
// the processes it is a topic of, and the others are listed again without
// it, at once: one stuck partition costs a refresh TxnWait, not every
// process's time.
func (t *Refresher) listFacts(ctx context.Context, ps []*process, failed []error, topics func(*process) []string) (*listed, error) {
	for {
		union := map[string]bool{}
		for i, p := range ps {
			if failed[i] == nil {
				for _, name := range topics(p) {
					union[name] = true
				}
			}
		}
		if len(union) == 0 {
			return newListed(nil, nil), nil
		}
		var sels []kafka.TopicSel
		for _, name := range slices.Sorted(maps.Keys(union)) {
			sels = append(sels, kafka.TopicSel{Topic: name, Partition: kafka.AllPartitions})
		}
		facts, chans, err := t.cfg.Client.LogFacts(ctx, sels, t.listOpts()...)
		var stuck *kafka.StuckError
		if !errors.As(err, &stuck) {
			return newListed(facts, chans), err
		}
		progress := false
		for i, p := range ps {
			if failed[i] == nil {
				if part := stuck.Of(topics(p)...); part != nil {
					failed[i], progress = part, true
				}
			}
		}
		if !progress {
			return nil, err // a stuck topic of no process: listing again would not list fewer
		}
		// Every process of a stuck topic failed: the next listing is of fewer.
	}
}

// businessFacts lists the log facts of the business topics of every
// process of ps not failed — those its group subscribes to and those its
// stores bind — in one listing (listFacts), or one per process when that
// fails.
func (t *Refresher) businessFacts(ctx context.Context, ps []*process, failed []error, exist map[string][]int32) map[*process]*listed {
	out := map[*process]*listed{}
	existing := func(p *process) []string {
		var names []string
		for _, name := range p.wanted(t.cfg.Client) {
			if _, ok := exist[name]; ok {
				names = append(names, name)
			}
		}
		return names
	}
	if all, err := t.listFacts(ctx, ps, failed, existing); err == nil {
		for i, p := range ps {
			if failed[i] == nil {
				out[p] = all
			}
		}
		return out
	}
	var mu sync.Mutex
	t.each(ps, failed, func(p *process) error {
		var sels []kafka.TopicSel
		for _, name := range existing(p) {
			sels = append(sels, kafka.TopicSel{Topic: name, Partition: kafka.AllPartitions})
		}
		if len(sels) == 0 {
			return nil
		}
		facts, chans, err := t.cfg.Client.LogFacts(ctx, sels, t.listOpts()...)
		if err != nil {
			return err
		}
		mu.Lock()
		out[p] = newListed(facts, chans)
		mu.Unlock()
		return nil
	})
	return out
}

// listed is a listing of log facts and the channels it covered.
type listed struct {
	facts   map[clock.Channel]*record.LogFacts
	chans   []kafka.RangeChannel
	ofTopic map[string][]kafka.RangeChannel // chans by topic name
}

// newListed indexes a listing's channels by topic: one listing serves
// every process, each of which wants a few of its topics.
func newListed(facts map[clock.Channel]*record.LogFacts, chans []kafka.RangeChannel) *listed {
	l := &listed{facts: facts, chans: chans, ofTopic: map[string][]kafka.RangeChannel{}}
	for _, ch := range chans {
		l.ofTopic[ch.Topic] = append(l.ofTopic[ch.Topic], ch)
	}
	return l
}

// byTopic is l's facts by topic name and partition; false when a channel
// has no topic ID or no facts.
func (l *listed) byTopic() (map[string]map[int32]*record.LogFacts, bool) {
	out := map[string]map[int32]*record.LogFacts{}
	for _, ch := range l.chans {
		f := l.facts[clock.Channel{Topic: ch.TopicID, Partition: ch.Partition}]
		if ch.TopicID.IsZero() || f == nil {
			return nil, false
		}
		if out[ch.Topic] == nil {
			out[ch.Topic] = map[int32]*record.LogFacts{}
		}
		out[ch.Topic][ch.Partition] = f
	}
	return out, true
}

// process is one followed changelog: its store as read so far, and what
// the refreshes keep of it. A refresh's reads of different processes run
// concurrently; each touches only its own process.
type process struct {
	app, topic string
	cl         *parsley.Changelog

	// Read by readGroup for the refresh in progress.
	group     *record.Group
	offsets   map[clock.Channel]int64
	behind    map[int32]bool // partitions an open transaction holds below their end
	dirty     map[int32]bool // partitions whose store changed since diagnosed
	decoded   map[int32]*parsley.Task
	reads     uint64 // changelog reads since the refresher last counted
	committed map[clock.Channel]int64
	tasks     map[int32]*cachedTask
	state     *Process
	refusals  map[parsley.Reason]int // the next start's, as of the last diagnosis; nil until first checked
	retention []RetentionClock       // the retention clocks, as of the last read on
	gap       *kafka.GapError        // the changelog lost entries before they were read (reported once)
	logStarts map[int32]int64        // each changelog partition's log start when last read on
}

// cachedTask is a task's last diagnosis and the digest of its inputs.
type cachedTask struct {
	digest uint64
	task   Task
}

// follow starts following topic: nothing is read before the next refresh.
func (t *Refresher) follow(app, topic string) *process {
	return &process{app: app, topic: topic, cl: parsley.NewChangelog(topic, clock.TopicID{}),
		dirty: map[int32]bool{}, committed: map[clock.Channel]int64{}, tasks: map[int32]*cachedTask{}, logStarts: map[int32]int64{}}
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

// readGroup describes the process's group (never joining it) unless
// described (one request for every group), and reads its committed
// offsets.
func (p *process) readGroup(ctx context.Context, c *kafka.Client, group *record.Group) error {
	if group == nil {
		var err error
		if group, err = c.DescribeGroup(ctx, p.app); err != nil {
			return err
		}
	}
	offsets, err := c.GroupOffsets(ctx, p.app)
	if errors.Is(err, kafka.ErrNoCommittedOffsets) {
		offsets, err = map[clock.Channel]int64{}, nil
	}
	if err != nil {
		return err
	}
	p.group, p.offsets = group, offsets
	return nil
}

// readOn reads the changelog on from where the last refresh stopped to
// the ends listed (facts, by partition): only the partitions whose end
// moved, and nothing when none did. A partition whose log now starts past
// where its read stopped lost entries unread: a *kafka.GapError. The
// read stops at each partition's last stable offset: a partition an open
// transaction holds below its high watermark is behind it, and keeps the
// offsets paired with its store last.
func (p *process) readOn(ctx context.Context, c *kafka.Client, facts map[int32]*record.LogFacts, retry []kafka.ReadOption) error {
	if facts == nil {
		return fmt.Errorf("listing the log facts of %s: no answer", p.topic)
	}
	var sels []kafka.TopicSel
	starts := map[clock.Channel]int64{}
	p.behind = map[int32]bool{}
	for _, part := range slices.Sorted(maps.Keys(facts)) {
		f := facts[part]
		end := kafka.StableEnd(f.LastStable, f.HighWatermark)
		p.behind[part] = f.LastStable >= 0 && f.LastStable < f.HighWatermark
		if !p.cl.Has(part) {
			sels = append(sels, kafka.TopicSel{Topic: p.topic, Partition: part})
			continue
		}
		pr := p.cl.Partition(part)
		if f.LogStart > pr.ReadTo {
			return &kafka.GapError{Channel: fmt.Sprintf("%s/%d", p.topic, part), From: pr.ReadTo, To: f.LogStart}
		}
		// Entries read before the log's start moved past them (a purge,
		// retention) are gone from the changelog: a start rebuilds the
		// store without them, and so does the exporter, as state reads it.
		if f.LogStart > p.logStarts[part] {
			if pr.Store.DropBelow(f.LogStart) > 0 {
				p.dirty[part] = true
			}
			p.logStarts[part] = f.LogStart
		}
		if pr.ReadTo < end {
			sels = append(sels, kafka.TopicSel{Topic: p.topic, Partition: part})
			starts[clock.Channel{Topic: p.cl.TopicID, Partition: part}] = pr.ReadTo
		}
	}
	if len(sels) > 0 {
		if err := p.read(ctx, c, sels, starts, retry); err != nil {
			return err
		}
	}
	for ch, off := range p.offsets {
		// Behind an open transaction the offsets paired with the store
		// last are kept; a channel with none yet takes what the group
		// has committed (an open transaction's offsets are not visible:
		// they are the store's, as state reads them), lest it look never
		// read (PARTITION_ADDED).
		if _, paired := p.committed[ch]; !p.behind[ch.Partition] || !paired {
			p.committed[ch] = off
		}
	}
	for ch := range p.committed {
		if _, ok := p.offsets[ch]; !ok && !p.behind[ch.Partition] {
			delete(p.committed, ch)
		}
	}
	// Decoded here, concurrently, so that the diagnoses read the tasks
	// already made.
	p.decoded = map[int32]*parsley.Task{}
	for _, part := range p.cl.Partitions() {
		if _, ok := p.tasks[part]; !ok || p.dirty[part] {
			p.decoded[part] = p.cl.Partition(part).Store.Decode()
		}
	}
	return nil
}

// read reads the channels sels of the changelog, from starts (the log
// start where none is given), up to their last stable offsets as listed
// when it opens, folding every committed entry into the store. retry (RetryFor, WithClock) bounds how long a channel
// may make no progress before it fails the read.
func (p *process) read(ctx context.Context, c *kafka.Client, sels []kafka.TopicSel, starts map[clock.Channel]int64, retry []kafka.ReadOption) error {
	p.reads++
	spec := kafka.OffsetSpec{Start: kafka.Bound{Kind: kafka.BoundLogStart}, End: kafka.Bound{Kind: kafka.BoundLogEnd}}
	r, err := c.OpenRange(ctx, sels, spec, append(retry, kafka.WithStarts(starts))...)
	if err != nil {
		return err
	}
	for {
		it, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var gap *kafka.GapError
			if errors.As(err, &gap) {
				return gap
			}
			return err // a *kafka.RangeError names the partition and its position
		}
		if p.cl.TopicID.IsZero() {
			p.cl.TopicID = it.TopicID
		}
		p.cl.Fold(it)
		if it.Kind == record.KindRecord {
			p.dirty[it.Partition] = true
		}
	}
}

// wanted returns the business topics whose log facts the process's
// diagnoses read: those its group subscribes to, those its stores bind
// and those its group committed offsets on (named as the client learned
// them), as
// process.Read reads them — a purged store binds nothing and a stopped
// process subscribes to nothing, while its committed offsets are what
// makes the next start ORDERING_STATE_LOST.
func (p *process) wanted(learned *kafka.Client) []string {
	var want []string
	for ch := range p.offsets {
		if name, ok := learned.TopicName(ch.Topic); ok {
			want = append(want, name)
		}
	}
	if p.group != nil {
		for _, m := range p.group.Members {
			want = append(want, m.Subscription...)
		}
	}
	for _, part := range p.cl.Partitions() {
		if st, ok := p.decoded[part]; ok {
			for name := range st.Names {
				want = append(want, name)
			}
			continue
		}
		if ct, ok := p.tasks[part]; ok {
			for _, th := range ct.task.Topics {
				want = append(want, th.Topic)
			}
			for _, ch := range ct.task.Channels {
				want = append(want, ch.Topic)
			}
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(want)))
}

// rebuild diagnoses the process's tasks whose store or inputs changed
// since their last diagnosis, from what this refresh read of it and the
// business topics' log facts (a listing of at least its wanted topics),
// and rebuilds its state.
func (t *Refresher) rebuild(ctx context.Context, p *process, l *listed) error {
	proc := inspect.NewProcess(p.app, p.cl, t.names)
	proc.Group, proc.Committed = p.group, p.committed
	if l != nil {
		for _, name := range p.wanted(t.cfg.Client) {
			for _, ch := range l.ofTopic[name] {
				k := clock.Channel{Topic: ch.TopicID, Partition: ch.Partition}
				if f := l.facts[k]; f != nil {
					proc.Facts[k] = f
				}
				proc.Learn(ch.Topic, ch.TopicID, ch.Partition)
			}
		}
	}
	parts := p.cl.Partitions()
	gd := groupDigest(p.group)
	// A task whose inputs moved is diagnosed again, read on from the
	// committed offsets as state and processes read it (readproc.ReadOnAll):
	// the whole process is read on once, when any of its tasks moved.
	for _, part := range parts {
		if ct, ok := p.tasks[part]; !ok || p.dirty[part] || ct.digest != taskDigest(part, gd, proc, p.behind[part]) {
			if err := readproc.ReadOnAll(ctx, t.cfg.Client, proc, t.cfg.ReadOn); err != nil {
				return err
			}
			break
		}
	}
	st := &Process{App: p.app, Changelog: p.topic, GroupState: p.group.State, Members: len(p.group.Members)}
	now := t.cfg.Now()
	changed := len(p.tasks) != len(parts) || p.refusals == nil
	for _, part := range parts {
		st.EntriesRead += p.cl.Partition(part).Entries
		d := taskDigest(part, gd, proc, p.behind[part])
		ct, ok := p.tasks[part]
		if !ok || p.dirty[part] || ct.digest != d {
			dt, err := inspect.DiagnoseTask(proc, part, now)
			if err != nil {
				return err
			}
			t.diagnosed++
			ct = &cachedTask{digest: d, task: taskOf(proc, dt, p.behind[part])}
			p.tasks[part] = ct
			delete(p.dirty, part)
			changed = true
		}
		st.Tasks = append(st.Tasks, ct.task)
	}
	p.decoded = nil
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
	// The retention clocks need the records read on (the timestamp at
	// each read position): taken when the process was read on, their
	// time left counted at each scrape from DeletesAt.
	if proc.ReadOn != nil {
		p.retention = nil
		for _, c := range proc.RetentionClocks(now) {
			name, _ := t.names.Name(c.Channel.Topic)
			p.retention = append(p.retention, RetentionClock{Topic: name, Partition: c.Channel.Partition, Read: c.Read,
				Headroom: c.Headroom, DeletesAt: c.DeletesAt, Known: c.Known})
		}
	}
	st.StartRefusals, st.Retention = p.refusals, p.retention
	p.state = st
	return nil
}

// groupDigest digests what of a group a task's diagnosis reads: the
// members' subscriptions and assignments.
func groupDigest(g *record.Group) uint64 {
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
// the committed offsets and log facts of the channels of partition part —
// their ends, their topic's retention settings and their open
// transactions.
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
		if ch.Partition != part {
			continue
		}
		lines = append(lines, fmt.Sprintf("f %s %d %d %d", ch.Topic, f.LogStart, f.LastStable, f.HighWatermark))
		// The topic's settings date the held records' retention headroom;
		// the open transactions name the producer a head waits on.
		if r := f.Retention; r != nil {
			lines = append(lines, fmt.Sprintf("r %s %d %d %s", ch.Topic, r.Ms, r.Bytes, r.CleanupPolicy))
		}
		for _, t := range f.OpenTransactions {
			lines = append(lines, fmt.Sprintf("t %s %d %d %d %s", ch.Topic, t.ProducerID, t.ProducerEpoch, t.FirstOffset, t.TransactionalID))
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
	t := Task{Task: dt.State.Task, Assigned: dt.AssignedTo != "", FailedClosed: dt.FailedClosed(),
		Corrupt: len(dt.State.Corrupt), BehindTransaction: behind || dt.Read.BehindTransaction(),
		ReadOnPartial: dt.ReadOn != nil && dt.ReadOn.CutShort}
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
			ts, ok := record.TimeOf(h.Record.Timestamp)
			if !ok {
				continue
			}
			if th.OldestWritten.IsZero() || ts.Before(th.OldestWritten) {
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
	t.Heads, t.Ready = dt.HeadCauses(), len(dt.Ready)
	t.WaitsOn = dt.Report.WaitsOn()
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
			row.CommittedLag = f.CommittedLag(off)
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

// resolveUpstream names each task's upstream root (Task.Upstream): the
// processes of s as the fleet's nodes, the writers of the topics their
// tasks wait on learned from the cluster and the fleet file. The tasks are
// copies of the followed state: a root is the latest refresh's.
func (t *Refresher) resolveUpstream(ctx context.Context, s *Snapshot) error {
	var nodes []upstream.Node
	var apps, waited []string
	for i := range s.Processes {
		p := &s.Processes[i]
		n := p.node()
		nodes = append(nodes, n)
		apps = append(apps, p.App)
		waited = append(waited, n.WaitsOn...)
	}
	writers := upstream.Writers{}
	if len(waited) > 0 {
		slices.Sort(waited)
		found, err := t.cfg.Client.Writers(ctx, slices.Compact(waited), apps)
		if err != nil {
			return err
		}
		writers.Merge(found)
	}
	writers.Merge(t.cfg.Fleet)
	g := upstream.New(nodes, writers)
	for i := range s.Processes {
		p := &s.Processes[i]
		p.Tasks = slices.Clone(p.Tasks)
		for j := range p.Tasks {
			task := &p.Tasks[j]
			task.Upstream = nil
			if r, ok := g.RootOf(p.App, task.WaitsOn); ok {
				task.Upstream = &r
			}
		}
	}
	return nil
}

// node is the process as the fleet's graph sees it (upstream.Facts over
// what the snapshot keeps) and the topics its tasks wait on.
func (p *Process) node() upstream.Node {
	f := upstream.Facts{Stopped: p.Members == 0}
	var waits []string
	for _, task := range p.Tasks {
		waits = append(waits, task.WaitsOn...)
		for _, c := range task.Heads {
			f.Holding = f.Holding || c > 0
		}
		if f.FailedClosed == "" && task.FailedClosed != nil {
			f.FailedClosed = string(task.FailedClosed.Code)
		}
	}
	for _, r := range parsley.Reasons() {
		if p.StartRefusals[r] > 0 {
			f.Refusal = string(r)
			break
		}
	}
	slices.Sort(waits)
	return f.Node(p.App, slices.Compact(waits))
}
