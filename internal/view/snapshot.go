package view

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
)

// Snapshot is the state of a gate and its feed at one moment, as plain
// data: every field is a value or a slice owned by the snapshot, so it may
// be handed to another goroutine (the TUI) while the gate moves on.
//
// Positions are −1 where unknown.
type Snapshot struct {
	Title  string // what is shown, e.g. "causalctl watch"
	Source string // brokers, or the capture file
	State  replay.RunState
	// Taken is SnapshotOptions.Now: when the snapshot was taken (zero
	// when unknown).
	Taken time.Time
	// Failure says where the gate failed closed (replay.StateFailedClosed).
	Failure *inspect.Failure
	// Err is the error that stopped the feed (replay.StateError).
	Err string
	// RetryingFor is how long a live feed has been unable to reach its
	// brokers, while State is replay.StateDisconnected.
	RetryingFor time.Duration

	Scope                                       int // channels in scope
	Received, Delivered, Dropped, Held, Skipped int64
	// RecvRate and DeliverRate are records per second, measured by live
	// drivers (SnapshotOptions.Rates); zero offline.
	RecvRate, DeliverRate float64
	// OldestHold is the age of the oldest held head.
	OldestHold inspect.Age
	// HeldChannels counts channels whose hold queue is not empty.
	HeldChannels int

	// Channels has one row per channel in scope, ordered by topic name (or
	// UUID when unnamed), then partition. When there are more than
	// SnapshotOptions.MaxRows, held channels are kept first and the rest
	// are cut: RowsOmitted says how many.
	Channels    []ChannelRow
	RowsOmitted int
	// Heads details every held head in row order, up to
	// SnapshotOptions.MaxHeads (HeadsOmitted counts the rest). A row finds
	// its own through ChannelRow.Head.
	Heads        []HeadDetail
	HeadsOmitted int

	// Stamp is the text form of what the node would stamp now, cut after
	// SnapshotOptions.MaxStampEntries entries; StampEntries is the full
	// count.
	Stamp        string
	StampEntries int

	// Recent are the last events (deliveries, drops, holds, the failure),
	// newest last; empty without a Tracker.
	Recent []RecentEvent
	// Cycles are the wait-graph cycles (a stamp out of contract).
	Cycles [][]string
	// Position is where a stepper stands; nil for a live feed.
	Position *replay.Position
	// Offline is set for a replay: rates and log ends do not apply.
	Offline bool
	// Tasks is one summary per task when the gates are per task
	// (SnapshotOfTasks), by rising number; nil for one gate. The rows and
	// heads then say their task.
	Tasks []TaskRow
}

// ChannelRow is one channel of the channels table.
type ChannelRow struct {
	Channel   string // NAME/PARTITION, or UUID/PARTITION when unnamed
	TopicID   string
	Partition int32
	Settled   int64
	// ReceivedUpTo is the highest position received or advanced past.
	ReceivedUpTo int64
	// LogEnd is the channel's log end offset, from SnapshotOptions.LogEnd
	// (live); −1 offline or unknown.
	LogEnd     int64
	Held       int
	HeadOffset int64 // −1 when nothing is held
	// HeadAge is how long the head has been held: since it was received
	// (live), or since its timestamp on the replay's clock (offline,
	// where a record is received at its timestamp).
	HeadAge inspect.Age
	// HeadWritten is the age of the head's record since its timestamp,
	// to SnapshotOptions.Now: the hold age `holds` reports. Live it is
	// older than HeadAge by the time the record took to reach the node;
	// unknown without a timestamp.
	HeadWritten inspect.Age
	// Blocked is set when the head is held (Held > 0).
	Blocked bool
	// Undecodable is the reason code of a head held undecodable.
	Undecodable string
	// Waits is the first blocker, e.g. "waits payments/1 ≥ 9, settled 7",
	// with " (+N)" when there are more; "" when nothing is held.
	Waits string
	// Head indexes Snapshot.Heads; −1 when not held or not detailed.
	Head int

	// HighWatermark is the end of the channel's log, committed or not,
	// from SnapshotOptions.HighWatermark (live); −1 offline or unknown.
	// LogEnd is the last stable offset: the two differ while a
	// transaction is open.
	HighWatermark int64
	// Task is the task whose gate the channel is in (SnapshotOfTasks); 0
	// for one gate.
	Task int32
}

