package inspect

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// NextStartOK is the next start of a process no start check refuses
// (ProcessSummary.NextStart).
const NextStartOK = "ok"

// ProcessSummary is one Parsley process, summarised: all that is kept of
// it once read — a row of `causalctl processes` and of the live view's
// process list.
type ProcessSummary struct {
	App       string
	Changelog string
	Tasks     int32
	// Err is why the process could not be read; the rest is then empty.
	Err error

	Group        *record.Group // nil when not read
	Receives     []string
	ReceivesFrom string

	HeldRecords int
	HeldHeads   int
	// Oldest is the age of the oldest held record of known time; Dated
	// says one was. Undated counts held records of unknown time.
	Oldest  time.Duration
	Dated   bool
	Undated int
	Causes  map[Cause]int

	// MaxLag is the largest lag of a committed offset behind its log's
	// end (last stable offset), on LagChannel; LagKnown says one was
	// known.
	MaxLag     int64
	LagChannel string
	LagKnown   bool

	NextStart  string // NextStartOK or the first refusal's reason
	NextDetail string // the first refusal's detail
	// Refusals are every refusal of the next start (Process.NextStart),
	// and ChannelNames the names of the channels they name.
	Refusals     []parsley.Refusal
	ChannelNames map[clock.Channel]string
	Corrupt      int
	// FailedClosed are the records its tasks fail closed on when read on
	// from the committed offsets, one per failed task, by task.
	FailedClosed []FailedClosed
	// Ready counts the store's heads nothing blocks any more: the
	// process delivers them as soon as its task runs (no held heads).
	Ready int
	// CatchingUp counts the store's heads that reading on delivers: held
	// now, delivered once the process reads what is already in the log
	// (Task.CatchingUp); they are no held heads.
	CatchingUp int
	// WaitsOn are the topics its held heads' blockers are on, sorted:
	// those another process may write (blockers held in this process
	// itself are left out: their own chains reach the others).
	WaitsOn []string
	// Retention are the retention clocks of its read positions
	// (Process.RetentionClocks).
	Retention []RetentionClock
	// Warnings are the next start's warnings (Process.StartWarnings).
	Warnings []parsley.Warning
	// ReadOnPartial says the read on from the committed offsets stopped
	// at its bound before the log end (Process.ReadOnCutShort): the
	// counts are of what was read, at least what it holds (PARTIAL).
	ReadOnPartial bool
}

// RetentionLeft is the clock that runs out first: passed first, else the
// least time left; nil when none runs.
func (r *ProcessSummary) RetentionLeft() *RetentionClock {
	var least *RetentionClock
	for i := range r.Retention {
		c := &r.Retention[i]
		switch {
		case least == nil, c.Passed() && !least.Passed():
			least = c
		case c.Passed() != least.Passed():
		case c.Known && (!least.Known || c.Left < least.Left):
			least = c
		}
	}
	return least
}

// OlderThan says whether the process holds a record written at least d
// ago, or one whose time is unknown: it cannot be ruled out, so it is not
// dropped.
func (r *ProcessSummary) OlderThan(d time.Duration) bool {
	return r.Undated > 0 || (r.Dated && r.Oldest >= d)
}

// SummarizeProcess diagnoses every task of p (read from changelog, of
// tasks partitions; err when it could not be read) and keeps what a row
// shows.
func SummarizeProcess(changelog string, tasks int32, p *Process, err error, now time.Time) ProcessSummary {
	if err != nil {
		r := ProcessSummary{Changelog: changelog, Tasks: tasks, Err: err, Causes: map[Cause]int{}}
		r.App, _ = parsley.AppOf(changelog)
		return r
	}
	var diagnosed []*Task
	for _, part := range p.Changelog.Partitions() {
		t, err := DiagnoseTask(p, part, now)
		if err != nil {
			r := ProcessSummary{Changelog: changelog, Tasks: tasks, Err: err}
			r.App, _ = parsley.AppOf(changelog)
			return r
		}
		diagnosed = append(diagnosed, t)
	}
	return SummarizeDiagnosed(changelog, tasks, p, diagnosed, now)
}

