package inspect

import (
	"maps"
	"slices"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// RetentionClock is how long retention leaves a process's read position on
// one received partition: once the log start passes it, the next fetch
// refuses with POSITIONS_DISCARDED_UNREAD. It runs for a process that is
// stopped or lags (records past its read position); one that keeps up has
// none.
type RetentionClock struct {
	Channel clock.Channel
	// Read is where the process resumes: the group's committed offset, or
	// with the group's offsets expired (Expired) the covered position + 1.
	Read    int64
	Expired bool
	// LogStart and End are the partition's log start and high watermark.
	LogStart, End int64
	// Headroom is Read − LogStart: the positions retention may still
	// delete before it passes the read position (< 0: it has).
	Headroom int64
	// Written is the timestamp of the record at the read position (the
	// first one read on from it); zero when unknown.
	Written time.Time
	// RetentionMs is the topic's retention.ms (−1: kept for ever, or
	// unknown with Known false).
	RetentionMs int64
	// DeletesAt is Written + retention.ms: the earliest the record at the
	// read position, and the position with it, may go; Left is the time
	// from now to then. Known says both are.
	DeletesAt time.Time
	Left      time.Duration
	Known     bool
}

// Passed says retention has passed the read position already.
func (r *RetentionClock) Passed() bool { return r.Headroom < 0 }

// RetentionClocks are the process's retention clocks, one per received
// partition with records past its read position, in channel order: from
// the committed offsets (else, for expired ones, the task's fed-up-to +
// 1), the log facts and the records read on (Process.ReadOn, for the
// timestamp at the read position). A capture has none (no group offsets).
func (p *Process) RetentionClocks(now time.Time) []RetentionClock {
	if p.Committed == nil || p.Captured {
		return nil
	}
	first := map[clock.Channel]FirstRead{}
	for _, on := range p.ReadOn {
		for ch, f := range on.First {
			first[ch] = f
		}
	}
	covered := map[clock.Channel]int64{}
	for _, part := range p.Changelog.Partitions() {
		for _, c := range p.Changelog.Partition(part).Store.Decode().Channels {
			if c.FedUpTo >= 0 && !c.Deleted() {
				covered[c.Channel] = c.FedUpTo
			}
		}
	}
	var out []RetentionClock
	for _, ch := range slices.SortedFunc(maps.Keys(p.Facts), clock.Channel.Compare) {
		f := p.Facts[ch]
		rc := RetentionClock{Channel: ch, LogStart: f.LogStart, End: f.HighWatermark, RetentionMs: -1}
		if off, ok := p.Committed[ch]; ok {
			rc.Read = off
		} else if fed, ok := covered[ch]; ok {
			rc.Read, rc.Expired = fed+1, true
		} else {
			continue // never read: where it starts is not this process's yet
		}
		if rc.End < 0 || rc.Read >= rc.End || f.LogStart < 0 {
			continue // nothing unread: retention threatens nothing
		}
		rc.Headroom = rc.Read - f.LogStart
		if fr, ok := first[ch]; ok && fr.HasTimestamp && fr.Offset >= rc.Read {
			rc.Written, _ = record.TimeOf(fr.Timestamp)
		}
		if r := f.Retention; r != nil && r.Deletes() && r.Ms >= 0 {
			rc.RetentionMs = r.Ms
			if !rc.Written.IsZero() {
				rc.DeletesAt = rc.Written.Add(msDuration(r.Ms))
				rc.Left, rc.Known = rc.DeletesAt.Sub(now), true
			}
		}
		out = append(out, rc)
	}
	return out
}
