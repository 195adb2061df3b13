package parsley

import (
	"cmp"
	"fmt"
	"slices"

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
)

// Reasons lists every reason in the order the check reports them.
func Reasons() []Reason {
	return []Reason{ReasonOrderingStateLost, ReasonUnknownFormat, ReasonTaskWidthChanged,
		ReasonIdentityChanged, ReasonDeletedWithUndelivered, ReasonRemovedWithHeld, ReasonPositionsDiscarded}
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
	// LogStarts holds each partition's log start offset; its length is the
	// partition count. −1 where the cluster did not say.
	LogStarts []int64
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
	// Committed is the group's committed offsets.
	Committed map[TopicPartition]int64
	// Receives is the declaration checked: the topics the process
	// receives (its subscription, or one about to be deployed).
	// Declared says it is a declaration; without one, Receives is the
	// store's own bindings and no topic can have been dropped.
	Receives []string
	Declared bool
	// Cluster holds every topic the cluster has now, by name. A name
	// absent from it does not exist.
	Cluster map[string]TopicFacts
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
	stored := len(in.Tasks) > 0 && slices.ContainsFunc(in.Tasks, func(t *Task) bool { return t.Version != 0 || len(t.Corrupt) > 0 })
	if !in.ChangelogExists {
		if len(in.Committed) > 0 {
			out = append(out, Refusal{Reason: ReasonOrderingStateLost,
				Detail: fmt.Sprintf("the ordering changelog does not exist while the group has %d committed offsets", len(in.Committed))})
		}
		return out
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
		received = slices.Sorted(func(yield func(string) bool) {
			for n := range names {
				if !yield(n) {
					return
				}
			}
		})
	}
	width := int32(0)
	for _, name := range received {
		if t, ok := in.Cluster[name]; ok {
			width = max(width, int32(len(t.LogStarts)))
		}
	}
	if stored && width > 0 && width != in.ChangelogPartitions {
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
		case bound && !exists && len(held[id]) > 0:
			out = append(out, Refusal{Reason: ReasonDeletedWithUndelivered, Topic: name, Channels: held[id],
				Detail: fmt.Sprintf("%s was deleted while %d of its channels hold records", name, len(held[id]))})
		}
	}
	if in.Declared {
		for name, id := range names {
			if len(held[id]) > 0 && !slices.Contains(in.Receives, name) {
				out = append(out, Refusal{Reason: ReasonRemovedWithHeld, Topic: name, Channels: held[id],
					Detail: fmt.Sprintf("the declaration drops %s, on which %d channels hold records", name, len(held[id]))})
			}
		}
	}
	for _, name := range received {
		t, ok := in.Cluster[name]
		if !ok || (names[name] != clock.TopicID{} && names[name] != t.ID) {
			continue // gone or another topic now: reported above
		}
		for p, start := range t.LogStarts {
			ch := clock.Channel{Topic: t.ID, Partition: int32(p)}
			resume, ok := resumeAt(in, name, ch)
			if !ok || start < 0 || resume >= start {
				continue
			}
			out = append(out, Refusal{Reason: ReasonPositionsDiscarded, Topic: name, Channels: []clock.Channel{ch}, Lost: start - resume,
				Detail: fmt.Sprintf("%s/%d resumes at %d but its log starts at %d: offsets %d–%d were deleted unread", name, p, resume, start, resume, start-1)})
		}
	}
	slices.SortStableFunc(out, func(a, b Refusal) int {
		return cmp.Or(cmp.Compare(slices.Index(Reasons(), a.Reason), slices.Index(Reasons(), b.Reason)), cmp.Compare(a.Topic, b.Topic))
	})
	return out
}

// resumeAt is where the process reads ch next: its committed offset, or,
// with none (expired during a long stop), the store's fed-up-to + 1, which
// Parsley commits before it starts. Parsley's engine also refuses a log
// start past fed-up-to + 1 whatever the commit says, so the lower of the
// two counts.
func resumeAt(in StartInput, name string, ch clock.Channel) (int64, bool) {
	resume, ok := in.Committed[TopicPartition{name, ch.Partition}]
	for _, t := range in.Tasks {
		if t.Task != ch.Partition {
			continue
		}
		if c := t.Channel(ch); c != nil && c.FedUpTo >= 0 && !c.Deleted() {
			if !ok || c.FedUpTo+1 < resume {
				resume, ok = c.FedUpTo+1, true
			}
		}
	}
	return resume, ok
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
