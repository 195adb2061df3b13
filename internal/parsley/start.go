package parsley

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/record"
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

// Reasons lists every reason the cluster can show, in the order the check
// reports them: Parsley's start checks first, then what its first fetch,
// its first hold and its reading meet, then the stops it records no
// reason for.
func Reasons() []Reason {
	return []Reason{ReasonOrderingStateLost, ReasonUnknownFormat, ReasonSubstrateMisconfigured, ReasonTaskWidthChanged,
		ReasonIdentityChanged, ReasonDeletedWithUndelivered, ReasonRemovedWithHeld, ReasonMetadataBudgetExceeded,
		ReasonPositionsDiscarded, ReasonOutOfOrderFeed, ReasonUndecodableMetadata, StopSourceTopicMissing, StopPartitionAdded}
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
	case ReasonSubstrateMisconfigured:
		return "fix the cluster, then restart: raise the ordering changelog's max.message.bytes (kafka-configs --alter --add-config max.message.bytes=…) and the producer's max.request.size above the held record; or remove the foreign member from the application's group (a bootstrap member leaves at its session timeout); or upgrade brokers below 3.7.0, which give no topic IDs"
	case ReasonMetadataBudgetExceeded:
		return "compute the upstream closure's width and set metadataBudgetBytes above it, with headroom, on this process and every process its frontier reaches; raise the changelog's and every sent topic's max.message.bytes and the producer's max.request.size to cover the largest payload plus the budget; then restart"
	case ReasonOutOfOrderFeed:
		return "the state records the channel as gone, yet its topic id still has records: the identity check's verdict was wrong and the refusal is durable; keep the logs of the task initialisation that gave it, report it, and reset"
	case StopSourceTopicMissing:
		return "Parsley records no refusal reason: its start fails at resolution until the topic exists again or leaves the declaration; restore the topic, or deploy the declaration without it (held records on it refuse that as CHANNEL_REMOVED_WITH_HELD_MESSAGES), then restart"
	case StopPartitionAdded:
		return "Parsley records no refusal reason: a running process stops on the partition it has no committed position for; restart it, and the start pre-commits the new partition at earliest"
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
	// LogEnds holds the high watermarks the cluster said, by partition.
	LogEnds map[int32]int64
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

	// App is the application id, whose group Members are (nil when
	// unknown): a member not of the process is a foreign one.
	App     string
	Members []record.GroupMember
	// ChangelogCleanup and ChangelogMaxBytes are the ordering changelog's
	// cleanup.policy and max.message.bytes; "" and 0 when unknown.
	ChangelogCleanup  string
	ChangelogMaxBytes int64
	// Held are the records the tasks hold when read on from the committed
	// offsets, with the size of their persisted form; nil when not read.
	Held []HeldSize
	// Budget is the process's metadataBudgetBytes; 0 is Parsley's default.
	Budget int64
}

// HeldSize is a record a task holds when read on, and the bytes its
// persisted form (key, value, headers and causes) takes in the changelog.
type HeldSize struct {
	Topic   string
	Channel clock.Channel
	Offset  int64
	Bytes   int64
}