// HeadDetail is a held head and everything that holds it: the diagnosis'
// Head (inspect.Chains.Describe, cut to the snapshot's caps) with what only
// the view shows.
//
// Of the Head, Age is ChannelRow.HeadAge (since received), Clock is cut
// after SnapshotOptions.MaxClockEntries entries, Blockers after 32, Chain
// after 16 channels (the root kept last), and NextStep, advice per root,
// is left empty.
type HeadDetail struct {
	inspect.Head
	// Written is ChannelRow.HeadWritten: the age since the record's
	// timestamp.
	Written inspect.Age
	// RootWaits says, for each held blocker of Blockers (those with a
	// Root), what the head its chain ends at waits for, as
	// ChannelRow.Waits does; "" for the others. Nil when no blocker is
	// held.
	RootWaits []string
	// Task is the head's task (SnapshotOfTasks); 0 for one gate.
	Task int32
}

// MostTelling is the more telling (Cause.Rank) of the head's own cause and
// its root cause: the root cause for a head that only waits behind another
// (held), its own when that says more — a head whose requirement lies
// beyond the log end of a channel that is itself held waits for good,
// whatever the root of its chain waits for. The live view's CAUSE column.
func (h *HeadDetail) MostTelling() inspect.Cause {
	if h.RootCause != "" && h.RootCause.Rank() < h.Cause.Rank() {
		return h.RootCause
	}
	return h.Cause
}

// RecentEvent is one line of the recent-events strip.
type RecentEvent struct {
	Kind string // deliver, drop, hold, gap, fail-closed or error
	Text string // one line, channels named
	At   time.Time
}

// Defaults of SnapshotOptions.
const (
	DefaultMaxRows         = 20000
	DefaultMaxHeads        = 2000
	DefaultMaxClockEntries = 64
	DefaultMaxStampEntries = 64
	maxBlockers            = 32
	maxChain               = 16
)

// SnapshotOptions say what a snapshot shows beyond the gate's own state.
type SnapshotOptions struct {
	Title, Source string
	// State is the feed's state. A failed gate, or a Tracker that saw the
	// feed stop, overrides it.
	State replay.RunState
	// Now is the time ages are measured to: wall time live, the latest
	// record timestamp offline. Zero leaves ages unknown.
	Now time.Time
	// Tracker supplies recent events, hold times and the stop error; nil
	// leaves them out.
	Tracker *Tracker
	// Rates, when set, measures records/s (live drivers).
	Rates *RateMeter
	// LogEnd returns a channel's log end offset (live).
	LogEnd func(clock.Channel) (int64, bool)
	// HighWatermark returns a channel's high watermark (live).
	HighWatermark func(clock.Channel) (int64, bool)
	// Facts classify blockers: log facts live, or the input's ends and
	// whether it was read to its end offline.
	Facts inspect.Facts
	// Offline marks a replay (rates and log ends do not apply).
	Offline bool
	// StampEvery, when positive, recomputes the stamp only when Now has
	// moved this far since it was last computed, and shows the last one in
	// between: the stamp joins every carried clock, the one part of a
	// snapshot whose cost grows with the clocks' entries over the whole
	// scope (about 9 ms at 10 000 channels). Live drivers over large
	// scopes pass a second; the stepper leaves it zero (every snapshot).
	// It needs a Tracker.
	StampEvery time.Duration
	// Caps; zero means the default.
	MaxRows, MaxHeads, MaxClockEntries, MaxStampEntries int
	// Position is copied into the snapshot.
	Position *replay.Position
}

