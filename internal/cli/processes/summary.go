package processes

import (
	"maps"
	"slices"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
)

// Where a process's received topics come from.
const (
	fromSubscription = inspect.ScopeSubscription
	fromState        = inspect.ScopeState
)

// row is one process, summarised: all that is kept of it once read.
type row struct {
	App       string
	Changelog string
	Tasks     int32
	// Err is why the process could not be read; the rest is then empty.
	Err error

	Group        *parsley.Group // nil when not read
	Receives     []string
	ReceivesFrom string

	HeldRecords int
	HeldHeads   int
	// Oldest is the age of the oldest held record of known time; Dated
	// says one was. Undated counts held records of unknown time.
	Oldest  time.Duration
	Dated   bool
	Undated int
	Causes  map[inspect.Cause]int

	// MaxLag is the largest lag of a committed offset behind its log's
	// end (last stable offset), on LagChannel; LagKnown says one was
	// known.
	MaxLag     int64
	LagChannel string
	LagKnown   bool

	NextStart *render.NextStart // nil when not read
	Corrupt   int
}

// olderThan says whether the process holds a record written at least d
// ago, or one whose time is unknown: it cannot be ruled out, so it is not
// dropped.
func (r *row) olderThan(d time.Duration) bool {
	return r.Undated > 0 || (r.Dated && r.Oldest >= d)
}

// summarise diagnoses every task of p (read from changelog, of tasks
// partitions) and keeps what a row shows.
func summarise(changelog string, tasks int32, p *inspect.Process, err error, now time.Time) row {
	r := row{Changelog: changelog, Tasks: tasks, Err: err, Causes: map[inspect.Cause]int{}}
	r.App, _ = parsley.AppOf(changelog)
	if err != nil {
		return r
	}
	r.Group = p.Group
	var states []*parsley.Task
	bound := map[string]bool{}
	for _, part := range p.Changelog.Partitions() {
		t, err := inspect.DiagnoseTask(p, part, now)
		if err != nil {
			return row{App: r.App, Changelog: changelog, Tasks: tasks, Err: err}
		}
		states = append(states, t.State)
		r.Corrupt += len(t.State.Corrupt)
		for name := range t.State.Names {
			bound[name] = true
		}
		for _, c := range t.State.Channels {
			if len(c.Held) == 0 {
				continue
			}
			r.HeldHeads++
			r.HeldRecords += len(c.Held)
			r.Causes[headCause(t, c)]++
			for _, h := range c.Held {
				if h.Record.Timestamp < 0 {
					r.Undated++
					continue
				}
				age := now.Sub(time.UnixMilli(h.Record.Timestamp))
				if !r.Dated || age > r.Oldest {
					r.Oldest, r.Dated = age, true
				}
			}
		}
	}
	if sub := p.Subscribed(); sub != nil {
		r.Receives, r.ReceivesFrom = sub, fromSubscription
	} else {
		r.Receives, r.ReceivesFrom = slices.Sorted(maps.Keys(bound)), fromState
	}
	for _, ch := range slices.SortedFunc(maps.Keys(p.Committed), clock.Channel.Compare) {
		f, ok := p.Facts[ch]
		if !ok {
			continue
		}
		if lag := max(f.StableEnd()-p.Committed[ch], 0); !r.LagKnown || lag > r.MaxLag {
			r.MaxLag, r.LagChannel, r.LagKnown = lag, p.Names.Channel(ch), true
		}
	}
	r.NextStart = render.NextStartOf(p, p.NextStart(nil))
	return r
}

// headCause is a held head's cause as state reports it: ready when the
// seeded gate delivered it at once (or no longer holds it as a head),
// else the diagnosis's.
func headCause(t *inspect.Task, c *parsley.Channel) inspect.Cause {
	dh := t.Heads[c.Channel]
	if t.Ready[c.Channel] || dh == nil || dh.Offset != c.Held[0].Offset {
		return inspect.CauseReady
	}
	return dh.Cause
}