// Warning is a condition short of a refusal that Parsley warns of, or
// that leads to a refusal if left alone.
type Warning struct {
	Reason Reason
	Detail string
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
		detail := fmt.Sprintf("the group has committed offsets on partition %s while the ordering changelog's %s no records", joinInts(lost), plural(len(lost), "partition holds", "partitions hold"))
		if !compacted(in.ChangelogCleanup) {
			detail += fmt.Sprintf(" (its cleanup.policy is %s, not compact: retention aged the ordering state out)", escape.Text(in.ChangelogCleanup))
		}
		out = append(out, Refusal{Reason: ReasonOrderingStateLost, Detail: detail})
	}
	for _, t := range in.Tasks {
		if len(t.Corrupt) > 0 {
			out = append(out, Refusal{Reason: ReasonUnknownFormat,
				Detail: fmt.Sprintf("task %d: %d corrupt entries, the first: %s", t.Task, len(t.Corrupt), t.Corrupt[0].Reason)})
		}
	}
	for _, m := range in.Members {
		if why := ForeignMember(in.App, m); why != "" {
			out = append(out, Refusal{Reason: ReasonSubstrateMisconfigured,
				Detail: fmt.Sprintf("member %s of the group (client id %s, host %s) is %s: Parsley's join is refused as a group-protocol conflict while it stays", escape.Text(m.MemberID), escape.Text(m.ClientID), escape.Text(m.ClientHost), why)})
		}
	}
	names := bindings(in.Tasks)
	received := in.Receives
	if !in.Declared {
		received = slices.Sorted(maps.Keys(names))
	}
	for _, name := range received {
		if t, ok := in.Cluster[name]; ok && t.ID.IsZero() {
			out = append(out, Refusal{Reason: ReasonSubstrateMisconfigured, Topic: name,
				Detail: fmt.Sprintf("%s has no topic ID: brokers below 3.7.0 cannot give a channel its identity", name)})
		}
	}
	if in.ChangelogMaxBytes > 0 {
		for _, h := range in.Held {
			if h.Bytes > in.ChangelogMaxBytes {
				out = append(out, Refusal{Reason: ReasonSubstrateMisconfigured, Topic: h.Topic, Channels: []clock.Channel{h.Channel},
					Detail: fmt.Sprintf("the record at offset %d of %s/%d is held when read, and its persisted form (%d bytes) exceeds the ordering changelog's max.message.bytes (%d)", h.Offset, h.Topic, h.Channel.Partition, h.Bytes, in.ChangelogMaxBytes)})
			}
		}
	}
	width, known := int32(0), true
	for _, name := range received {
		if t, ok := in.Cluster[name]; ok {
			width = max(width, t.Partitions)
		} else if in.Partial {
			known = false
		}
	}
	widthChanged := stored && known && width > 0 && width != in.ChangelogPartitions
	if widthChanged {
		out = append(out, Refusal{Reason: ReasonTaskWidthChanged,
			Detail: fmt.Sprintf("the widest received topic has %d partitions, the ordering changelog %d", width, in.ChangelogPartitions)})
	}
	for _, name := range received {
		id, bound := names[name]
		t, exists := in.Cluster[name]
		switch {
		case bound && exists && !t.ID.IsZero() && t.ID != id:
			out = append(out, Refusal{Reason: ReasonIdentityChanged, Topic: name,
				Detail: fmt.Sprintf("%s is bound in the store to topic ID %s, the cluster's is %s (deleted and recreated)", name, id, t.ID)})
		case bound && !exists && !in.Partial && len(held[id]) > 0:
			out = append(out, Refusal{Reason: ReasonDeletedWithUndelivered, Topic: name, Channels: held[id],
				Detail: fmt.Sprintf("%s was deleted while %d of its %s records", name, len(held[id]), plural(len(held[id]), "channels holds", "channels hold"))})
		case !exists && !in.Partial:
			out = append(out, Refusal{Reason: StopSourceTopicMissing, Topic: name,
				Detail: fmt.Sprintf("%s, which the process receives, does not exist: its start fails resolving it (a running process stops at its next rebalance); if it left the declaration on purpose, check with --receives", name)})
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
	if n, chans := frontierOf(in, received); n > budgetOf(in) {
		out = append(out, Refusal{Reason: ReasonMetadataBudgetExceeded,
			Detail: fmt.Sprintf("the causal frontier reaches about %d bytes (%d channels) against a budget of %d bytes: the next emission refuses", n, chans, budgetOf(in))})
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
			detail := fmt.Sprintf("%s/%d resumes at %d but its log starts at %d: offsets %d–%d were deleted unread", name, p, resume, start, resume, start-1)
			if _, committed := in.Committed[TopicPartition{name, p}]; !committed && in.Committed != nil {
				detail += fmt.Sprintf("; the group's offsets expired, so the start succeeds at the covered position + 1 (%d) and the first fetch refuses", resume)
			}
			out = append(out, Refusal{Reason: ReasonPositionsDiscarded, Topic: name, Channels: []clock.Channel{ch}, Lost: start - resume, Detail: detail})
		}
	}
	out = append(out, goneFed(in)...)
	for _, u := range in.Undecodable {
		if u.Code == string(clock.CodeTooLarge) {
			out = append(out, Refusal{Reason: ReasonMetadataBudgetExceeded, Topic: u.Topic, Channels: []clock.Channel{u.Channel},
				Detail: fmt.Sprintf("the record at offset %d of %s/%d, which the process reads next, carries a parsley.causes header over the %d-byte budget: its receipt refuses", u.Offset, u.Topic, u.Channel.Partition, budgetOf(in))})
			continue
		}
		out = append(out, Refusal{Reason: ReasonUndecodableMetadata, Topic: u.Topic, Channels: []clock.Channel{u.Channel},
			Detail: fmt.Sprintf("the record at offset %d of %s/%d, which the process reads next, has an undecodable parsley.causes header (%s)", u.Offset, u.Topic, u.Channel.Partition, u.Code)})
	}
	if !widthChanged {
		named := map[clock.Channel]bool{}
		for _, r := range out {
			for _, ch := range r.Channels {
				named[ch] = true
			}
		}
		out = append(out, partitionsAdded(in, received, named)...)
	}
	slices.SortStableFunc(out, func(a, b Refusal) int {
		return cmp.Or(cmp.Compare(slices.Index(Reasons(), a.Reason), slices.Index(Reasons(), b.Reason)), cmp.Compare(a.Topic, b.Topic),
			slices.CompareFunc(a.Channels, b.Channels, clock.Channel.Compare))
	})
	return out
}

