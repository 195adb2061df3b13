// Package live runs the delivery gate as a read-only shadow node over a feed
// that never ends — a kafka.Follower — and publishes what it sees: snapshots
// for the TUI of `watch` and `demo`, and a plain status line for output that
// is not a terminal.
//
// One goroutine owns the gate (a engine.Replayer) and a view.Events: it
// feeds them the items a reader goroutine takes from the Source, and about
// ten times a second builds a view.Snapshot and offers it on a channel
// that holds one. A consumer that falls behind misses snapshots, never
// records: the newest snapshot replaces an unread one, so the gate never
// waits for the screen.
package live

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/view"
)

// Source is a feed of capture items that never ends by itself, and knows
// how far each channel's log reaches. *kafka.Follower is one.
type Source interface {
	// Next returns the next item, waiting as long as it takes; it returns
	// ctx's error once ctx is done.
	Next(ctx context.Context) (*record.Item, error)
	// LogEnds returns the current end of each channel's log (the last
	// stable offset); it is called from another goroutine than Next.
	LogEnds() map[clock.Channel]int64
}

// A Source that also says since when it has been failing to read and
// retrying (zero while it reads) makes snapshots say so:
// engine.StateDisconnected. *kafka.Follower is one.
type retryingSource interface {
	Retrying() time.Time
}

// A Source that also reports how many items it holds ready lets the
// reader hand them on in batches, one per fetch.
type bufferedSource interface {
	Buffered() int
}

// A Source that also knows each channel's high watermark (the end of its
// log, committed or not) has it shown in snapshots beside the log end.
// *kafka.Follower is one.
type highWatermarkSource interface {
	HighWatermarks() map[clock.Channel]int64
}

// Defaults of Config.
const (
	DefaultInterval   = 100 * time.Millisecond // ten snapshots a second
	DefaultRecent     = 50
	DefaultStampEvery = time.Second
	maxBatch          = 1024
)

// Config sets up a Driver.
type Config struct {
	// Replay configures the gate: the scope (every channel the Source
	// yields must be in it, or its records are skipped), start positions,
	// the undecodable mode, names.
	Replay engine.Config
	// Title and Source are shown in snapshots, e.g. "causalctl watch" and
	// the brokers.
	Title, Source string
	// Interval is the time between snapshots (default DefaultInterval).
	Interval time.Duration
	// Recent is how many recent events a snapshot lists (default
	// DefaultRecent).
	Recent int
	// Now reads the wall clock (default time.Now): hold ages and rates.
	Now func() time.Time
	// StampEvery is how often snapshots recompute the node's stamp, whose
	// cost grows with the whole scope's clocks (default DefaultStampEvery;
	// negative: every snapshot). See view.SnapshotOptions.
	StampEvery time.Duration
	// Caps of the snapshots (see view.SnapshotOptions); zero means the
	// default.
	MaxRows, MaxHeads, MaxClockEntries, MaxStampEntries int

	// Tasks runs one gate per Parsley task (engine.NewTasks): task p
	// receives partition p of every channel in Replay.Scope, and snapshots
	// say each row's and head's task (view.SnapshotOfTasks). The caps
	// apply per task.
	Tasks bool
	// Seeds, when not nil, are the tasks' starting states (implies Tasks;
	// Replay.Scope and Replay.Starts must be empty): the --app attach.
	// The heads the seeded gates deliver at once are delivered when Run
	// starts.
	Seeds []engine.TaskSeed
	// SeedWritten gives a seeded held record's timestamp (from the
	// store), for its age since written; nil leaves it unknown.
	SeedWritten func(ch clock.Channel, offset int64) (time.Time, bool)
	// SeedDeleted says a seeded channel's topic is gone from the cluster
	// (inspect.Process.TopicDeleted): a blocker on it is deleted, as every
	// other reading of the process classifies it; nil knows of none.
	SeedDeleted func(ch clock.Channel) bool

	// OnGap, when set, is called on the driver's goroutine with each gap
	// item (a read with kafka.AllowGaps passing offsets deleted before
	// they were read), once per gap, as it is fed. The snapshots' recent
	// events list each gap whether or not it is set.
	OnGap func(*record.Item)
}

