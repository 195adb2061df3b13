package parsley

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
)

// CorruptError is a store entry that cannot be read: the changelog
// partition, the offset of the entry's live value, and its key.
type CorruptError struct {
	Partition int32
	Offset    int64 // −1 when no one entry is at fault (a missing version)
	Key       []byte
	Reason    string
}

func (e *CorruptError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("corrupt ordering state: partition %d: %s", e.Partition, e.Reason)
	}
	return fmt.Sprintf("corrupt ordering state: partition %d offset %d key %s: %s",
		e.Partition, e.Offset, hexKey(e.Key), e.Reason)
}

// Store is the live content of one changelog partition: the last value of
// every key, tombstoned keys gone. Apply entries in changelog order; only
// live entries are kept, so its size follows the store, not the changelog.
type Store struct {
	partition int32
	live      map[string]liveValue
}

type liveValue struct {
	offset int64
	value  []byte
}

// NewStore returns an empty store for changelog partition p.
func NewStore(p int32) *Store { return &Store{partition: p, live: map[string]liveValue{}} }

// Partition is the changelog partition, which is the task.
func (s *Store) Partition() int32 { return s.partition }

// Len is the number of live keys.
func (s *Store) Len() int { return len(s.live) }

// Value returns the live value of key, which the store owns.
func (s *Store) Value(key []byte) ([]byte, bool) {
	v, ok := s.live[string(key)]
	return v.value, ok
}

// Apply applies one committed changelog entry at offset: a null value
// deletes the key, anything else replaces its value. The store keeps its
// own copies of key and value, and never changes a value it stored (a new
// value is a new copy), so a Task decoded from it may alias them.
func (s *Store) Apply(offset int64, key, value []byte) {
	if value == nil {
		delete(s.live, string(key))
		return
	}
	s.live[string(key)] = liveValue{offset: offset, value: append([]byte(nil), value...)}
}

// Task is one task's ordering state, decoded from its store.
type Task struct {
	// Task is the task number: the changelog partition.
	Task int32
	// Version is the store format version; 0 when the store is empty.
	Version int
	// Names binds topic names to topic IDs (the `n` entries).
	Names map[string]clock.TopicID
	// Channels holds every channel the store names, by channel order.
	Channels []*Channel
	// Corrupt lists the entries that could not be read, by offset; the rest
	// of the task is as read.
	Corrupt []*CorruptError
}

// Channel is one channel's state in a task. A position is −1 when the
// store has no entry for it.
type Channel struct {
	Channel       clock.Channel
	FedUpTo       int64
	Frontier      int64
	DeliveredPast int64
	// Held is the hold queue, by position: the first is the head.
	Held []Held
}

// Held is one held record at its position.
type Held struct {
	Offset int64
	Record HeldRecord
}

// Deleted reports whether the store marks the channel's topic deleted.
func (c *Channel) Deleted() bool { return c.FedUpTo == DeletedPosition }

// Settled is SPEC §6's settled position: the lowest held position − 1 when
// the channel holds anything, else fed-up-to.
func (c *Channel) Settled() int64 {
	if len(c.Held) > 0 {
		return c.Held[0].Offset - 1
	}
	return c.FedUpTo
}

// Head returns the held head, if any.
func (c *Channel) Head() (*Held, bool) {
	if len(c.Held) == 0 {
		return nil, false
	}
	return &c.Held[0], true
}

// HeldCount is the number of records the task holds.
func (t *Task) HeldCount() int {
	n := 0
	for _, c := range t.Channels {
		n += len(c.Held)
	}
	return n
}

// Channel returns the state of ch, or nil.
func (t *Task) Channel(ch clock.Channel) *Channel {
	i, ok := slices.BinarySearchFunc(t.Channels, ch, func(c *Channel, ch clock.Channel) int { return c.Channel.Compare(ch) })
	if !ok {
		return nil
	}
	return t.Channels[i]
}

