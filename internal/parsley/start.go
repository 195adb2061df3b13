package parsley

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
)

// Reason is why Parsley refuses to start a process, as Parsley names it.
// A refusal is terminal: the process restarts into it until an operator
// acts.
type Reason string

// The refusals a start check predicts, in the order they are checked.
const (
	// ReasonOrderingStateLost: the ordering changelog is gone while the
	// group kept its offsets.
	ReasonOrderingStateLost Reason = "ORDERING_STATE_LOST"
	// ReasonUnknownFormat: the stored state cannot be trusted (an unknown
	// version, no version entry, a corrupt entry).
	ReasonUnknownFormat Reason = "UNKNOWN_ORDERING_STATE_FORMAT"
	// ReasonTaskWidthChanged: the widest received topic's partition count
	// no longer matches the changelog's partitions.
	ReasonTaskWidthChanged Reason = "TASK_WIDTH_CHANGED"
	// ReasonIdentityChanged: a received topic's name is bound in the store
	// to another topic ID than the cluster's (deleted and recreated).
	ReasonIdentityChanged Reason = "CHANNEL_IDENTITY_CHANGED"
	// ReasonDeletedWithUndelivered: a received topic was deleted while
	// records from it are held.
	ReasonDeletedWithUndelivered Reason = "CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES"
	// ReasonRemovedWithHeld: the declaration drops a topic on which
	// records are held.
	ReasonRemovedWithHeld Reason = "CHANNEL_REMOVED_WITH_HELD_MESSAGES"
	// ReasonPositionsDiscarded: a channel's log start is past where the
	// process resumes reading it: records were deleted unread.
	ReasonPositionsDiscarded Reason = "POSITIONS_DISCARDED_UNREAD"
	// ReasonUndecodableMetadata: a record the process reads next on a
	// received channel has a parsley.causes header that is not the wire
	// format: the task fails closed on it, at every start.
	ReasonUndecodableMetadata Reason = "UNDECODABLE_METADATA"
)

// Reasons lists every reason in the order the check reports them.
func Reasons() []Reason {
	return []Reason{ReasonOrderingStateLost, ReasonUnknownFormat, ReasonTaskWidthChanged,
		ReasonIdentityChanged, ReasonDeletedWithUndelivered, ReasonRemovedWithHeld, ReasonPositionsDiscarded, ReasonUndecodableMetadata}
}

// NextStep is the runbook step for the reason: what an operator does
// before the process can start again.
func (r Reason) NextStep() string {
	switch r {
	case ReasonOrderingStateLost:
		return "the held records and fed-up-to positions are gone: restore the changelog topic from a backup, or reset deliberately — delete the group's committed offsets so the process starts from its declared initial positions, accepting that what it held is not delivered"
	case ReasonUnknownFormat:
		return "the stored state cannot be trusted: `causalctl state` names each corrupt entry (partition, offset, key); run a Parsley build that reads this store format, or restore the changelog from a backup"
	case ReasonTaskWidthChanged:
		return "Kafka cannot remove partitions: declare the topics with the partition count the changelog has (e.g. a new topic of the old width), or migrate the process to a new application id deliberately, draining its holds first (`causalctl holds --app`)"
	case ReasonIdentityChanged:
		return "the group's positions and the held records belong to the topic that was deleted: decide what becomes of them, then reset the group's offsets for the new topic and start the process under a new application id, or recreate nothing and restore the old topic's data"
	case ReasonDeletedWithUndelivered:
		return "the held records of the deleted topic can never be delivered in order: recreate nothing under its name; drop the topic from the declaration once you accept losing its holds, or restore the topic"
	case ReasonRemovedWithHeld:
		return "keep the topic in the declaration until its held records drain (`causalctl holds --app` shows them), then deploy the narrower declaration"
	case ReasonPositionsDiscarded:
		return "the records between the resume position and the log start are lost to this process: find them (a backup, the producers), then reset the group's offset to the log start deliberately; raise the topic's retention above the longest stop or lag"
	case ReasonUndecodableMetadata:
		return "no restart passes the record: fix its writer, then move the process past it deliberately (reset the group's offset on that channel to the record's offset + 1, accepting that it is never delivered); `causalctl holds --app … --undecodable hold` shows what the task would hold behind it"
	}
	return ""
}

// TopicPartition names a partition by topic name, as a group's committed
// offsets do.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// TopicFacts are what the cluster says of a topic now.
type TopicFacts struct {
	ID clock.TopicID
	// Partitions is the partition count.
	Partitions int32
	// LogStarts holds the log start offsets the cluster said, by
	// partition: a map, since a count is what a broker claims and may be
	// 2^31−1 (a slice of it would be 16 GiB).
	LogStarts map[int32]int64
}

