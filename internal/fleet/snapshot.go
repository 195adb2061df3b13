package fleet

import (
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/upstream"
)

// Snapshot is what the refresher knows after its latest refresh: every
// process it follows, and its own health. A published snapshot is shared
// and never changed.
type Snapshot struct {
	// Processes are the processes refreshed so far, by application id.
	Processes []Process
	// Taken is when the refresh that made the snapshot ended.
	Taken time.Time
	// LastSuccess is when the last refresh that read everything ended;
	// zero before the first.
	LastSuccess time.Time
	// FailingSince is when the refreshes began to fail (the first failed
	// refresh after a success); zero while they succeed.
	FailingSince time.Time
	// LastError is the latest refresh's error; "" when it succeeded.
	LastError string
	// Errors counts the failed reads since the refresher started (a refresh
	// that fails for two processes counts two).
	Errors uint64
	// RefreshDuration is how long the latest refresh took.
	RefreshDuration time.Duration
	// Followed is the number of ordering changelogs followed.
	Followed int
	// Diagnosed counts the task diagnoses since the refresher started: a
	// refresh diagnoses only the tasks whose store, group or facts changed.
	Diagnosed uint64
	// ChangelogReads counts the changelog reads since the refresher started:
	// a refresh reads only the changelogs whose end moved.
	ChangelogReads uint64
}

// Process is one Parsley process as its last refresh found it.
type Process struct {
	App       string
	Changelog string
	// GroupState is the group's state (Stable, Empty, Dead, …); Members
	// the number of its members.
	GroupState string
	Members    int
	// EntriesRead counts the changelog entries read (tombstones included)
	// since the changelog was first followed.
	EntriesRead int64
	Tasks       []Task
	// StartRefusals counts the refusals Parsley's next start would make
	// (parsley.CheckStart), by reason; none when it would start.
	StartRefusals map[parsley.Reason]int
	// Retention are the retention clocks of its read positions
	// (inspect.Process.RetentionClocks), as of the last read on.
	Retention []RetentionClock
	// Gap, when set, says the changelog lost entries before they were
	// read (retention or DeleteRecords): the store cannot be rebuilt from
	// it, and Tasks is empty rather than a store missing entries.
	Gap string
}

// Task is one task (a changelog partition) of a process.
type Task struct {
	Task int32
	// Assigned says whether a group member is assigned the task.
	Assigned bool
	// Topics are the topics the task holds records of, by name.
	Topics []TopicHolds
	// Heads counts the held heads by cause (inspect.Task.HeadCauses: the
	// rule state and processes count by too); Ready the store's heads
	// nothing blocks any more, no held heads.
	Heads map[inspect.Cause]int
	Ready int
	// Channels are the task's scope channels with their lags.
	Channels []Channel
	// Corrupt is the number of store entries that could not be read.
	Corrupt int
	// BehindTransaction says the changelog partition was not read to the
	// end listed at the refresh: an open transaction holds it below.
	BehindTransaction bool
	// ReadOnPartial says its read on from the committed offsets stopped
	// at Config.ReadOn's bound before the log end (inspect.ReadOn.CutShort):
	// what it shows is what was read, not guessed past.
	ReadOnPartial bool
	// FailedClosed is the record the task fails closed on, read on from
	// the committed offsets; nil when none.
	FailedClosed *inspect.FailedClosed
	// WaitsOn are the topics its held heads' blockers are on
	// (inspect.Report.WaitsOn); Upstream the stuck process upstream they
	// wait on, nil when none (upstream.Graph.RootOf).
	WaitsOn  []string
	Upstream *upstream.Root
}

// TopicHolds is what a task holds of one topic.
type TopicHolds struct {
	// Topic is the topic's name, or its UUID when no name is known.
	Topic string
	Held  int
	// OldestWritten is the timestamp of the oldest held record (when it
	// was written); zero when no held record has one.
	OldestWritten time.Time
}

// Channel is one channel of a task's scope. A lag is −1 when unknown (no
// log end, nothing fed, or no committed offset).
type Channel struct {
	Topic     string
	Partition int32
	// FedLag is how far the task's fed-up-to position is behind the log's
	// stable end: records written that the task was not fed.
	FedLag int64
	// CommittedLag is how far the group's committed offset is behind the
	// log's stable end (what a consumer-lag exporter reports).
	CommittedLag int64
}

// HeldCount is the number of records the task holds.
func (t *Task) HeldCount() int {
	n := 0
	for _, th := range t.Topics {
		n += th.Held
	}
	return n
}

// RetentionClock is the retention clock of a process's read position on
// one received partition (inspect.RetentionClock).
type RetentionClock struct {
	Topic     string
	Partition int32
	// Read is the read position; Headroom its distance past the log start
	// (< 0: retention passed it).
	Read, Headroom int64
	// DeletesAt is when retention may delete the record at the read
	// position; Known says it is known.
	DeletesAt time.Time
	Known     bool
}