// Driver feeds a gate from a Source on its own goroutine and publishes
// snapshots of it. Make one with New, start it with Run.
type Driver struct {
	src Source
	cfg Config
	r   *engine.Replayer
	tr  *view.Events
	// With Config.Tasks: the tasks' gates, and a tracker for each (trs[i]
	// serves ts.Tasks[i]); r and tr are then nil.
	ts       *engine.Tasks
	trs      []*view.Events
	emitTask func(*engine.Task, *engine.Event) error
	failed   int32 // the task of the item fed last
	// down are the tasks whose gate failed closed while others read on
	// (Config.Tasks), as Parsley stops a task and runs the others.
	down map[int32]bool
	rate view.RateMeter
	emit func(*engine.Event) error
	at   time.Time // when the items being fed arrived

	snaps   chan view.Snapshot
	stopped chan struct{}
	// taskStopped is closed when the first task fails closed while the
	// others read on (TaskFailed).
	taskStopped chan struct{}

	mu      sync.Mutex
	latest  view.Snapshot
	have    bool // latest is set
	status  Status
	err     error // what stopped the feed
	taskErr error // the first task failed closed while the others read on
	// taskErrs are the failures of the tasks in down, by task.
	taskErrs map[int32]error
	summary  *inspect.Summary
	ran      bool
}

// New returns a Driver over src; it reads nothing until Run.
func New(src Source, cfg Config) (*Driver, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Recent == 0 {
		cfg.Recent = DefaultRecent
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StampEvery == 0 {
		cfg.StampEvery = DefaultStampEvery
	}
	if cfg.Replay.Names == nil {
		cfg.Replay.Names = &clock.Names{}
	}
	d := &Driver{
		src:         src,
		cfg:         cfg,
		snaps:       make(chan view.Snapshot, 1),
		stopped:     make(chan struct{}),
		taskStopped: make(chan struct{}),
	}
	if cfg.Tasks || cfg.Seeds != nil {
		return d, d.newTasks()
	}
	r, err := engine.New(cfg.Replay)
	if err != nil {
		return nil, err
	}
	d.r, d.tr = r, view.NewEvents(cfg.Recent)
	d.emit = func(ev *engine.Event) error {
		d.tr.Observe(ev, d.at)
		return nil
	}
	return d, nil
}

// newTasks sets up the per-task gates, their trackers told of the seeded
// hold queues.
func (d *Driver) newTasks() error {
	ts, err := engine.NewTasks(d.cfg.Replay, d.cfg.Seeds)
	if err != nil {
		return err
	}
	d.ts = ts
	at := d.cfg.Now()
	byNum := map[int32]*view.Events{}
	for _, task := range ts.Tasks {
		tr := view.NewEvents(d.cfg.Recent)
		d.trs = append(d.trs, tr)
		byNum[task.Task] = tr
	}
	for _, seed := range d.cfg.Seeds {
		tr := byNum[seed.Task]
		if tr == nil {
			continue
		}
		for _, cs := range seed.State {
			for _, h := range cs.Held {
				var written time.Time
				if d.cfg.SeedWritten != nil {
					written, _ = d.cfg.SeedWritten(cs.Channel, h.Offset)
				}
				tr.SeedHold(cs.Channel, h.Offset, at, written)
			}
		}
	}
	d.emitTask = func(task *engine.Task, ev *engine.Event) error {
		byNum[task.Task].Observe(ev, d.at)
		return nil
	}
	return nil
}

// feed gives one item to the gate of its task, or the one gate.
func (d *Driver) feed(it *record.Item) error {
	if d.ts != nil {
		if d.down[it.Partition] {
			return nil // its task failed closed: it reads nothing past the record
		}
		d.failed = it.Partition
		return d.ts.Feed(it, d.emitTask)
	}
	return d.r.Feed(it, d.emit)
}

// observeGap tells the tracker of the gap's channel (its task's, with
// tasks) and Config.OnGap of a gap item.
func (d *Driver) observeGap(it *record.Item) {
	ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
	tr := d.tr
	if d.ts != nil {
		tr = nil
		for i, task := range d.ts.Tasks {
			if task.Task == it.Partition {
				tr = d.trs[i]
			}
		}
	}
	if tr != nil {
		tr.ObserveGap(ch, it.Gap.From, it.Gap.To, d.at)
	}
	if d.cfg.OnGap != nil {
		d.cfg.OnGap(it)
	}
}

// Snapshots returns the channel snapshots are published on, at most one
// per Interval. It holds one snapshot: an unread one is replaced by the
// next. After the last snapshot, taken when Run stops, it is closed.
func (d *Driver) Snapshots() <-chan view.Snapshot { return d.snaps }

// Stopped is closed when the feed stops before Run does: the gate failed
// closed, or the Source failed (see Err). The driver goes on publishing
// snapshots — the held heads keep ageing — until Run's context is done.
func (d *Driver) Stopped() <-chan struct{} { return d.stopped }

// Err returns what stopped the feed: a *engine.InputError for which
// engine.FailureOf reports true when the gate failed closed, another
// *engine.InputError for an item the gate could not place, or the Source's
// error; nil while it runs.
func (d *Driver) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Latest returns the latest snapshot published, for readers besides the
// one taking them from Snapshots (the metrics endpoint); false before the
// first. Every caller gets the same snapshot: it must not be changed.
func (d *Driver) Latest() (view.Snapshot, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.latest, d.have
}

// Status returns the status as of the latest snapshot (the zero Status
// before the first).
func (d *Driver) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.status
}

