package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// Attach is a Parsley process read for shadowing: each task's gate state
// from its store, and where each channel is read on from.
type Attach struct {
	Process *inspect.Process
	// Seeds are the tasks' states, by task; Tasks the same for the
	// replayer.
	Seeds []*inspect.TaskSeed
	Tasks []engine.TaskSeed
	// Channels are the channels to read (every task's scope that the
	// cluster has), Starts where each is read from: the group's committed
	// offset, else fed-up-to + 1.
	Channels []clock.Channel
	Starts   map[clock.Channel]int64
	// Fed is each channel's fed-up-to as the state has it.
	Fed map[clock.Channel]int64
	// Warnings say where the committed offsets do not match the state.
	Warnings []string
	// Missing say, once read on (ReadOn), which records the read found
	// below fed-up-to that the state lacks (MissingWarnings).
	Missing []string
}

// ReadAttach reads process app (ReadProcess) and seeds its tasks. A
// committed offset ahead of fed-up-to + 1 is a warning: the records
// between were consumed and never fed to the state, and the shadow reads
// on from the committed offset, as the process will. One behind is
// reported once the read shows records missing from the state
// (MissingWarnings).
func ReadAttach(ctx context.Context, cl *kafka.Client, app string, txnWait time.Duration, names *clock.Names) (*Attach, error) {
	if _, err := cl.Topics(ctx); err != nil {
		return nil, err
	}
	if err := mergeNames(names, cl.Names()); err != nil {
		return nil, err
	}
	p, err := Read(ctx, cl, app, "", txnWait, names)
	if err != nil {
		return nil, err
	}
	a, err := Seed(p)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Seed seeds the tasks of p (read by Read) from their stores: each task's
// gate state, and where each channel the cluster has is read on from —
// the group's committed offset, else fed-up-to + 1. A committed offset
// ahead of fed-up-to + 1 is a warning (the records between were consumed
// and never fed to the state); one behind is told once a read shows
// records missing from the state (MissingWarnings).
func Seed(p *inspect.Process) (*Attach, error) {
	a := &Attach{Process: p, Starts: map[clock.Channel]int64{}, Fed: map[clock.Channel]int64{}}
	for _, part := range p.Changelog.Partitions() {
		seed, err := inspect.SeedTask(p, part)
		if err != nil {
			return nil, err
		}
		a.Seeds = append(a.Seeds, seed)
		// A task's gate holds partition part only (SPEC §6); a store
		// naming another partition's channel is not this task's scope.
		var state = seed.Channels[:0:0]
		for _, cs := range seed.Channels {
			if cs.Channel.Partition == part {
				state = append(state, cs)
			}
		}
		a.Tasks = append(a.Tasks, engine.TaskSeed{Task: part, State: state})
		for _, cs := range state {
			ch := cs.Channel
			a.Fed[ch] = cs.Fed
			name, ok := p.Names.Name(ch.Topic)
			if n, exists := p.Counts[name]; !ok || !exists || p.IDs[name] != ch.Topic || ch.Partition >= n {
				continue // not in the cluster (deleted): seeded, never read
			}
			a.Channels = append(a.Channels, ch)
			start := cs.Fed + 1
			if off, ok := p.Committed[ch]; ok {
				if off > start {
					a.Warnings = append(a.Warnings, fmt.Sprintf("task %d: %s: committed offset %d is ahead of fed-up-to %s + 1: offsets %d…%d were consumed and never fed to the state; reading on from %d, as the process will",
						part, p.Names.Channel(ch), off, fedText(cs.Fed), start, off-1, off))
				}
				start = off
			}
			a.Starts[ch] = max(start, 0)
		}
	}
	return a, nil
}

func fedText(fed int64) string {
	if fed < 0 {
		return "none"
	}
	return fmt.Sprint(fed)
}

// Sels are the topic selections that read a's channels.
func (a *Attach) Sels() []kafka.TopicSel {
	sels := make([]kafka.TopicSel, 0, len(a.Channels))
	for _, ch := range a.Channels {
		name, _ := a.Process.Names.Name(ch.Topic)
		sels = append(sels, kafka.TopicSel{Topic: name, Partition: ch.Partition})
	}
	return sels
}

// OpenRange opens the range from a's starts to the log end, with log
// facts, on cl.
func (a *Attach) OpenRange(ctx context.Context, cl *kafka.Client) (*kafka.Range, error) {
	if len(a.Channels) == 0 {
		return kafka.EmptyRange(), nil // every topic it binds is gone: nothing to read on
	}
	spec := kafka.OffsetSpec{Start: kafka.Bound{Kind: kafka.BoundLogStart}, End: kafka.Bound{Kind: kafka.BoundLogEnd}}
	return cl.OpenRange(ctx, a.Sels(), spec, kafka.WithStarts(a.Starts), kafka.WithLogFacts())
}

// mergeNames adds the broker's names to the command's (--topic-id ones);
// a conflict means the user named a topic wrongly.
func mergeNames(dst, src *clock.Names) error {
	for _, name := range src.All() {
		id, _ := src.ID(name)
		if err := dst.Add(name, id); err != nil {
			return fmt.Errorf("--topic-id disagrees with the broker: %w", err)
		}
	}
	return nil
}

// MissingWarnings says, per channel, which records the read found below
// fed-up-to that the state should hold and does not: the committed
// offset was behind fed-up-to + 1 and the state lost them. They were not
// fed.
func (a *Attach) MissingWarnings(ts *engine.Tasks) []string {
	var out []string
	for _, task := range ts.Tasks {
		by := map[clock.Channel][]int64{}
		var order []clock.Channel
		for _, m := range task.Missing() {
			if _, ok := by[m.Channel]; !ok {
				order = append(order, m.Channel)
			}
			by[m.Channel] = append(by[m.Channel], m.Offset)
		}
		for _, ch := range order {
			offs := by[ch]
			list := make([]string, 0, min(len(offs), 5))
			for _, o := range offs[:min(len(offs), 5)] {
				list = append(list, fmt.Sprint(o))
			}
			if len(offs) > 5 {
				list = append(list, "…")
			}
			out = append(out, fmt.Sprintf("task %d: %s: committed offset %d is behind fed-up-to %d + 1 and the state lacks %d %s read below it (%s): not fed",
				task.Task, a.Process.Names.Channel(ch), a.Starts[ch], a.Fed[ch], len(offs), plural(len(offs), "record", "records"), strings.Join(list, ", ")))
		}
	}
	slices.Sort(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// SeedWritten returns a seeded held record's timestamp, from the store of
// its task.
func (a *Attach) SeedWritten(ch clock.Channel, offset int64) (time.Time, bool) {
	for _, s := range a.Seeds {
		if s.State != nil && s.State.Task == ch.Partition {
			return inspect.HeldTimestamp(s.State, ch, offset)
		}
	}
	return time.Time{}, false
}

// ReadOnOptions bound a read on and set its gates' options.
type ReadOnOptions struct {
	// MaxRecords stops the read after that many records of the process,
	// over all its tasks (0: inspect.DefaultReadOnMaxRecords; negative: to the
	// log end): a process further behind is reported as read so far,
	// each task still short of its log end marked CutShort.
	MaxRecords int64
	// Undecodable, ReceiptOnly and MaxHeaderSize are the gates' options
	// (engine.Config): the default fails a task closed on an undecodable
	// header, as Parsley does; gate.UndecodableHold holds it as a head
	// that never delivers, to show what the task would hold behind it.
	Undecodable   gate.UndecodableMode
	ReceiptOnly   bool
	MaxHeaderSize int
}

// bound is the most records a read on reads; 0: no bound.
func (o ReadOnOptions) bound() int64 {
	switch {
	case o.MaxRecords == 0:
		return inspect.DefaultReadOnMaxRecords
	case o.MaxRecords < 0:
		return 0
	}
	return o.MaxRecords
}

// ReadOnBound is the ReadOnOptions.MaxRecords of a --read-on-max-records
// value, whose 0 reads to the log end.
func ReadOnBound(flag int64) int64 {
	if flag == 0 {
		return -1
	}
	return flag
}

// ReadOn reads every task of a on from where the process resumes (the
// group's committed offsets, else fed-up-to + 1) to the log end listed
// when it opens, through each task's gate seeded from its store, as the
// process will read it: what it delivers next, what stays held and why,
// and whether a task fails closed on the next record it reads. A task
// whose gate fails closed reads nothing more (Parsley's stops there); the
// others read on. The result is the process's ReadOn, by task. Broker
// errors end the read (a *kafka.RangeError names the channel and its
// position).
func (a *Attach) ReadOn(ctx context.Context, cl *kafka.Client, opts ReadOnOptions) (map[int32]*inspect.ReadOn, error) {
	return a.ReadOnFrom(func() (ItemSource, error) {
		// A resume position below the log start reads on from the log
		// start: the records between are lost to the process, which its
		// next start reports (POSITIONS_DISCARDED_UNREAD); what lies past
		// them is still what it reads next.
		on := *a
		on.Starts = maps.Clone(a.Starts)
		for ch, start := range on.Starts {
			if lf, ok := a.Process.Facts[ch]; ok && lf.LogStart > start {
				on.Starts[ch] = lf.LogStart
			}
		}
		rng, err := on.OpenRange(ctx, cl)
		if err != nil {
			return nil, err
		}
		return func() (*record.Item, error) { return rng.Next(ctx) }, nil
	}, opts)
}

// ItemSource yields the items of a read on, io.EOF at its end.
type ItemSource func() (*record.Item, error)

// ReadOnFrom is ReadOn over the items open yields (called only when a
// task holds a channel to read on): the one feeding of a read on, from
// the cluster or from a scenario's items (testdata/inspect).
func (a *Attach) ReadOnFrom(open func() (ItemSource, error), opts ReadOnOptions) (map[int32]*inspect.ReadOn, error) {
	p := a.Process
	if !slices.ContainsFunc(a.Tasks, func(t engine.TaskSeed) bool { return len(t.State) > 0 }) {
		return map[int32]*inspect.ReadOn{}, nil // no task holds a channel: nothing to read on
	}
	ts, err := engine.NewTasks(engine.Config{Names: p.Names, Undecodable: opts.Undecodable, ReceiptOnly: opts.ReceiptOnly, MaxHeaderSize: opts.MaxHeaderSize}, a.Tasks)
	if err != nil {
		return nil, err
	}
	out := map[int32]*inspect.ReadOn{}
	written := map[int32]map[heldAt]time.Time{}
	for _, t := range ts.Tasks {
		w := map[heldAt]time.Time{}
		written[t.Task] = w
		out[t.Task] = &inspect.ReadOn{Gate: t.Gate(), Written: func(ch clock.Channel, off int64) (time.Time, bool) {
			at, ok := w[heldAt{ch, off}]
			return at, ok
		}}
	}
	emit := func(t *engine.Task, ev *engine.Event) error {
		w := written[t.Task]
		switch {
		case ev.Type == engine.EventHold && ev.HasTimestamp:
			w[heldAt{ev.Channel, ev.Offset}] = time.UnixMilli(ev.Timestamp)
		case ev.Type == engine.EventDeliver:
			delete(w, heldAt{ev.Channel, ev.Offset})
		}
		return nil
	}
	if err := ts.Flush(emit); err != nil {
		return nil, err
	}
	if len(a.Channels) == 0 {
		return out, nil
	}
	next, err := open()
	if err != nil {
		return nil, err
	}
	bound := opts.bound()
	var records int64
	for {
		it, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t := ts.Task(it.Partition)
		if t == nil || out[t.Task].Failed != nil {
			continue
		}
		if bound > 0 && records >= bound && it.Kind == record.KindRecord {
			// The bound is met and a record a task reads lies past it:
			// the tasks still reading are cut short, said rather than
			// guessed.
			for _, on := range out {
				if on.Failed == nil {
					on.CutShort = true
				}
			}
			break
		}
		on := out[t.Task]
		ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
		if it.Kind == record.KindRecord {
			records++
			on.Records++
			if _, seen := on.First[ch]; !seen {
				if on.First == nil {
					on.First = map[clock.Channel]inspect.FirstRead{}
				}
				on.First[ch] = inspect.FirstRead{Offset: it.Offset, Timestamp: it.Timestamp, HasTimestamp: it.HasTimestamp}
			}
		}
		feed := func(ev *engine.Event) error {
			if ev.Type == engine.EventHold && ev.Channel == ch && ev.Offset == it.Offset && it.Kind == record.KindRecord {
				on.Held = append(on.Held, inspect.HeldRead{Channel: ch, Offset: it.Offset, Bytes: persistedSize(it)})
			}
			return emit(t, ev)
		}
		if err := t.Feed(it, feed); err != nil {
			ie, failed := engine.FailureOf(err)
			if !failed {
				return nil, err
			}
			out[t.Task].Failed = &inspect.FailedClosed{Channel: clock.Channel{Topic: it.TopicID, Partition: it.Partition},
				Offset: ie.Offset, Code: ie.Code, Detail: ie.Err.Error()}
		}
	}
	a.Missing = a.MissingWarnings(ts)
	return out, nil
}

// persistedSize is the size of the changelog entry holding it: its key and
// the held-record value Parsley writes (the record's key, value, headers
// and timestamp; the decoded causes, which the header already carries, are
// not counted again, so this is a lower bound).
func persistedSize(it *record.Item) int64 {
	key := parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: it.TopicID, Partition: it.Partition}, Position: it.Offset})
	val := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: it.Timestamp, Key: it.Key, Value: it.Value, Headers: it.Headers})
	return int64(len(key) + len(val))
}

// heldAt is a record by channel and offset.
type heldAt struct {
	ch  clock.Channel
	off int64
}

// ReadOnAll seeds p's tasks (Seed) and reads them on (Attach.ReadOn),
// keeping the result in p.ReadOn, which DiagnoseTask and the next start's
// check read. A process read from a capture (no group offsets) is not read
// on.
func ReadOnAll(ctx context.Context, cl *kafka.Client, p *inspect.Process, opts ReadOnOptions) error {
	if p.Captured || p.Changelog == nil {
		return nil
	}
	p.ChangelogCleanup, p.ChangelogMaxBytes = cl.ChangelogSettings(ctx, p.Changelog.Topic)
	a, err := Seed(p)
	if err != nil {
		return err
	}
	on, err := a.ReadOn(ctx, cl, opts)
	if err != nil {
		return fmt.Errorf("reading %s on from its committed offsets: %w", p.App, err)
	}
	p.ReadOn = on
	return nil
}