// SnapshotOf describes the state of r now. It reads the gate and does not
// change it; its cost grows with the channels in scope and the held heads
// (see the caps in opts), not with the records received.
func SnapshotOf(r *replay.Replayer, opts SnapshotOptions) Snapshot {
	g := r.Gate()
	t := opts.Tracker
	if t == nil {
		t = &Tracker{}
	}
	t.lab.Names = r.Names()
	st := g.Stats()
	s := Snapshot{
		Title:     opts.Title,
		Taken:     opts.Now,
		Source:    opts.Source,
		State:     opts.State,
		Received:  st.Received,
		Delivered: st.Delivered,
		Dropped:   st.Dropped,
		Held:      st.Held,
		Skipped:   r.Skipped(),
		Offline:   opts.Offline,
		Cycles:    [][]string{},
	}
	if opts.Position != nil {
		p := *opts.Position
		s.Position = &p
	}
	if opts.Rates != nil && !opts.Now.IsZero() {
		s.RecvRate, s.DeliverRate = opts.Rates.Sample(opts.Now, st.Received, st.Delivered)
	}
	s.setStop(t, g)

	maxRows := cmp.Or(opts.MaxRows, DefaultMaxRows)
	maxHeads := cmp.Or(opts.MaxHeads, DefaultMaxHeads)
	maxClock := cmp.Or(opts.MaxClockEntries, DefaultMaxClockEntries)
	maxStamp := cmp.Or(opts.MaxStampEntries, DefaultMaxStampEntries)

	order, labels, ids := t.lab.Order(g)
	s.Scope = len(order)
	if len(order) > maxRows {
		// Keep every held channel, then fill up in display order.
		kept := make([]clock.Channel, 0, maxRows)
		for _, ch := range order {
			if len(kept) < maxRows && g.Depth(ch) > 0 {
				kept = append(kept, ch)
			}
		}
		for _, ch := range order {
			if len(kept) < maxRows && g.Depth(ch) == 0 {
				kept = append(kept, ch)
			}
		}
		slices.SortStableFunc(kept, t.lab.Compare)
		s.RowsOmitted = len(order) - len(kept)
		order, labels, ids = kept, nil, nil
	}

	rows := make([]ChannelRow, len(order))
	// The chains and rowOf (a head's row) are scratch, reused from one
	// snapshot to the next.
	c := &t.chains
	c.Reset()
	defer c.Reset() // drop the clocks and blockers until next time
	rowOf := t.rowOf[:0]
	for i, ch := range order {
		row := &rows[i]
		var label, id string
		if labels != nil {
			label, id = labels[i], ids[i]
		} else {
			label, id = t.lab.Name(ch), t.lab.TopicID(ch)
		}
		fed := g.Fed(ch)
		*row = ChannelRow{
			Channel:      label,
			TopicID:      id,
			Partition:    ch.Partition,
			Settled:      fed, // with nothing held, settled is fed (SPEC §3)
			ReceivedUpTo: fed,
			LogEnd:       -1,
			Held:         g.Depth(ch),
			HeadOffset:   -1,
			Head:         -1,
		}
		if opts.LogEnd != nil {
			if end, ok := opts.LogEnd(ch); ok {
				row.LogEnd = end
			}
		}
		row.HighWatermark = -1
		if opts.HighWatermark != nil {
			if hw, ok := opts.HighWatermark(ch); ok {
				row.HighWatermark = hw
			}
		}
		if row.Held == 0 {
			continue
		}
		row.Settled = g.Settled(ch)
		head, _ := g.Head(ch)
		row.Blocked = true
		row.HeadOffset = head.Offset
		row.Undecodable = head.Undecodable
		since, ok := t.HeldSince(ch, head.Offset)
		row.HeadAge = ageSince(since, ok, opts.Now)
		written, ok := t.Timestamp(ch, head.Offset)
		row.HeadWritten = ageSince(written, ok, opts.Now)
		if row.HeadAge.Known && (!s.OldestHold.Known || row.HeadAge.D > s.OldestHold.D) {
			s.OldestHold = row.HeadAge
		}
		c.Add(ch, head, g.Blockers(ch))
		rowOf = append(rowOf, i)
	}
	// Held channels are cut from the rows only when there are more than
	// MaxRows of them: they still count, but chains through them end early.
	t.rowOf = rowOf
	s.HeldChannels = c.Len()
	if s.RowsOmitted > 0 {
		s.HeldChannels = len(g.Holding())
	}
	c.Link()

	for k := range c.Len() {
		rows[rowOf[k]].Waits = t.waitsText(c.Head(k), c.Blockers(k))
	}
	in := inspect.Input{Gate: g, Names: t.lab.Names, Facts: opts.Facts, Timestamp: t.Timestamp, HeldSince: t.HeldSince, Now: opts.Now}
	s.Heads = make([]HeadDetail, 0, min(c.Len(), maxHeads))
	for k := range c.Len() {
		if len(s.Heads) == maxHeads {
			s.HeadsOmitted = c.Len() - k
			break
		}
		rows[rowOf[k]].Head = len(s.Heads)
		s.Heads = append(s.Heads, t.headDetail(&in, k, &rows[rowOf[k]], maxClock))
	}
	if s.State == replay.StateFailedClosed && s.Failure != nil {
		// The gate reads nothing past the record it failed closed on: its
		// heads are diagnosed as a task failed closed is (inspect's rule;
		// the view leaves next steps empty).
		for i := range s.Heads {
			inspect.StoppedAt(&s.Heads[i].Head, s.Failure.Channel, s.Failure.Offset, "")
		}
	}
	s.Channels = rows

	s.Stamp, s.StampEntries = t.stamp(g, &opts, maxStamp)
	for _, cyc := range g.Cycles() {
		out := make([]string, len(cyc))
		for i, ch := range cyc {
			out[i] = t.lab.Name(ch)
		}
		s.Cycles = append(s.Cycles, out)
	}
	s.Recent = t.recentEvents()
	return s
}