// Summary returns the replay summary of the gate (SPEC §5's summary
// object) as Run left it, with the failure when the gate failed closed;
// nil until Run has returned.
func (d *Driver) Summary() *inspect.Summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.summary
}

type batch struct {
	items []*record.Item
	err   error
}

// Run reads and feeds until ctx is done, then publishes a last snapshot,
// closes the snapshot channel and returns once its reader goroutine has
// ended. It returns nil, or what stopped the feed (as Err). Run may be
// called once.
func (d *Driver) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.ran {
		d.mu.Unlock()
		return errors.New("live: Run called twice")
	}
	d.ran = true
	d.mu.Unlock()

	readCtx, stopReading := context.WithCancel(ctx)
	items := make(chan batch, 8)
	var wg sync.WaitGroup
	wg.Go(func() { d.read(readCtx, items) })
	defer wg.Wait()
	defer stopReading()

	tick := time.NewTicker(d.cfg.Interval)
	defer tick.Stop()
	feed := (<-chan batch)(items)
	if d.ts != nil {
		// The seeded heads that deliver at once come first.
		d.at = d.cfg.Now()
		if err := d.ts.Flush(d.emitTask); err != nil {
			d.stop(err)
			stopReading()
			feed = nil
		}
	}
	d.publish(engine.StateRunning)
	for {
		select {
		case <-ctx.Done():
			return d.finish()
		case <-tick.C:
			d.publish(engine.StateRunning)
		case b := <-feed:
			d.at = d.cfg.Now()
			for _, it := range b.items {
				if it.Gap != nil {
					d.observeGap(it)
				}
				if err := d.feed(it); err != nil {
					if d.stopTask(err) {
						continue
					}
					b.err = err
					break
				}
			}
			if b.err != nil && ctx.Err() == nil {
				d.stop(b.err)
				stopReading()
				feed = nil
			}
		}
	}
}

// read takes items from the source and hands them on in batches: all the
// source holds ready, or one at a time from a source that cannot say.
func (d *Driver) read(ctx context.Context, out chan<- batch) {
	bs, canBatch := d.src.(bufferedSource)
	var b []*record.Item
	send := func(x batch) bool {
		select {
		case out <- x:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		it, err := d.src.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				send(batch{items: b, err: err})
			}
			return
		}
		b = append(b, it)
		if !canBatch || len(b) >= maxBatch || bs.Buffered() == 0 {
			if !send(batch{items: b}) {
				return
			}
			b = nil
		}
	}
}