// CheckWarnings lists what Parsley warns of before it refuses, or what
// leads to a refusal if left alone: a frontier past 80 % of the budget, an
// ordering changelog whose cleanup.policy is not compact.
func CheckWarnings(in StartInput) []Warning {
	var out []Warning
	if in.ChangelogExists && !compacted(in.ChangelogCleanup) && len(lostTasks(in)) == 0 {
		out = append(out, Warning{Reason: ReasonOrderingStateLost,
			Detail: fmt.Sprintf("the ordering changelog's cleanup.policy is %s, not compact: retention will age its ordering state out, and the start after that refuses", escape.Text(in.ChangelogCleanup))})
	}
	received := in.Receives
	if !in.Declared {
		received = slices.Sorted(maps.Keys(bindings(in.Tasks)))
	}
	if n, chans := frontierOf(in, received); n <= budgetOf(in) && n*100 >= budgetOf(in)*BudgetWarnPercent {
		out = append(out, Warning{Reason: ReasonMetadataBudgetExceeded,
			Detail: fmt.Sprintf("the causal frontier reaches about %d bytes (%d channels), %d %% of the %d-byte budget: Parsley warns from %d %%", n, chans, n*100/budgetOf(in), budgetOf(in), BudgetWarnPercent)})
	}
	return out
}

// fed says some task has fed ch.
func fed(tasks []*Task, ch clock.Channel) bool {
	return slices.ContainsFunc(tasks, func(t *Task) bool {
		c := t.Channel(ch)
		return c != nil && c.FedUpTo >= 0
	})
}

// compacted says a cleanup.policy keeps a key's latest value for ever
// ("" is unknown: assumed so).
func compacted(policy string) bool {
	return policy == "" || slices.Contains(strings.Split(policy, ","), "compact")
}

func budgetOf(in StartInput) int64 {
	if in.Budget > 0 {
		return in.Budget
	}
	return DefaultMetadataBudget
}

