package parsley

import (
	"strings"

	"github.com/causalctl/causalctl/internal/record"
)

// The reasons the cluster can show beside the start check's own: a stop
// Parsley names at its first fetch, on holding a record, at a receipt, or
// one it records no reason for.
const (
	// ReasonSubstrateMisconfigured: the cluster is set up in a way Parsley
	// cannot run on (a held record over the changelog's
	// max.message.bytes, a foreign member in the application's group, a
	// topic without a topic ID).
	ReasonSubstrateMisconfigured Reason = "SUBSTRATE_MISCONFIGURED"
	// ReasonMetadataBudgetExceeded: the causal frontier, or a received
	// record's causes header, outgrew metadataBudgetBytes.
	ReasonMetadataBudgetExceeded Reason = "METADATA_BUDGET_EXCEEDED"
	// ReasonOutOfOrderFeed: records arrive on a channel the store records
	// as gone (fed to its end): the identity check's verdict was wrong.
	ReasonOutOfOrderFeed Reason = "OUT_OF_ORDER_FEED"
	// StopSourceTopicMissing: a received topic does not exist. Parsley
	// records no refusal reason: the start fails at resolution (a running
	// process stops at its next rebalance) until the topic is restored or
	// removed from the declaration.
	StopSourceTopicMissing Reason = "SOURCE_TOPIC_MISSING"
	// StopPartitionAdded: a received partition has no committed read
	// position while the topic's other partitions have one — added while
	// the process ran. No refusal reason: the running process stops, and
	// a restart pre-commits it at earliest.
	StopPartitionAdded Reason = "PARTITION_ADDED"
)

// The reasons only the running application can show: a handler's or a
// serde's doing, or an engine invariant, none of which leaves a trace on
// the cluster to predict it from (docs/refusals.md lists them).
const (
	ReasonCoveredPositionFed    Reason = "COVERED_POSITION_FED"
	ReasonHandlerNullEffects    Reason = "HANDLER_RETURNED_NULL_EFFECTS"
	ReasonUndeclaredEmission    Reason = "EMISSION_TO_UNDECLARED_CHANNEL"
	ReasonUndeclaredStore       Reason = "STATE_ACCESS_TO_UNDECLARED_STORE"
	ReasonReservedHeader        Reason = "RESERVED_HEADER_USED"
	ReasonPayloadUnserializable Reason = "APPLICATION_PAYLOAD_UNSERIALIZABLE"
	ReasonPayloadUndecodable    Reason = "APPLICATION_PAYLOAD_UNDECODABLE"
)

// DefaultMetadataBudget is Parsley's default metadataBudgetBytes, and
// BudgetWarnPercent the share of it at which Parsley logs its warning.
const (
	DefaultMetadataBudget = 256 << 10
	BudgetWarnPercent     = 80
)

// Unshowable lists the reasons the cluster cannot show: the start check
// never predicts them.
func Unshowable() []Reason {
	return []Reason{ReasonCoveredPositionFed, ReasonHandlerNullEffects, ReasonUndeclaredEmission, ReasonUndeclaredStore,
		ReasonReservedHeader, ReasonPayloadUnserializable, ReasonPayloadUndecodable}
}

// Triage is the runbook's answer for a reason: whether a restart alone
// clears it, whether a reset is called for, and what to check first.
type Triage struct {
	// Restart is the triage table's "a restart alone?" answer; Clears
	// says it is yes as things stand (no operator act needed first).
	Restart string
	Clears  bool
	// Reset is the table's "a reset?" answer.
	Reset string
	// Check is what the runbook has an operator look at first.
	Check string
	// Recorded says Parsley records the reason (status().refusalReason);
	// a stop without one shows only in the failure detail.
	Recorded bool
}

