// Package parsleytest writes Parsley-shaped worlds for tests: a process's
// ordering changelog (SPEC §6) as the process writes it — store entries
// keyed by tag — for tests of the commands that read one (state,
// processes, exporter) in any package. kafkatest.Transact commits them as
// the process does.
package parsleytest

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/parsley"
)

// StoreEntry is the changelog record of app's task (its changelog
// partition) setting key k to v; a nil v is a tombstone.
func StoreEntry(app string, task int32, k parsley.Key, v []byte) *kgo.Record {
	return &kgo.Record{Topic: parsley.ChangelogTopic(app), Partition: task, Key: parsley.AppendKey(nil, k), Value: v}
}

// Held is one held record of a task's store.
type Held struct {
	Channel clock.Channel
	Offset  int64
	// Timestamp is when the record was written (Unix ms, −1 unknown).
	Timestamp int64
	Value     []byte
	Causes    []clock.Entry
}

// Entry is h's store entry in app's task.
func (h Held) Entry(app string, task int32) *kgo.Record {
	v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: h.Timestamp, Key: []byte("k"), Value: h.Value, Causes: clock.MustNew(h.Causes...).Entries()})
	return StoreEntry(app, task, parsley.Key{Tag: parsley.TagHeld, Channel: h.Channel, Position: h.Offset}, v)
}

// Release is the tombstone of h in app's task: delivered.
func (h Held) Release(app string, task int32) *kgo.Record {
	return StoreEntry(app, task, parsley.Key{Tag: parsley.TagHeld, Channel: h.Channel, Position: h.Offset}, nil)
}

// FedUpTo is the entry saying app's task was fed ch up to position pos.
func FedUpTo(app string, task int32, ch clock.Channel, pos int64) *kgo.Record {
	return StoreEntry(app, task, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, parsley.AppendPosition(nil, pos))
}

// Bindings are the entries a task's store begins with: the format
// version and the topic ID bound to each name received.
func Bindings(app string, task int32, names map[string]clock.TopicID) []*kgo.Record {
	recs := []*kgo.Record{StoreEntry(app, task, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})}
	for name, id := range names {
		recs = append(recs, StoreEntry(app, task, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, id)))
	}
	return recs
}