// CauseCount is how many held heads have one cause.
type CauseCount struct {
	Cause inspect.Cause
	N     int
}

// CauseCounts counts the detailed heads by their own cause (HeadDetail.Cause),
// the most telling first, leaving out causes no head has: the counts of the
// status line, the metrics and the live view's header.
func (s *Snapshot) CauseCounts() []CauseCount {
	causes := inspect.Causes()
	n := make([]int, len(causes))
	for i := range s.Heads {
		if r := s.Heads[i].Cause.Rank(); r < len(causes) {
			n[r]++
		}
	}
	var out []CauseCount
	for r, c := range causes {
		if n[r] > 0 {
			out = append(out, CauseCount{Cause: c, N: n[r]})
		}
	}
	return out
}

// setStop sets State, Failure and Err from the tracker's stop error and
// the gate.
func (s *Snapshot) setStop(t *Tracker, g *gate.Gate) {
	if t.stopErr != nil {
		if ie, ok := replay.FailureOf(t.stopErr); ok {
			s.State = replay.StateFailedClosed
			s.Failure = inspect.NewFailure(ie)
			return
		}
		s.State = replay.StateError
		s.Err = t.stopErr.Error()
		return
	}
	var fc *gate.FailClosedError
	if errors.As(g.Failed(), &fc) {
		s.State = replay.StateFailedClosed
		msg := string(fc.Code)
		if fc.Err != nil {
			msg = fc.Err.Error()
		}
		s.Failure = &inspect.Failure{Channel: t.lab.Name(fc.Channel), Offset: fc.Offset, Code: string(fc.Code), Error: msg}
	}
}

func (t *Tracker) headDetail(in *inspect.Input, k int, row *ChannelRow, maxClock int) HeadDetail {
	c := &t.chains
	d := HeadDetail{
		Head:    c.Describe(in, &t.lab, k, inspect.Limits{ClockEntries: maxClock, Blockers: maxBlockers, Chain: maxChain}),
		Written: row.HeadWritten,
	}
	for i, b := range c.Blockers(k)[:len(d.Blockers)] {
		if b.Kind != gate.BlockerHeld {
			continue
		}
		if j, ok := c.Index(b.Channel); ok {
			if d.RootWaits == nil {
				d.RootWaits = make([]string, len(d.Blockers))
			}
			r := c.Root(j)
			d.RootWaits[i] = t.waitsText(c.Head(r), c.Blockers(r))
		}
	}
	return d
}