// stopTask stops the task of the item fed last when its gate failed
// closed (err, an InputError with a code) and another task still reads:
// per-task gates fail closed one by one, as Parsley's tasks do (the
// process's other tasks run on, process.ReadOn reads them on), so the
// view shows every task as state and holds --app tell it. It reports
// whether the feed goes on.
func (d *Driver) stopTask(err error) bool {
	var ie *engine.InputError
	if d.ts == nil || !errors.As(err, &ie) || ie.Code == "" || len(d.down)+1 >= len(d.ts.Tasks) {
		return false
	}
	for i, task := range d.ts.Tasks {
		if task.Task == d.failed {
			d.trs[i].Stop(err, d.cfg.Now())
		}
	}
	if d.down == nil {
		d.down = map[int32]bool{}
	}
	d.down[d.failed] = true
	d.mu.Lock()
	if d.taskErr == nil {
		d.taskErr = err
		close(d.taskStopped)
	}
	if d.taskErrs == nil {
		d.taskErrs = map[int32]error{}
	}
	d.taskErrs[d.failed] = err
	d.mu.Unlock()
	return true
}

// TaskStopped is closed when the first task fails closed while the others
// read on (TaskFailed says how); Stopped is closed only once every task
// has.
func (d *Driver) TaskStopped() <-chan struct{} { return d.taskStopped }

// TaskFailed returns the failure of the first task that failed closed
// while the others read on (Config.Tasks, stopTask), nil when none: the
// feed goes on, Err stays nil until it stops.
func (d *Driver) TaskFailed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.taskErr
}

func (d *Driver) stop(err error) {
	now := d.cfg.Now()
	if d.tr != nil {
		d.tr.Stop(err, now)
	}
	var ie *engine.InputError
	for i, tr := range d.trs {
		// An item the gate failed on is its task's; a failed feed every
		// task's.
		if !errors.As(err, &ie) || d.ts.Tasks[i].Task == d.failed {
			tr.Stop(err, now)
		}
	}
	d.mu.Lock()
	d.err = err
	d.mu.Unlock()
	close(d.stopped)
}

func (d *Driver) finish() error {
	s := d.snapshot(engine.StateFinished)
	d.offer(s)
	close(d.snaps)
	ends, hws := d.src.LogEnds(), d.highWatermarks()
	var sum *inspect.Summary
	if d.ts != nil {
		// One summary of many gates: each task's, merged as replay
		// --tasks merges them; the failure is the failed task's.
		var nums []int32
		var sums []*inspect.Summary
		for _, task := range d.ts.Tasks {
			ts := inspect.SummaryOf(task.Replayer, d.facts(task.Replayer, ends, hws))
			if task.Gate().Failed() != nil {
				d.mu.Lock()
				err, ok := d.taskErrs[task.Task]
				d.mu.Unlock()
				if !ok {
					err = d.Err()
				}
				ts.SetFailure(err)
			}
			nums, sums = append(nums, task.Task), append(sums, ts)
		}
		sum = inspect.MergeTasks(nums, sums)
	} else {
		sum = inspect.SummaryOf(d.r, d.facts(d.r, ends, hws))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sum.SetFailure(d.err)
	d.summary = sum
	return d.err
}

func (d *Driver) highWatermarks() map[clock.Channel]int64 {
	if hs, ok := d.src.(highWatermarkSource); ok {
		return hs.HighWatermarks()
	}
	return nil
}

// facts are the log facts the classifier reads live: those the source
// gave when it opened (log start, retention, open transactions), with the
// last stable offset and high watermark it reports now.
func (d *Driver) facts(r *engine.Replayer, ends, hws map[clock.Channel]int64) inspect.Facts {
	return inspect.Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) {
		end, ok := ends[ch]
		opened, have := r.LogFacts(ch)
		if !ok {
			return opened, have
		}
		lf := record.LogFacts{LastStable: end, HighWatermark: end}
		if have {
			lf = *opened
			lf.LastStable = max(lf.LastStable, end)
		}
		if hw, ok := hws[ch]; ok {
			lf.HighWatermark = hw
		}
		lf.HighWatermark = max(lf.HighWatermark, lf.LastStable)
		return &lf, true
	}}
}