// frontierOf estimates the width of the frontier the process sends: every
// partition of the topics it receives, and every channel its stored
// frontier names; a topic's partitions counted as the cluster has them,
// else as many as the store names.
func frontierOf(in StartInput, received []string) (bytes int64, channels int) {
	byID := map[clock.TopicID]int32{}
	for _, name := range received {
		if t, ok := in.Cluster[name]; ok && !t.ID.IsZero() {
			byID[t.ID] = max(byID[t.ID], t.Partitions)
		}
	}
	counts := map[clock.TopicID]int32{}
	for _, t := range in.Tasks {
		for _, c := range t.Channels {
			if c.Frontier >= 0 {
				counts[c.Channel.Topic] = max(counts[c.Channel.Topic], c.Channel.Partition+1)
			}
		}
	}
	for _, t := range in.Cluster {
		if _, ok := counts[t.ID]; ok {
			counts[t.ID] = max(counts[t.ID], t.Partitions)
		}
	}
	for id, n := range byID {
		counts[id] = max(counts[id], n)
	}
	named := map[string]int32{}
	for id, n := range counts {
		named[id.String()] = n
		channels += int(n)
	}
	return FrontierBytes(named), channels
}

// goneFed lists the channels the store records as gone (fed to the
// deleted sentinel) whose topic ID the cluster still has, with records:
// the next feed on them refuses as OUT_OF_ORDER_FEED.
func goneFed(in StartInput) []Refusal {
	var out []Refusal
	for _, name := range slices.Sorted(maps.Keys(in.Cluster)) {
		t := in.Cluster[name]
		for _, task := range in.Tasks {
			for _, c := range task.Channels {
				if c.Channel.Topic != t.ID || !c.Deleted() || t.ID.IsZero() {
					continue
				}
				end, ok := t.LogEnds[c.Channel.Partition]
				if !ok || end <= max(t.LogStarts[c.Channel.Partition], 0) {
					continue // nothing to feed (yet)
				}
				out = append(out, Refusal{Reason: ReasonOutOfOrderFeed, Topic: name, Channels: []clock.Channel{c.Channel},
					Detail: fmt.Sprintf("%s/%d is recorded in task %d's state as no longer existing, yet its topic ID still has records up to offset %d: the first one fed refuses", name, c.Channel.Partition, task.Task, end-1)})
			}
		}
	}
	return out
}

// partitionsAdded lists the received partitions without a committed read
// position, never fed, numbered past every partition of their topic that
// has one: added while the process ran (Parsley pre-commits every
// partition it resolves at start), which stops it (no refusal reason)
// until a restart pre-commits them. Channels another refusal names
// (named) are left to it.
func partitionsAdded(in StartInput, received []string, named map[clock.Channel]bool) []Refusal {
	if len(in.Committed) == 0 {
		return nil
	}
	var out []Refusal
	for _, name := range received {
		t, ok := in.Cluster[name]
		if !ok {
			continue
		}
		var have, missing []int32
		for p := range t.Partitions {
			ch := clock.Channel{Topic: t.ID, Partition: p}
			if _, ok := in.Committed[TopicPartition{name, p}]; ok {
				have = append(have, p)
			} else if _, listed := t.LogStarts[p]; listed && !named[ch] && len(have) > 0 && !fed(in.Tasks, ch) {
				missing = append(missing, p)
			}
		}
		if len(have) == 0 || len(missing) == 0 {
			continue
		}
		var chans []clock.Channel
		for _, p := range missing {
			chans = append(chans, clock.Channel{Topic: t.ID, Partition: p})
		}
		out = append(out, Refusal{Reason: StopPartitionAdded, Topic: name, Channels: chans,
			Detail: fmt.Sprintf("%s has %s %s with no committed read position beside %d that have one: added while the process ran, it stops a running process", name, plural(len(missing), "partition", "partitions"), joinInts(missing), len(have))})
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