// waitsText is a head's first blocker, e.g. "waits payments/1 ≥ 9,
// settled 7 (+2)".
func (t *Tracker) waitsText(head gate.Held, bs []gate.Blocker) string {
	if head.Undecodable != "" {
		return "undecodable (" + head.Undecodable + ")"
	}
	if len(bs) == 0 {
		return ""
	}
	s := t.blockerText(bs[0])
	if len(bs) > 1 {
		s += " (+" + strconv.Itoa(len(bs)-1) + ")"
	}
	return s
}

func (t *Tracker) blockerText(b gate.Blocker) string {
	return "waits " + t.lab.Name(b.Channel) + " ≥ " + strconv.FormatInt(b.Required, 10) + ", settled " + posText(b.Settled)
}

// posText writes a settled position; −1, nothing settled yet, is the
// channel's start.
func posText(p int64) string {
	if p < 0 {
		return "start"
	}
	return strconv.FormatInt(p, 10)
}

// Tracker keeps, beside a replay.Replayer, what a snapshot shows that the gate
// does not: the last events, when each held record was received, the error
// that stopped the feed, and resolved channel names. Feed it every event
// (Observe) from the goroutine that runs the gate, and pass it in
// SnapshotOptions. A Tracker serves one replay.Replayer (it caches its names and
// display order); a replay started over needs a new one. The zero value
// keeps no events; use NewTracker.
type Tracker struct {
	lab inspect.Labels

	ring []recentEntry
	next int // ring index of the next entry
	n    int // entries in the ring

	holds  map[clock.Channel]*holdQueue
	nHolds int

	stopErr error
	stopAt  int64

	// Scratch of Snapshot.
	chains inspect.Chains
	rowOf  []int

	// The last stamp (SnapshotOptions.StampEvery).
	stampText    string
	stampEntries int
	stampAt      time.Time
	stampValid   bool
}

// eventGap marks a recent entry that is a gap (ObserveGap), not an event
// of the replay.
const eventGap = ^replay.EventType(0)

type recentEntry struct {
	typ      replay.EventType // 0 for the stop error, eventGap for a gap
	seq      int64
	ch       clock.Channel
	off      int64
	line     int64
	behind   int64
	blocker  gate.Blocker
	nBlocked int
	undec    string
	at       int64
}

// holdQueue mirrors a channel's hold queue with the time each record was
// received. Holds arrive in offset order and deliveries pop them in the
// same order, so a FIFO suffices.
type holdQueue struct {
	offs []int64
	ats  []int64
	tss  []int64 // record timestamps, noTime when unknown
	head int
}

// compact reuses the space of delivered entries before the queue would
// grow: a queue that never drains (holds arriving behind deliveries, for
// days) stays as long as what it holds, not as long as all it ever held.
func (q *holdQueue) compact() {
	switch {
	case q.head > 0 && q.head == len(q.offs):
		q.offs, q.ats, q.tss, q.head = q.offs[:0], q.ats[:0], q.tss[:0], 0
	case q.head > 0 && len(q.offs) == cap(q.offs) && q.head >= len(q.offs)/2:
		n := copy(q.offs, q.offs[q.head:])
		copy(q.ats, q.ats[q.head:])
		copy(q.tss, q.tss[q.head:])
		q.offs, q.ats, q.tss, q.head = q.offs[:n], q.ats[:n], q.tss[:n], 0
	}
}

// noTime marks an unknown time.
const noTime = math.MinInt64

// NewTracker returns a Tracker keeping the last recent events.
func NewTracker(recent int) *Tracker {
	return &Tracker{ring: make([]recentEntry, max(recent, 0))}
}

func unixNano(at time.Time) int64 {
	if at.IsZero() {
		return noTime
	}
	return at.UnixNano()
}