func (d *Driver) snapshot(state engine.RunState) view.Snapshot {
	ends := d.src.LogEnds()
	hws := d.highWatermarks()
	now := d.cfg.Now()
	opts := view.SnapshotOptions{
		Title:           d.cfg.Title,
		Source:          d.cfg.Source,
		State:           state,
		Now:             now,
		Events:          d.tr,
		Rates:           &d.rate,
		LogEnd:          func(ch clock.Channel) (int64, bool) { e, ok := ends[ch]; return e, ok },
		HighWatermark:   func(ch clock.Channel) (int64, bool) { e, ok := hws[ch]; return e, ok },
		StampEvery:      max(d.cfg.StampEvery, 0),
		MaxRows:         d.cfg.MaxRows,
		MaxHeads:        d.cfg.MaxHeads,
		MaxClockEntries: d.cfg.MaxClockEntries,
		MaxStampEntries: d.cfg.MaxStampEntries,
	}
	var s view.Snapshot
	if d.ts != nil {
		// Every task's log facts are those its own replayer was given.
		opts.Facts = inspect.Facts{Log: func(ch clock.Channel) (*record.LogFacts, bool) {
			task := d.ts.Task(ch.Partition)
			if task == nil {
				return nil, false
			}
			return d.facts(task.Replayer, ends, hws).Log(ch)
		}, Deleted: d.cfg.SeedDeleted}
		s = view.SnapshotOfTasks(d.ts, d.trs, opts)
	} else {
		opts.Facts = d.facts(d.r, ends, hws)
		s = view.SnapshotOf(d.r, opts)
	}
	if rs, ok := d.src.(retryingSource); ok && s.State == engine.StateRunning {
		if since := rs.Retrying(); !since.IsZero() {
			s.State, s.RetryingFor = engine.StateDisconnected, max(now.Sub(since), 0)
		}
	}
	return s
}

func (d *Driver) publish(state engine.RunState) {
	d.offer(d.snapshot(state))
}

// offer publishes s, replacing an unread snapshot. Only the driver's
// goroutine sends, so after emptying the one-slot channel the send cannot
// block.
func (d *Driver) offer(s view.Snapshot) {
	st := StatusOf(&s)
	d.mu.Lock()
	d.status = st
	d.latest, d.have = s, true
	d.mu.Unlock()
	select {
	case d.snaps <- s:
	default:
		select {
		case <-d.snaps:
		default:
		}
		d.snaps <- s
	}
}

// Status is the one-line summary of a live gate: what a status line shows.
type Status struct {
	State engine.RunState
	// RetryingFor is how long the feed has been unable to reach its
	// brokers, in the StateDisconnected state.
	RetryingFor time.Duration
	// Scope is the number of channels in scope.
	Scope int
	// Counters of the gate (view.Snapshot's).
	Received, Delivered, Dropped, Held int64
	// HeldChannels counts channels with a non-empty hold queue.
	HeldChannels int
	// OldestHold is the age of the oldest held head.
	OldestHold inspect.Age
	// Causes counts the held heads by their own cause (inspect's one
	// classifier), as "beyond-log-end:1,held:2", the most telling cause
	// first; "" when nothing is held.
	Causes string
	// RecvRate and DeliverRate are records per second.
	RecvRate, DeliverRate float64
	// Lag is how far the node is behind the log ends, in offsets summed
	// over its channels (transaction markers count): what consumer-lag
	// tools show. LagKnown is false while no log end is known.
	Lag      int64
	LagKnown bool
	// Failure is where the gate failed closed; Err the error that stopped
	// the feed otherwise.
	Failure *inspect.Failure
	Err     string
	// Tasks are the per-task gates' held heads and records, by rising
	// task number; nil for one gate.
	Tasks []TaskStatus
}

// TaskStatus is one task's part of a Status.
type TaskStatus struct {
	Task int32
	// Heads counts the task's held heads (its channels with a non-empty
	// hold queue), Held its held records.
	Heads int
	Held  int64
}