// StartInput is what a start check reads: the process's store, its
// group's committed offsets, the declaration and the cluster's topics.
type StartInput struct {
	// ChangelogExists says whether the ordering changelog topic exists;
	// ChangelogPartitions is its partition count.
	ChangelogExists     bool
	ChangelogPartitions int32
	// Tasks is the decoded store, one task per changelog partition.
	Tasks []*Task
	// Committed is the group's committed offsets; nil when unknown (a
	// capture), which is not the same as none.
	Committed map[TopicPartition]int64
	// Receives is the declaration checked: the topics the process
	// receives (its subscription, or one about to be deployed).
	// Declared says it is a declaration; without one, Receives is the
	// store's own bindings and no topic can have been dropped.
	Receives []string
	Declared bool
	// Cluster holds every topic the cluster has now, by name. A name
	// absent from it does not exist — unless Partial is set.
	Cluster map[string]TopicFacts
	// Partial says Cluster holds only some of the cluster's topics (those
	// a capture has log facts of): a name absent from it is unknown, not
	// deleted, so no deletion is predicted from its absence, and the task
	// width is checked only when every received topic is known.
	Partial bool
	// Undecodable are the records the tasks fail closed on when read on
	// from the committed offsets (one per task at most); nil when not read.
	Undecodable []UndecodableRecord
}

// UndecodableRecord is a record whose parsley.causes header is not the wire
// format, on a channel the process receives.
type UndecodableRecord struct {
	Topic   string
	Channel clock.Channel
	Offset  int64
	// Code is the reason code (SPEC §2).
	Code string
}

// Refusal is one predicted start refusal.
type Refusal struct {
	Reason Reason
	// Topic is the topic concerned, if one is.
	Topic string
	// Channels are the channels concerned, if any, by channel order.
	Channels []clock.Channel
	// Detail says what was found, in one sentence.
	Detail string
	// Lost counts the records deleted unread (POSITIONS_DISCARDED_UNREAD).
	Lost int64
}

// CheckStart predicts whether the process's next start is refused, and
// why: every refusal found, in the order of Reasons. None means the store
// and the cluster agree.
func CheckStart(in StartInput) []Refusal {
	var out []Refusal
	held := heldByTopic(in.Tasks)
	stored := slices.ContainsFunc(in.Tasks, func(t *Task) bool { return !t.empty() })
	if !in.ChangelogExists {
		if len(in.Committed) > 0 {
			out = append(out, Refusal{Reason: ReasonOrderingStateLost,
				Detail: fmt.Sprintf("the ordering changelog does not exist while the group has %d committed offsets", len(in.Committed))})
		}
		return out
	}
	if lost := lostTasks(in); len(lost) > 0 {
		out = append(out, Refusal{Reason: ReasonOrderingStateLost,
			Detail: fmt.Sprintf("the group has committed offsets on partition %s while the ordering changelog's %s no records", joinInts(lost), plural(len(lost), "partition holds", "partitions hold"))})
	}
	for _, t := range in.Tasks {
		if len(t.Corrupt) > 0 {
			out = append(out, Refusal{Reason: ReasonUnknownFormat,
				Detail: fmt.Sprintf("task %d: %d corrupt entries, the first: %s", t.Task, len(t.Corrupt), t.Corrupt[0].Reason)})
		}
	}
	names := bindings(in.Tasks)
	received := in.Receives
	if !in.Declared {
		received = slices.Sorted(maps.Keys(names))
	}
	width, known := int32(0), true
	for _, name := range received {
		if t, ok := in.Cluster[name]; ok {
			width = max(width, t.Partitions)
		} else if in.Partial {
			known = false
		}
	}
	if stored && known && width > 0 && width != in.ChangelogPartitions {
		out = append(out, Refusal{Reason: ReasonTaskWidthChanged,
			Detail: fmt.Sprintf("the widest received topic has %d partitions, the ordering changelog %d", width, in.ChangelogPartitions)})
	}
	for _, name := range received {
		id, bound := names[name]
		t, exists := in.Cluster[name]
		switch {
		case bound && exists && t.ID != id:
			out = append(out, Refusal{Reason: ReasonIdentityChanged, Topic: name,
				Detail: fmt.Sprintf("%s is bound in the store to topic ID %s, the cluster's is %s (deleted and recreated)", name, id, t.ID)})
		case bound && !exists && !in.Partial && len(held[id]) > 0:
			out = append(out, Refusal{Reason: ReasonDeletedWithUndelivered, Topic: name, Channels: held[id],
				Detail: fmt.Sprintf("%s was deleted while %d of its %s records", name, len(held[id]), plural(len(held[id]), "channels holds", "channels hold"))})
		}
	}
	if in.Declared {
		for name, id := range names {
			if len(held[id]) > 0 && !slices.Contains(in.Receives, name) {
				out = append(out, Refusal{Reason: ReasonRemovedWithHeld, Topic: name, Channels: held[id],
					Detail: fmt.Sprintf("the declaration drops %s, on which %d %s records", name, len(held[id]), plural(len(held[id]), "channel holds", "channels hold"))})
			}
		}
	}
	for _, name := range received {
		t, ok := in.Cluster[name]
		if !ok || (names[name] != clock.TopicID{} && names[name] != t.ID) {
			continue // gone or another topic now: reported above
		}
		for _, p := range slices.Sorted(maps.Keys(t.LogStarts)) {
			start := t.LogStarts[p]
			ch := clock.Channel{Topic: t.ID, Partition: p}
			resume, ok := resumeAt(in, name, ch)
			if !ok || p >= t.Partitions || start < 0 || resume >= start {
				continue
			}
			out = append(out, Refusal{Reason: ReasonPositionsDiscarded, Topic: name, Channels: []clock.Channel{ch}, Lost: start - resume,
				Detail: fmt.Sprintf("%s/%d resumes at %d but its log starts at %d: offsets %d–%d were deleted unread", name, p, resume, start, resume, start-1)})
		}
	}
	slices.SortStableFunc(out, func(a, b Refusal) int {
		return cmp.Or(cmp.Compare(slices.Index(Reasons(), a.Reason), slices.Index(Reasons(), b.Reason)), cmp.Compare(a.Topic, b.Topic),
			slices.CompareFunc(a.Channels, b.Channels, clock.Channel.Compare))
	})
	for _, u := range in.Undecodable {
		out = append(out, Refusal{Reason: ReasonUndecodableMetadata, Topic: u.Topic, Channels: []clock.Channel{u.Channel},
			Detail: fmt.Sprintf("the record at offset %d of %s/%d, which the process reads next, has an undecodable parsley.causes header (%s)", u.Offset, u.Topic, u.Channel.Partition, u.Code)})
	}
	return out
}