// Observe records one event of the replay; at is when it happened (wall
// time live, the record's timestamp offline; zero when unknown). Call it
// from the emit function given to Feed or Run. It allocates nothing in the
// steady state.
func (t *Tracker) Observe(ev *replay.Event, at time.Time) {
	ns := unixNano(at)
	switch ev.Type {
	case replay.EventHold:
		if t.holds == nil {
			t.holds = map[clock.Channel]*holdQueue{}
		}
		q := t.holds[ev.Channel]
		if q == nil {
			q = &holdQueue{}
			t.holds[ev.Channel] = q
		}
		q.compact()
		ts := int64(noTime)
		if at, ok := record.TimeOf(ev.Timestamp); ev.HasTimestamp && ok { // ×10^6 wraps past 2262
			ts = at.UnixNano()
		}
		q.offs = append(q.offs, ev.Offset)
		q.ats = append(q.ats, ns)
		q.tss = append(q.tss, ts)
		t.nHolds++
	case replay.EventDeliver:
		if t.nHolds > 0 {
			if q := t.holds[ev.Channel]; q != nil && q.head < len(q.offs) && q.offs[q.head] == ev.Offset {
				q.head++
				t.nHolds--
			}
		}
	}
	if len(t.ring) == 0 {
		return
	}
	e := &t.ring[t.next]
	*e = recentEntry{typ: ev.Type, seq: ev.Seq, ch: ev.Channel, off: ev.Offset, line: ev.Line,
		behind: ev.Behind, nBlocked: len(ev.Blockers), undec: ev.Undecodable, at: ns}
	if len(ev.Blockers) > 0 {
		e.blocker = ev.Blockers[0]
	}
	t.push()
}

// ObserveGap records that a read with --allow-gaps went past the offsets
// from ≤ o < to of ch, deleted before they were read: a recent event of
// kind "gap", so that the view says what the status line cannot.
func (t *Tracker) ObserveGap(ch clock.Channel, from, to int64, at time.Time) {
	if len(t.ring) == 0 {
		return
	}
	t.ring[t.next] = recentEntry{typ: eventGap, ch: ch, off: to, behind: from, at: unixNano(at)}
	t.push()
}

func (t *Tracker) push() {
	t.next = (t.next + 1) % len(t.ring)
	t.n = min(t.n+1, len(t.ring))
}

// Stop records the error that stopped the feed: an *replay.InputError from a gate
// that failed closed makes snapshots show replay.StateFailedClosed with its
// Failure, any other error replay.StateError. A nil error clears it.
func (t *Tracker) Stop(err error, at time.Time) {
	t.stopErr = err
	t.stopAt = unixNano(at)
	if err == nil || len(t.ring) == 0 {
		return
	}
	t.ring[t.next] = recentEntry{at: t.stopAt}
	t.push()
}

// HeldSince returns when the held record at offset on ch was received.
func (t *Tracker) HeldSince(ch clock.Channel, offset int64) (time.Time, bool) {
	return t.held(ch, offset, func(q *holdQueue) []int64 { return q.ats })
}

// Timestamp returns the timestamp of the held record at offset on ch.
func (t *Tracker) Timestamp(ch clock.Channel, offset int64) (time.Time, bool) {
	return t.held(ch, offset, func(q *holdQueue) []int64 { return q.tss })
}

func (t *Tracker) held(ch clock.Channel, offset int64, times func(*holdQueue) []int64) (time.Time, bool) {
	if q := t.holds[ch]; q != nil {
		// The head is the common question: look there first.
		for k := q.head; k < len(q.offs); k++ {
			if q.offs[k] == offset {
				if at := times(q)[k]; at != noTime {
					return time.Unix(0, at), true
				}
				return time.Time{}, false
			}
			if q.offs[k] > offset {
				break
			}
		}
	}
	return time.Time{}, false
}

// ageSince is now − since, unknown when either is.
func ageSince(since time.Time, ok bool, now time.Time) inspect.Age {
	if !ok || now.IsZero() {
		return inspect.Age{}
	}
	return inspect.Age{D: now.Sub(since), Known: true}
}