// StatusOf sums up a snapshot. Lag counts the rows the snapshot has.
func StatusOf(s *view.Snapshot) Status {
	st := Status{
		State:        s.State,
		RetryingFor:  s.RetryingFor,
		Scope:        s.Scope,
		Received:     s.Received,
		Delivered:    s.Delivered,
		Dropped:      s.Dropped,
		Held:         s.Held,
		HeldChannels: s.HeldChannels,
		OldestHold:   s.OldestHold,
		Causes:       causeCounts(s),
		RecvRate:     s.RecvRate,
		DeliverRate:  s.DeliverRate,
		Failure:      s.Failure,
		Err:          s.Err,
	}
	for _, t := range s.Tasks {
		st.Tasks = append(st.Tasks, TaskStatus{Task: t.Task, Heads: t.HeldChannels, Held: t.Held})
	}
	for _, row := range s.Channels {
		if row.LogEnd < 0 {
			continue
		}
		st.LagKnown = true
		st.Lag += max(row.LogEnd-(row.ReceivedUpTo+1), 0)
	}
	return st
}

// String is the one status line of causalctl — `watch` in a pipe, `demo`
// without its view — as logfmt key=value fields, no escape sequence, e.g.
//
//	state=running scope=40 received=1200 delivered=1180 dropped=0 held=20 held_channels=3 oldest_hold=1.2s in=950/s out=940/s lag=12
//
// Held heads add causes= after oldest_hold. Per-task gates add, after
// scope, tasks= (how many) and task_heads= and task_held=, each task's
// held heads and records as TASK:N, e.g. task_heads=0:1,1:0,2:2.
// A failed gate adds code= and
// at= after the state; a stopped feed adds
// error= at the end; lag= is left out while no log end is known.
func (s Status) String() string {
	var b strings.Builder
	field := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	if s.State == engine.StateDisconnected {
		field("state", strconv.Quote(view.Retrying(s.RetryingFor))) // logfmt's quoting
	} else {
		field("state", strings.ReplaceAll(view.StateText(s.State), " ", "-"))
	}
	if s.Failure != nil {
		field("code", s.Failure.Code)
		field("at", s.Failure.Channel+"@"+strconv.FormatInt(s.Failure.Offset, 10))
	}
	field("scope", strconv.Itoa(s.Scope))
	if s.Tasks != nil {
		heads := make([]string, len(s.Tasks))
		held := make([]string, len(s.Tasks))
		for i, t := range s.Tasks {
			num := strconv.Itoa(int(t.Task)) + ":"
			heads[i], held[i] = num+strconv.Itoa(t.Heads), num+strconv.FormatInt(t.Held, 10)
		}
		field("tasks", strconv.Itoa(len(s.Tasks)))
		field("task_heads", strings.Join(heads, ","))
		field("task_held", strings.Join(held, ","))
	}
	field("received", strconv.FormatInt(s.Received, 10))
	field("delivered", strconv.FormatInt(s.Delivered, 10))
	field("dropped", strconv.FormatInt(s.Dropped, 10))
	field("held", strconv.FormatInt(s.Held, 10))
	field("held_channels", strconv.Itoa(s.HeldChannels))
	field("oldest_hold", view.AgeText(s.OldestHold))
	if s.Causes != "" {
		field("causes", s.Causes)
	}
	field("in", strconv.FormatFloat(s.RecvRate, 'f', 0, 64)+"/s")
	field("out", strconv.FormatFloat(s.DeliverRate, 'f', 0, 64)+"/s")
	if s.LagKnown {
		field("lag", strconv.FormatInt(s.Lag, 10))
	}
	if s.State == engine.StateError && s.Err != "" {
		field("error", strconv.Quote(strings.ReplaceAll(s.Err, "\n", " ")))
	}
	return b.String()
}

// causeCounts counts heads by their own cause, the most telling first:
// "beyond-log-end:1,held:2"; "" when none is held.
func causeCounts(s *view.Snapshot) string {
	var parts []string
	for _, c := range s.CauseCounts() {
		parts = append(parts, c.Cause.String()+":"+strconv.Itoa(c.N))
	}
	return strings.Join(parts, ",")
}