// SummarizeDiagnosed is SummarizeProcess for a caller that has diagnosed
// every task of p already (DiagnoseTask at now, in partition order), so
// that they are not diagnosed twice.
func SummarizeDiagnosed(changelog string, tasks int32, p *Process, diagnosed []*Task, now time.Time) ProcessSummary {
	r := ProcessSummary{Changelog: changelog, Tasks: tasks, Causes: map[Cause]int{}}
	r.App, _ = parsley.AppOf(changelog)
	r.Group = p.Group
	r.ReadOnPartial = p.ReadOnCutShort()
	bound := map[string]bool{}
	var waits []string
	for _, t := range diagnosed {
		r.Corrupt += len(t.State.Corrupt)
		if f := t.FailedClosed(); f != nil {
			r.FailedClosed = append(r.FailedClosed, *f)
		}
		r.CatchingUp += len(t.CatchingUp)
		for name := range t.State.Names {
			bound[name] = true
		}
		waits = append(waits, t.Report.WaitsOn()...)
		for cause, n := range t.HeadCauses() {
			r.Causes[cause] += n
			r.HeldHeads += n
		}
		r.Ready += len(t.Ready)
		for _, c := range t.State.Channels {
			r.HeldRecords += len(c.Held)
			for _, h := range c.Held {
				written, ok := record.TimeOf(h.Record.Timestamp)
				if !ok {
					r.Undated++
					continue
				}
				age := now.Sub(written)
				if !r.Dated || age > r.Oldest {
					r.Oldest, r.Dated = age, true
				}
			}
		}
	}
	slices.Sort(waits)
	r.WaitsOn = slices.Compact(waits)
	if sub := p.Subscribed(); sub != nil {
		r.Receives, r.ReceivesFrom = sub, ScopeSubscription
	} else {
		r.Receives, r.ReceivesFrom = slices.Sorted(maps.Keys(bound)), ScopeState
	}
	for _, ch := range slices.SortedFunc(maps.Keys(p.Committed), clock.Channel.Compare) {
		f, ok := p.Facts[ch]
		if !ok {
			continue
		}
		if lag := f.CommittedLag(p.Committed[ch]); lag >= 0 && (!r.LagKnown || lag > r.MaxLag) {
			r.MaxLag, r.LagChannel, r.LagKnown = lag, p.Names.Channel(ch), true
		}
	}
	r.ChannelNames = map[clock.Channel]string{}
	r.Retention = p.RetentionClocks(now)
	r.Warnings = p.StartWarnings(nil)
	for _, c := range r.Retention {
		r.ChannelNames[c.Channel] = p.Names.Channel(c.Channel)
	}
	r.NextStart = NextStartOK
	r.Refusals = p.NextStart(nil)
	for _, rf := range r.Refusals {
		for _, ch := range rf.Channels {
			r.ChannelNames[ch] = p.Names.Channel(ch)
		}
	}
	if len(r.Refusals) > 0 {
		r.NextStart, r.NextDetail = string(r.Refusals[0].Reason), r.Refusals[0].Detail
	}
	return r
}

// HeadCauses counts the task's held heads (Report.Heads) by their own
// cause: the one rule every count of a process's heads uses (state,
// processes, the exporter, holds --app, watch --app). Ready heads (the
// store's heads nothing blocks any more: Ready) and heads catching up
// (CatchingUp) are no held heads; they are counted apart.
func (t *Task) HeadCauses() map[Cause]int {
	out := map[Cause]int{}
	for _, h := range t.Report.Heads {
		out[h.Cause]++
	}
	return out
}

// WaitsOn are the topics the report's heads' blockers are on, blockers
// held in the same gate left out (their own chains are in the report),
// each once, sorted: where the gate waits for another writer.
func (r *Report) WaitsOn() []string {
	var out []string
	for _, h := range r.Heads {
		for _, b := range h.Blockers {
			if b.Cause == CauseHeld || b.Cause == CauseCycle {
				continue
			}
			if i := strings.LastIndexByte(b.Channel, '/'); i > 0 {
				out = append(out, b.Channel[:i])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