// stamp returns the text of the node's stamp and its number of entries,
// recomputed as opts.StampEvery allows.
func (t *Tracker) stamp(g *gate.Gate, opts *SnapshotOptions, limit int) (string, int) {
	if opts.StampEvery > 0 && t.stampValid && !opts.Now.IsZero() && opts.Now.Sub(t.stampAt) < opts.StampEvery {
		return t.stampText, t.stampEntries
	}
	c := g.Stamp()
	t.stampText, t.stampEntries = t.lab.Clock(c, limit), c.Len()
	t.stampAt, t.stampValid = opts.Now, true
	return t.stampText, t.stampEntries
}

// recentEvents formats the ring, oldest first.
func (t *Tracker) recentEvents() []RecentEvent {
	out := make([]RecentEvent, 0, t.n)
	for k := range t.n {
		e := &t.ring[(t.next-t.n+k+len(t.ring))%len(t.ring)]
		re := RecentEvent{}
		if e.at != noTime {
			re.At = time.Unix(0, e.at)
		}
		at := t.lab.Name(e.ch) + "@" + strconv.FormatInt(e.off, 10)
		switch e.typ {
		case eventGap:
			re.Kind = "gap"
			re.Text = "gap " + t.lab.Name(e.ch) + ": offsets " + strconv.FormatInt(e.behind, 10) + " to " + strconv.FormatInt(e.off-1, 10) +
				" deleted before they were read; read on at " + strconv.FormatInt(e.off, 10)
		case replay.EventDeliver:
			re.Kind = "deliver"
			re.Text = "deliver #" + strconv.FormatInt(e.seq, 10) + " " + at
		case replay.EventDrop:
			re.Kind = "drop"
			re.Text = "drop " + at + " (replay guard)"
		case replay.EventHold:
			re.Kind = "hold"
			switch {
			case e.behind >= 0:
				re.Text = "hold " + at + " behind @" + strconv.FormatInt(e.behind, 10)
			case e.undec != "":
				re.Text = "hold " + at + " undecodable (" + e.undec + ")"
			case e.nBlocked > 0:
				re.Text = "hold " + at + " " + t.blockerText(e.blocker)
				if e.nBlocked > 1 {
					re.Text += " (+" + strconv.Itoa(e.nBlocked-1) + ")"
				}
			default:
				re.Text = "hold " + at
			}
		default:
			if ie, ok := replay.FailureOf(t.stopErr); ok {
				re.Kind = "fail-closed"
				re.Text = "FAILED CLOSED " + ie.Channel + "@" + strconv.FormatInt(ie.Offset, 10) + " " + string(ie.Code)
			} else {
				re.Kind = "error"
				re.Text = "error: " + strings.ReplaceAll(errText(t.stopErr), "\n", " ")
			}
			e.line = lineOf(t.stopErr)
		}
		if e.line > 0 && e.typ != replay.EventDeliver {
			re.Text += " · line " + strconv.FormatInt(e.line, 10)
		}
		out = append(out, re)
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return "stopped"
	}
	return err.Error()
}

func lineOf(err error) int64 {
	if ie, ok := replay.FailureOf(err); ok {
		return ie.Line
	}
	return 0
}

// RateMeter turns counters sampled now and then into smoothed rates per
// second (an exponential moving average with a one-second time constant).
// The zero value is ready.
type RateMeter struct {
	last        time.Time
	recv, deliv int64
	rRate       float64
	dRate       float64
}

// Sample takes the counters at now and returns the rates of received and
// delivered records per second. The first sample returns zeros.
func (m *RateMeter) Sample(now time.Time, received, delivered int64) (recv, deliv float64) {
	if m.last.IsZero() {
		m.last, m.recv, m.deliv = now, received, delivered
		return 0, 0
	}
	dt := now.Sub(m.last).Seconds()
	if dt <= 0 {
		return m.rRate, m.dRate
	}
	alpha := 1 - math.Exp(-dt)
	m.rRate += alpha * (float64(received-m.recv)/dt - m.rRate)
	m.dRate += alpha * (float64(delivered-m.deliv)/dt - m.dRate)
	m.last, m.recv, m.deliv = now, received, delivered
	return m.rRate, m.dRate
}
