package record

// Group is a process's consumer group as the brokers describe it
// (DescribeGroups): its state and members, with what each subscribed to
// and was assigned.
type Group struct {
	Group string
	// State is the group's state as the coordinator names it: Stable,
	// PreparingRebalance, CompletingRebalance, Empty or Dead (a group
	// that does not exist is Dead).
	State        string
	ProtocolType string // "consumer" for consumers and Kafka Streams
	Protocol     string // the assignor
	Members      []GroupMember
}

// GroupMember is one member of a group, with what it subscribed to and
// what it was assigned, decoded from the consumer protocol.
type GroupMember struct {
	MemberID   string
	InstanceID string // "" when none (static membership, KIP-345)
	ClientID   string
	ClientHost string
	// Subscription is the topics the member asked for, sorted; nil when
	// its metadata is not the consumer protocol's.
	Subscription []string
	// Assignment is, per topic, the partitions it was assigned, sorted.
	Assignment map[string][]int32
}
