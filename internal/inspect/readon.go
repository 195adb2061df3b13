package inspect

import (
	"slices"
	"strconv"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// ReadOn is a task's gate seeded from its store and read on from its
// process's committed offsets to the log end (process.Attach.ReadOn):
// what the process does next. It is what tells a held head that delivers
// once the process reads what is in the log (lagging, and it will catch
// up) from one that stays held however far it reads, and a task that
// fails closed on the next record it reads from one that is only behind.
type ReadOn struct {
	// Gate is the task's gate after the read.
	Gate *gate.Gate
	// Written returns the timestamp of a record the read held.
	Written func(ch clock.Channel, offset int64) (time.Time, bool)
	// Failed is the record the gate failed closed on, nil when none: the
	// task reads nothing past it, as Parsley's does not.
	Failed *FailedClosed
	// Records counts the records read.
	Records int64
	// Held are the records the read held, with the bytes their persisted
	// form takes in the changelog (at least: key, value and headers).
	Held []HeldRead
	// First is, by channel, the first record the read met: the record at
	// the read position, whose timestamp starts the retention clock.
	First map[clock.Channel]FirstRead
	// CutShort says the read stopped at its bound
	// (process.ReadOnOptions.MaxRecords) before the log end: the task
	// holds at least what it shows, and what lies past is not read
	// (PARTIAL).
	CutShort bool
}

// HeldRead is a record a read on held and the size of its persisted form.
type HeldRead struct {
	Channel clock.Channel
	Offset  int64
	Bytes   int64
}

// FirstRead is the first record read on a channel: its offset and its
// timestamp (ms since the epoch; HasTimestamp false when it had none).
type FirstRead struct {
	Offset       int64
	Timestamp    int64
	HasTimestamp bool
}

// FailedClosed is the record a task's gate failed closed on: Parsley stops
// the task there (no restart passes it: the start refusal is
// UNDECODABLE_METADATA), and holds --undecodable=hold shows what it would
// hold behind it.
type FailedClosed struct {
	Channel clock.Channel
	Offset  int64
	// Code is the reason code (SPEC §2: truncated, unknown-version, …).
	Code gate.Code
	// Detail is the decoder's words.
	Detail string
}

// Reasons that reading on resolves: a head held for one of them at its
// root delivers once the process reads what is in the log, unless the
// read failed closed first.
func resolvedByReading(c Cause) bool {
	switch c {
	case CauseLagging, CauseOpenTransaction, CauseNotReceived, CauseBeyondInput, CauseHeld:
		return true
	}
	return false
}

// readOn makes the read's diagnosis the task's (DiagnoseTask): its heads
// are those the read still holds, each with its true root, found past
// what the store alone knows; a store head the read delivered is catching
// up, no head; and when the read failed closed, every head whose root
// waits on reading further has the failed record as its root.
func (t *Task) readOn(p *Process, on *ReadOn, now time.Time) {
	t.ReadOn = on
	written := func(ch clock.Channel, offset int64) (time.Time, bool) {
		if ts, ok := HeldTimestamp(t.State, ch, offset); ok {
			return ts, true
		}
		if on.Written != nil {
			return on.Written(ch, offset)
		}
		return time.Time{}, false
	}
	next := Diagnose(Input{
		Gate:      on.Gate,
		Names:     p.Names,
		Facts:     Facts{Log: p.LogFacts, Deleted: p.TopicDeleted},
		Timestamp: written,
		Sizes: func(ch clock.Channel, offset int64) (int, int, []HeaderSize, bool) {
			return HeldSizes(t.State, ch, offset)
		},
		Now:           now,
		RetentionWarn: p.RetentionWarn,
	})
	// The read's heads are the task's: each stays held however far the
	// process reads now, and its diagnosis tells why. A store head the
	// read delivered is no head: the process delivers it once it reads
	// what is already in the log (CatchingUp).
	// Only a head held for what reading resolves catches up: one the
	// log facts say never delivers by reading (truncated, not-a-record,
	// beyond-log-end, …) keeps the store's diagnosis even when the read,
	// which seeds at the committed offsets as a restart does, delivered
	// it — the running process does not.
	heads := next.Heads
	seen := map[clock.Channel]bool{}
	for _, h := range heads {
		seen[h.At] = true
	}
	t.CatchingUp = map[clock.Channel]int64{}
	for _, c := range t.State.Channels {
		if len(c.Held) == 0 || t.Ready[c.Channel] {
			continue
		}
		if h, ok := on.Gate.Head(c.Channel); ok && h.Offset == c.Held[0].Offset {
			continue // still held: the read's head tells why
		}
		switch sh := t.Heads[c.Channel]; {
		case sh != nil && !resolvedByReading(sh.Cause) && !seen[sh.At]:
			heads = append(heads, *sh)
			seen[sh.At] = true
		default:
			t.CatchingUp[c.Channel] = c.Held[0].Offset
		}
	}
	labels := &Labels{Names: p.Names}
	slices.SortStableFunc(heads, func(a, b Head) int { return labels.Compare(a.At, b.At) })
	if f := on.Failed; f != nil {
		at := p.Names.Channel(f.Channel)
		step := FailedClosedStep(at, f)
		for i := range heads {
			StoppedAt(&heads[i], at, f.Offset, step)
		}
	}
	t.Report = regroup(t.Report, heads)
	t.Report.RecordsHeld = int64(t.State.HeldCount()) // held now: the store's
	t.Heads = map[clock.Channel]*Head{}
	for i := range t.Report.Heads {
		t.Heads[t.Report.Heads[i].At] = &t.Report.Heads[i]
	}
}

// StoppedAt is head h of a gate that failed closed at the record
// at@offset, which reads nothing past it: the one rule of the diagnosis of
// every task failed closed (read on, DiagnoseTask, or live, the view). A
// head held for what reading resolves waits for good: its cause is
// undecodable — but a head held by another held head stays held, its
// root saying what that one waits on — and a root that waits on reading
// further is the failed record, with step as its next step.
func StoppedAt(h *Head, at string, offset int64, step string) {
	if h.Cause != CauseHeld && resolvedByReading(h.Cause) {
		h.Cause = CauseUndecodable
	}
	if resolvedByReading(h.RootCause) {
		h.Root, h.RootOffset, h.RootCause, h.NextStep = at, offset, CauseUndecodable, step
	}
}

// FailedClosedStep is the advice for a task failed closed at f, on the
// channel written at.
func FailedClosedStep(at string, f *FailedClosed) string {
	return at + "@" + strconv.FormatInt(f.Offset, 10) + " has an undecodable parsley.causes header (" + string(f.Code) +
		"): the task fails closed there and reads nothing past it, and no restart passes it (UNDECODABLE_METADATA); " +
		"fix its writer, then move the process past the record deliberately (a reset, docs/refusals.md); " +
		"causalctl holds --app … --undecodable hold shows what it would hold behind it"
}

// regroup is rep with heads instead of its own, the roots grouped anew
// from the heads' roots, in the order of their first head.
func regroup(rep *Report, heads []Head) *Report {
	out := &Report{Now: rep.Now, RecordsHeld: rep.RecordsHeld, Heads: heads, Cycles: rep.Cycles}
	at := map[string]int{}
	for i := range heads {
		h := &heads[i]
		key := h.Root + "@" + strconv.FormatInt(h.RootOffset, 10)
		k, ok := at[key]
		if !ok {
			k = len(out.Roots)
			at[key] = k
			out.Roots = append(out.Roots, Root{Channel: h.Root, Offset: h.RootOffset, Cause: h.RootCause, NextStep: h.NextStep})
			if h.RootCause == CauseCycle {
				out.Roots[k].Cycle = h.Cycle
			}
		}
		out.Roots[k].Heads = append(out.Roots[k].Heads, h.Channel+"@"+strconv.FormatInt(h.Offset, 10))
	}
	rootsFirst(out.Roots)
	return out
}

// DefaultReadOnMaxRecords bounds a read on by default
// (process.ReadOnOptions): a process millions of records behind its log
// ends is read so far and said to be PARTIAL (ReadOn.CutShort) rather
// than read for minutes at every processes run or exporter refresh. Every
// command reads on with this bound unless told otherwise
// (--read-on-max-records), so state, holds --app, processes and the
// exporter agree on the same process.
const DefaultReadOnMaxRecords = 1_000_000

// ReadOnCutShort says some task's read on stopped at its bound before the
// log end (ReadOn.CutShort): what the process shows is PARTIAL.
func (p *Process) ReadOnCutShort() bool {
	for _, on := range p.ReadOn {
		if on.CutShort {
			return true
		}
	}
	return false
}

// ReadOnPartialWarning is what state and holds --app say on stderr when the
// read on was cut short (ReadOnCutShort); "" when it was not.
func (p *Process) ReadOnPartialWarning() string {
	if !p.ReadOnCutShort() {
		return ""
	}
	return "PARTIAL: the read on from the committed offsets stopped at its bound before the log end (processes and the exporter: --read-on-max-records); what is shown is what was read, at least what the process holds"
}