// empty reports whether the task's changelog partition holds nothing.
func (t *Task) empty() bool {
	return t.Version == 0 && len(t.Corrupt) == 0 && len(t.Names) == 0 && len(t.Channels) == 0
}

// lostTasks lists the changelog partitions that hold no records although
// the group committed read positions on the same partition of a topic:
// the state behind those positions is gone (purged, or the partition
// recreated empty).
func lostTasks(in StartInput) []int32 {
	byTask := map[int32]*Task{}
	for _, t := range in.Tasks {
		byTask[t.Task] = t
	}
	var lost []int32
	for tp := range in.Committed {
		if tp.Partition >= in.ChangelogPartitions || slices.Contains(lost, tp.Partition) {
			continue // no such task: the width check speaks of it
		}
		if t := byTask[tp.Partition]; t == nil || t.empty() {
			lost = append(lost, tp.Partition)
		}
	}
	slices.Sort(lost)
	return lost
}

// resumeAt is where the process reads ch of topic name next, as Parsley's
// start decides it: the group's committed offset; with none (expired during
// a long stop), the task's fed-up-to + 1, which Parsley commits before it
// fetches, or 0 for a partition the task binds the topic of but never fed;
// for a topic the task never bound, the log start itself (nothing can be
// missed). Parsley compares nothing else against the log start, so an
// offset reset forward deliberately is honoured.
func resumeAt(in StartInput, name string, ch clock.Channel) (int64, bool) {
	if off, ok := in.Committed[TopicPartition{name, ch.Partition}]; ok {
		return off, true
	}
	i := slices.IndexFunc(in.Tasks, func(t *Task) bool { return t.Task == ch.Partition })
	if i < 0 {
		return 0, false
	}
	t := in.Tasks[i]
	if _, bound := t.Names[name]; !bound {
		return 0, false
	}
	if c := t.Channel(ch); c != nil && c.Deleted() {
		return 0, false
	} else if c != nil && c.FedUpTo >= 0 {
		return c.FedUpTo + 1, true
	}
	return 0, true
}

func joinInts(ps []int32) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// bindings merges every task's name bindings.
func bindings(tasks []*Task) map[string]clock.TopicID {
	names := map[string]clock.TopicID{}
	for _, t := range tasks {
		for n, id := range t.Names {
			names[n] = id
		}
	}
	return names
}

// heldByTopic lists, per topic ID, the channels that hold records.
func heldByTopic(tasks []*Task) map[clock.TopicID][]clock.Channel {
	held := map[clock.TopicID][]clock.Channel{}
	for _, t := range tasks {
		for _, c := range t.Channels {
			if len(c.Held) > 0 {
				held[c.Channel.Topic] = append(held[c.Channel.Topic], c.Channel)
			}
		}
	}
	for _, chs := range held {
		slices.SortFunc(chs, clock.Channel.Compare)
	}
	return held
}