// Decode decodes the live store into a task. Corrupt entries are listed in
// Task.Corrupt and left out; everything else is decoded. The task's held
// records alias the store's values, which Apply never changes: they stay
// valid however the store goes on.
func (s *Store) Decode() *Task {
	t := &Task{Task: s.partition, Names: map[string]clock.TopicID{}}
	chans := map[clock.Channel]*Channel{}
	channel := func(ch clock.Channel) *Channel {
		c := chans[ch]
		if c == nil {
			c = &Channel{Channel: ch, FedUpTo: -1, Frontier: -1, DeliveredPast: -1}
			chans[ch] = c
		}
		return c
	}
	corrupt := func(key string, v liveValue, err error) {
		t.Corrupt = append(t.Corrupt, &CorruptError{Partition: s.partition, Offset: v.offset, Key: []byte(key), Reason: err.Error()})
	}
	for key, v := range s.live {
		k, err := ParseKey([]byte(key))
		if err != nil {
			corrupt(key, v, err)
			continue
		}
		switch k.Tag {
		case TagVersion:
			ver, err := ParseVersion(v.value)
			if err != nil {
				corrupt(key, v, err)
				continue
			}
			t.Version = ver
		case TagFedUpTo, TagFrontier, TagDeliveredPast:
			p, err := ParsePosition(v.value)
			if err != nil {
				corrupt(key, v, err)
				continue
			}
			c := channel(k.Channel)
			switch k.Tag {
			case TagFedUpTo:
				c.FedUpTo = p
			case TagFrontier:
				c.Frontier = p
			default:
				c.DeliveredPast = p
			}
		case TagName:
			id, err := ParseNameValue(v.value)
			if err != nil {
				corrupt(key, v, err)
				continue
			}
			t.Names[k.Name] = id
		case TagHeld:
			rec, err := ParseHeldRecord(v.value)
			if err != nil {
				corrupt(key, v, err)
				continue
			}
			c := channel(k.Channel)
			c.Held = append(c.Held, Held{Offset: k.Position, Record: rec})
		}
	}
	if t.Version == 0 && len(s.live) > 0 && !slices.ContainsFunc(t.Corrupt, func(e *CorruptError) bool { return len(e.Key) == 1 && e.Key[0] == byte(TagVersion) }) {
		t.Corrupt = append(t.Corrupt, &CorruptError{Partition: s.partition, Offset: -1, Reason: "entries present but no version key"})
	}
	t.Channels = slices.SortedFunc(maps.Values(chans), func(a, b *Channel) int { return a.Channel.Compare(b.Channel) })
	for _, c := range t.Channels {
		slices.SortFunc(c.Held, func(a, b Held) int { return cmp.Compare(a.Offset, b.Offset) })
	}
	slices.SortFunc(t.Corrupt, func(a, b *CorruptError) int { return cmp.Compare(a.Offset, b.Offset) })
	return t
}

// TaskScope returns task p's scope (SPEC §6): partition p of every received
// topic that has a partition p, given each topic's partition count; sorted.
func TaskScope(p int32, partitions map[clock.TopicID]int32) []clock.Channel {
	var scope []clock.Channel
	for id, n := range partitions {
		if p < n {
			scope = append(scope, clock.Channel{Topic: id, Partition: p})
		}
	}
	slices.SortFunc(scope, clock.Channel.Compare)
	return scope
}

// Changelog is a changelog topic as read: a Store per partition, with how
// far each partition's read got and the partition's offsets when the read
// began. Feed it in changelog order per partition.
type Changelog struct {
	Topic   string
	TopicID clock.TopicID
	parts   map[int32]*PartitionRead
}

// PartitionRead is one changelog partition as read.
type PartitionRead struct {
	Store *Store
	// ReadTo is the position the read reached: every committed entry below
	// it was applied; −1 when nothing was read.
	ReadTo int64
	// The partition's offsets when the read began; −1 when unknown.
	LogStart, LastStable, HighWatermark int64
	// Entries counts the committed entries applied, tombstones included.
	Entries int64
}

// BehindTransaction reports whether the read stopped below the high
// watermark taken when it began: what lies from ReadTo on sits behind a
// transaction that was still open (a read_committed read cannot pass it).
func (p *PartitionRead) BehindTransaction() bool {
	return p.HighWatermark >= 0 && p.ReadTo >= 0 && p.ReadTo < p.HighWatermark
}

// NewChangelog returns an empty read of topic.
func NewChangelog(topic string, id clock.TopicID) *Changelog {
	return &Changelog{Topic: topic, TopicID: id, parts: map[int32]*PartitionRead{}}
}

// Partition returns partition p's read, adding it when new.
func (c *Changelog) Partition(p int32) *PartitionRead {
	pr := c.parts[p]
	if pr == nil {
		pr = &PartitionRead{Store: NewStore(p), ReadTo: -1, LogStart: -1, LastStable: -1, HighWatermark: -1}
		c.parts[p] = pr
	}
	return pr
}

// Partitions returns the partitions read, sorted.
func (c *Changelog) Partitions() []int32 { return slices.Sorted(maps.Keys(c.parts)) }

// Apply applies the committed entry at offset of partition p.
func (c *Changelog) Apply(p int32, offset int64, key, value []byte) {
	pr := c.Partition(p)
	pr.Store.Apply(offset, key, value)
	pr.Entries++
	pr.ReadTo = max(pr.ReadTo, offset+1)
}

// Reached notes that the read of partition p reached position.
func (c *Changelog) Reached(p int32, position int64) {
	pr := c.Partition(p)
	pr.ReadTo = max(pr.ReadTo, position)
}

// Has reports whether partition p was read.
func (c *Changelog) Has(p int32) bool {
	_, ok := c.parts[p]
	return ok
}