// Triage returns the runbook's answers for r.
func (r Reason) Triage() Triage {
	switch r {
	case ReasonOrderingStateLost:
		return Triage{Restart: "no", Reset: "yes, unless the changelog can be restored", Recorded: true,
			Check: "the ordering changelog's existence and partition count (kafka-topics --describe) and its cleanup.policy, which must be compact (kafka-configs --describe)"}
	case ReasonUnknownFormat:
		return Triage{Restart: "with the build that wrote the state, for a version mismatch", Reset: "otherwise yes", Recorded: true,
			Check: "which shape: a format version this build cannot read, state without its version entry (the changelog's cleanup.policy), or a corrupt entry (causalctl state names it)"}
	case ReasonTaskWidthChanged:
		return Triage{Restart: "after restoring the declaration", Reset: "otherwise yes", Recorded: true,
			Check: "whether the declaration changed or partitions were added to the widest received topic (kafka-topics --describe)"}
	case ReasonIdentityChanged:
		return Triage{Restart: "no", Reset: "yes", Recorded: true,
			Check: "the topic's current id (kafka-topics --describe) against the one the state was built for, and whether the recreation was intended"}
	case ReasonDeletedWithUndelivered:
		return Triage{Restart: "no", Reset: "yes", Recorded: true,
			Check: "what was held on the channel (causalctl holds --app) and whether the topic is coming back under its name"}
	case ReasonRemovedWithHeld:
		return Triage{Restart: "after restoring the channel", Reset: "otherwise yes", Recorded: true,
			Check: "that the topic still exists, and its held records (causalctl holds --app)"}
	case ReasonPositionsDiscarded:
		return Triage{Restart: "no", Reset: "yes", Recorded: true,
			Check: "the group's committed offset (kafka-consumer-groups --describe) against the log start (kafka-get-offsets --time earliest), and the topic's retention.ms and retention.bytes against the stop or lag"}
	case ReasonUndecodableMetadata:
		return Triage{Restart: "no", Reset: "only a reset that starts past the message", Recorded: true,
			Check: "the record's headers (kafka-console-consumer --offset … --property print.headers=true) to find its producer"}
	case ReasonSubstrateMisconfigured:
		return Triage{Restart: "after the cluster fix", Reset: "no", Recorded: true,
			Check: "which shape: the changelog's max.message.bytes against the held record, the group's members (kafka-consumer-groups --describe --members), or the brokers' version"}
	case ReasonMetadataBudgetExceeded:
		return Triage{Restart: "after raising the budget and the record limits", Reset: "no", Recorded: true,
			Check: "the frontier's width (the partition counts of the upstream closure) or the record's causes header against metadataBudgetBytes, and whether a new or widened topic joined the closure"}
	case ReasonOutOfOrderFeed:
		return Triage{Restart: "once, for the in-execution shape", Reset: "yes, for the dead-channel shape", Recorded: true,
			Check: "the channel's topic id (kafka-topics --describe): it still exists though the state records it as gone; keep the logs of the task initialisation that gave that verdict"}
	case StopSourceTopicMissing:
		return Triage{Restart: "yes, once the topic is restored or removed from the declaration", Reset: "no",
			Check: "kafka-topics --describe for the topic, and whether it left the declaration on purpose"}
	case StopPartitionAdded:
		return Triage{Restart: "yes: the start pre-commits the new partition at earliest", Clears: true, Reset: "no",
			Check: "the topic's partition count (kafka-topics --describe) against the group's committed offsets (kafka-consumer-groups --describe)"}
	case ReasonCoveredPositionFed:
		return Triage{Restart: "once; a recurrence is reported, not restarted", Clears: true, Reset: "no", Recorded: true,
			Check: "the log around the stop and the last status logged before it"}
	case ReasonHandlerNullEffects, ReasonReservedHeader, ReasonPayloadUnserializable:
		return Triage{Restart: "after the code fix", Reset: "no", Recorded: true, Check: "the failure detail: it names the topic and the step"}
	case ReasonUndeclaredEmission, ReasonUndeclaredStore:
		return Triage{Restart: "after the declaration fix", Reset: "no", Recorded: true, Check: "the failure detail: it names the channel or store"}
	case ReasonPayloadUndecodable:
		return Triage{Restart: "after the serde fix, or once a serde's dependency is back", Reset: "no", Recorded: true,
			Check: "whether the deserializer's dependency (a schema registry, a key service) was reachable; else read the record by hand"}
	}
	return Triage{}
}

// ForeignMember says why member m of application app's group is not one
// of the process's own consumers, "" when it is: a stale bootstrap member
// (client id parsley-bootstrap-…), or a consumer whose client id is
// neither the application id nor begins with it (Kafka Streams names its
// consumers APP-…), i.e. a consumer using the application id as its
// group.id. Either persists as a group-protocol conflict.
func ForeignMember(app string, m record.GroupMember) string {
	switch {
	case strings.HasPrefix(m.ClientID, "parsley-bootstrap-"):
		return "a bootstrap member that never left"
	case m.ClientID == app || strings.HasPrefix(m.ClientID, app+"-"):
		return ""
	}
	return "a consumer using the application id as its group.id"
}

// FrontierBytes estimates the bytes a causal frontier over topics takes
// on the wire, given each topic's partition count: about 26 bytes for a
// topic's first partition and 9 for each further one (Parsley's model).
func FrontierBytes(partitions map[string]int32) int64 {
	var n int64
	for _, c := range partitions {
		if c > 0 {
			n += 26 + 9*int64(c-1)
		}
	}
	return n
}
