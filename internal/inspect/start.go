package inspect

import (
	"maps"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/parsley"
)

// StartInput gathers what parsley.CheckStart reads from the process:
// every task's store, the group's committed offsets by topic name, the
// cluster's topics (IDs, partition counts, log starts) and the declaration
// checked. receives is a declaration about to be deployed; nil checks
// today's — the members' subscriptions while the process runs, else the
// store's bindings.
func (p *Process) StartInput(receives []string) parsley.StartInput {
	in := parsley.StartInput{ChangelogExists: !p.ChangelogMissing, Partial: p.Captured, Cluster: map[string]parsley.TopicFacts{},
		App: p.App, ChangelogCleanup: p.ChangelogCleanup, ChangelogMaxBytes: p.ChangelogMaxBytes}
	if p.Group != nil {
		in.Members = p.Group.Members
	}
	if parts := p.Changelog.Partitions(); len(parts) > 0 {
		in.ChangelogPartitions = clock.PartitionCount(parts[len(parts)-1])
	}
	for _, part := range p.Changelog.Partitions() {
		in.Tasks = append(in.Tasks, p.Changelog.Partition(part).Store.Decode())
	}
	if p.Committed != nil {
		in.Committed = map[parsley.TopicPartition]int64{}
		for ch, off := range p.Committed {
			if name, ok := p.Names.Name(ch.Topic); ok {
				in.Committed[parsley.TopicPartition{Topic: name, Partition: ch.Partition}] = off
			}
		}
	}
	switch sub := p.Subscribed(); {
	case receives != nil:
		in.Receives, in.Declared = slices.Clone(receives), true
	case sub != nil:
		in.Receives, in.Declared = sub, true
	}
	for _, task := range slices.Sorted(maps.Keys(p.ReadOn)) {
		for _, h := range p.ReadOn[task].Held {
			name, _ := p.Names.Name(h.Channel.Topic)
			in.Held = append(in.Held, parsley.HeldSize{Topic: name, Channel: h.Channel, Offset: h.Offset, Bytes: h.Bytes})
		}
		if f := p.ReadOn[task].Failed; f != nil {
			name, _ := p.Names.Name(f.Channel.Topic)
			in.Undecodable = append(in.Undecodable, parsley.UndecodableRecord{Topic: name, Channel: f.Channel, Offset: f.Offset, Code: string(f.Code)})
		}
	}
	named := map[clock.TopicID][]string{}
	for name, id := range p.IDs {
		in.Cluster[name] = parsley.TopicFacts{ID: id, Partitions: p.Counts[name], LogStarts: map[int32]int64{}, LogEnds: map[int32]int64{}}
		named[id] = append(named[id], name)
	}
	// By the facts, not by partition up to the count: a count is what a
	// broker claims, and may be 2^31−1.
	for ch, f := range p.Facts {
		for _, name := range named[ch.Topic] {
			if ch.Partition < p.Counts[name] {
				in.Cluster[name].LogStarts[ch.Partition] = f.LogStart
				if f.HighWatermark >= 0 {
					in.Cluster[name].LogEnds[ch.Partition] = f.HighWatermark
				}
			}
		}
	}
	return in
}

// NextStart predicts the refusals of the process's next start (see
// StartInput for receives); none means the store and the cluster agree.
func (p *Process) NextStart(receives []string) []parsley.Refusal {
	return parsley.CheckStart(p.StartInput(receives))
}

// StartWarnings lists what Parsley warns of before refusing, or what
// leads to a refusal if left alone (parsley.CheckWarnings).
func (p *Process) StartWarnings(receives []string) []parsley.Warning {
	return parsley.CheckWarnings(p.StartInput(receives))
}
