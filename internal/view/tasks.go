package view

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
)

// TaskRow is one task of a per-task snapshot: its gate's counters.
type TaskRow struct {
	Task                         int32
	Scope                        int // channels in the task's scope
	Received, Delivered, Dropped int64
	Held                         int64
	HeldChannels                 int
	OldestHold                   inspect.Age
}

// SnapshotOfTasks describes per-task gates as one snapshot: each task's
// gate is described as SnapshotOf does (events[i] serves ts.Tasks[i]),
// the rows and heads said with their task, task after task, and the
// counters summed, with one TaskRow per task. The caps of opts apply per
// task. A task that failed closed or stopped with an error makes the
// snapshot's state its own (the first such task).
func SnapshotOfTasks(ts *engine.Tasks, events []*Events, opts SnapshotOptions) Snapshot {
	rates := opts.Rates
	opts.Rates = nil // measured once over the sums
	out := Snapshot{
		Title:    opts.Title,
		Source:   opts.Source,
		State:    opts.State,
		Taken:    opts.Now,
		Offline:  opts.Offline,
		Skipped:  ts.Skipped(),
		Cycles:   [][]string{},
		Channels: []ChannelRow{},
		Heads:    []HeadDetail{},
		Tasks:    make([]TaskRow, 0, len(ts.Tasks)),
	}
	if opts.Position != nil {
		p := *opts.Position
		out.Position = &p
	}
	var stamps []string
	recentCap := 0
	for i, task := range ts.Tasks {
		var tr *Events
		if i < len(events) {
			tr = events[i]
		}
		o := opts
		o.Events = tr
		s := SnapshotOf(task.Replayer, o)
		if out.Failure == nil && out.Err == "" && (s.State == engine.StateFailedClosed || s.State == engine.StateError) {
			out.State, out.Failure, out.Err = s.State, s.Failure, s.Err
		}
		out.Tasks = append(out.Tasks, TaskRow{Task: task.Task, Scope: s.Scope, Received: s.Received, Delivered: s.Delivered,
			Dropped: s.Dropped, Held: s.Held, HeldChannels: s.HeldChannels, OldestHold: s.OldestHold})
		out.Scope += s.Scope
		out.Received += s.Received
		out.Delivered += s.Delivered
		out.Dropped += s.Dropped
		out.Held += s.Held
		out.HeldChannels += s.HeldChannels
		out.RowsOmitted += s.RowsOmitted
		out.HeadsOmitted += s.HeadsOmitted
		out.StampEntries += s.StampEntries
		if s.OldestHold.Known && (!out.OldestHold.Known || s.OldestHold.D > out.OldestHold.D) {
			out.OldestHold = s.OldestHold
		}
		base := len(out.Heads)
		for _, row := range s.Channels {
			row.Task = task.Task
			if row.Head >= 0 {
				row.Head += base
			}
			out.Channels = append(out.Channels, row)
		}
		for _, h := range s.Heads {
			h.Task = task.Task
			out.Heads = append(out.Heads, h)
		}
		out.Cycles = append(out.Cycles, s.Cycles...)
		stamps = append(stamps, "task "+strconv.Itoa(int(task.Task))+" "+s.Stamp)
		out.Recent = append(out.Recent, s.Recent...)
		recentCap = max(recentCap, len(s.Recent))
	}
	out.Stamp = strings.Join(stamps, "; ")
	// The tasks' recent events, interleaved by time, as many as one
	// Events keeps.
	slices.SortStableFunc(out.Recent, func(a, b RecentEvent) int { return a.At.Compare(b.At) })
	out.Recent = CollapseRepeats(out.Recent)
	if len(out.Recent) > recentCap {
		out.Recent = slices.Clone(out.Recent[len(out.Recent)-recentCap:])
	}
	if rates != nil && !opts.Now.IsZero() {
		out.RecvRate, out.DeliverRate = rates.Sample(opts.Now, out.Received, out.Delivered)
	}
	return out
}

// SeedHold tells the Events of a record its gate holds without a hold
// event having been observed: a record of a seeded hold queue
// (engine.Config.Seed), held since at and written at written (zero when
// unknown). Call it before observing any event of the channel, head
// first.
func (t *Events) SeedHold(ch clock.Channel, offset int64, at, written time.Time) {
	if t.holds == nil {
		t.holds = map[clock.Channel]*holdQueue{}
	}
	q := t.holds[ch]
	if q == nil {
		q = &holdQueue{}
		t.holds[ch] = q
	}
	q.offs = append(q.offs, offset)
	q.ats = append(q.ats, unixNano(at))
	q.tss = append(q.tss, unixNano(written))
	t.nHolds++
}
