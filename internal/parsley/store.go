package parsley

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"maps"
	"runtime"
	"slices"
	"sync"

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
//
// Keys and values are copied into an arena of byte chunks and found
// through an index from the key's hash to a slot: nothing in it holds a
// pointer but the chunk list, so the garbage collector does not walk a
// million-entry store, and a key already present costs no allocation. What
// replaced or deleted values leave behind is reclaimed by compaction, which
// copies the live entries into fresh chunks once the dead bytes are half
// the live ones: the arena stays within about 1.5 times the live store.
type Store struct {
	partition int32
	seed      maphash.Seed
	index     map[uint64]int32 // key hash → first slot of its chain
	slots     slotPages
	free      []int32 // slots of deleted keys, for reuse
	live      int
	arena     arena
	liveBytes int // key and value bytes of the live entries
	deadBytes int // arena bytes no live entry uses

	decoded *Task // Decode's result until the next Apply

	// Set by NewStore (and slots.size); tests shrink them to force
	// compactions, hash chains and pages of slots.
	compactMin int
	hashMask   uint64
}

// slot is one live key, or a free one (live false).
type slot struct {
	offset     int64
	hash       uint64
	key, value span
	next       int32 // next slot of the same hash, −1 at the chain's end
	live       bool
}

// slotPages holds slots in pages of slotPageSize: a store growing to a
// million keys never copies its slots to a doubled array, nor leaves the
// old arrays to the garbage collector (they were most of a big read's
// allocations).
type slotPages struct {
	pages [][]slot
	n     int32
	size  int32 // slots a page holds: slotPageSize, less in tests
}

const slotPageSize = 4096

func (p *slotPages) len() int32 { return p.n }

func (p *slotPages) at(i int32) *slot { return &p.pages[i/p.size][i%p.size] }

// add appends sl and returns its index.
func (p *slotPages) add(sl slot) int32 {
	k := int(p.n / p.size)
	switch {
	case k == len(p.pages) && k == 0:
		// The first page grows as a slice does: most stores (an idle
		// fleet's tasks) hold a few keys.
		p.pages = append(p.pages, nil)
	case k == len(p.pages):
		p.pages = append(p.pages, make([]slot, 0, p.size))
	}
	p.pages[k] = append(p.pages[k], sl)
	p.n++
	return p.n - 1
}

// span is where bytes lie in the arena.
type span struct{ chunk, off, n uint32 }

// arena holds bytes that are never changed once written: a decoded task
// aliases them, and a compaction starts new chunks instead of moving bytes
// in old ones.
type arena struct{ chunks [][]byte }

const (
	// The arena's chunks double from firstChunk to chunkSize: a store of a
	// few entries (most tasks of an idle fleet, which the exporter keeps
	// by the thousand) costs about its bytes, not a 64 KiB chunk.
	firstChunk = 512
	chunkSize  = 64 << 10
	// compactMin is the least dead bytes worth a compaction: a small store
	// lives with its garbage.
	compactMin = 1 << 20
)

func (a *arena) add(b []byte) span {
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < len(b) {
		size := chunkSize
		if n < 7 {
			size = firstChunk << n
		}
		a.chunks = append(a.chunks, make([]byte, 0, max(size, len(b))))
		n++
	}
	c := a.chunks[n-1]
	sp := span{chunk: uint32(n - 1), off: uint32(len(c)), n: uint32(len(b))}
	a.chunks[n-1] = append(c, b...)
	return sp
}

// bytes returns the bytes at sp, capped so that an append by the caller
// cannot reach the next entry; never nil.
func (a *arena) bytes(sp span) []byte {
	return a.chunks[sp.chunk][sp.off : sp.off+sp.n : sp.off+sp.n]
}

// NewStore returns an empty store for changelog partition p.
func NewStore(p int32) *Store {
	return &Store{partition: p, seed: maphash.MakeSeed(), index: map[uint64]int32{}, slots: slotPages{size: slotPageSize}, compactMin: compactMin, hashMask: ^uint64(0)}
}

func (s *Store) hash(key []byte) uint64 { return maphash.Bytes(s.seed, key) & s.hashMask }

// Partition is the changelog partition, which is the task.
func (s *Store) Partition() int32 { return s.partition }

// Len is the number of live keys.
func (s *Store) Len() int { return s.live }

// find returns the slot of key and its chain's predecessor (−1 when
// first), or −1.
func (s *Store) find(h uint64, key []byte) (at, prev int32) {
	i, ok := s.index[h]
	if !ok {
		return -1, -1
	}
	prev = -1
	for i >= 0 {
		sl := s.slots.at(i)
		if sl.live && sl.hash == h && bytes.Equal(s.arena.bytes(sl.key), key) {
			return i, prev
		}
		prev, i = i, sl.next
	}
	return -1, -1
}

// Value returns the live value of key, which the store owns.
func (s *Store) Value(key []byte) ([]byte, bool) {
	i, _ := s.find(s.hash(key), key)
	if i < 0 {
		return nil, false
	}
	return s.arena.bytes(s.slots.at(i).value), true
}

// Apply applies one committed changelog entry at offset: a null value
// deletes the key, anything else replaces its value. The store keeps its
// own copies of key and value, and never changes a value it stored (a new
// value is a new copy), so a Task decoded from it may alias them.
func (s *Store) Apply(offset int64, key, value []byte) {
	s.decoded = nil
	h := s.hash(key)
	i, prev := s.find(h, key)
	switch {
	case value == nil && i < 0:
		return
	case value == nil:
		sl := s.slots.at(i)
		if prev < 0 {
			if sl.next < 0 {
				delete(s.index, h)
			} else {
				s.index[h] = sl.next
			}
		} else {
			s.slots.at(prev).next = sl.next
		}
		n := int(sl.key.n + sl.value.n)
		s.liveBytes -= n
		s.deadBytes += n
		*sl = slot{next: -1}
		s.free = append(s.free, i)
		s.live--
	case i >= 0:
		sl := s.slots.at(i)
		s.liveBytes += len(value) - int(sl.value.n)
		s.deadBytes += int(sl.value.n)
		sl.offset, sl.value = offset, s.arena.add(value)
	default:
		sl := slot{offset: offset, hash: h, key: s.arena.add(key), value: s.arena.add(value), next: -1, live: true}
		if head, ok := s.index[h]; ok {
			sl.next = head
		}
		if n := len(s.free); n > 0 {
			i = s.free[n-1]
			s.free = s.free[:n-1]
			*s.slots.at(i) = sl
		} else {
			i = s.slots.add(sl)
		}
		s.index[h] = i
		s.liveBytes += len(key) + len(value)
		s.live++
	}
	if s.deadBytes > s.compactMin && 2*s.deadBytes > s.liveBytes {
		s.compact()
	}
}

// DropBelow removes the live entries written below offset logStart and
// returns how many it removed: what a log whose start moved past them
// (DeleteRecords, retention) no longer holds, so that the store is the one
// a read from the log start rebuilds — a store purged whole is empty, as
// Parsley finds it at its next start.
func (s *Store) DropBelow(logStart int64) int {
	var keys [][]byte
	for i := range s.slots.len() {
		if sl := s.slots.at(i); sl.live && sl.offset < logStart {
			keys = append(keys, slices.Clone(s.arena.bytes(sl.key)))
		}
	}
	for _, k := range keys {
		s.Apply(logStart, k, nil)
	}
	return len(keys)
}

// compact copies the live entries into fresh chunks and, when most slots
// are free, renumbers the slots and rebuilds the index. The old chunks are
// left as they are, for any task decoded from them.
func (s *Store) compact() {
	var a arena
	rebuild := len(s.free) > int(s.slots.len())/2
	slots := slotPages{size: s.slots.size}
	for i := range s.slots.len() {
		sl := s.slots.at(i)
		if !sl.live {
			continue
		}
		sl.key = a.add(s.arena.bytes(sl.key))
		sl.value = a.add(s.arena.bytes(sl.value))
		if rebuild {
			slots.add(*sl)
		}
	}
	s.arena, s.deadBytes = a, 0
	if !rebuild {
		return
	}
	s.slots, s.free = slots, nil
	s.index = make(map[uint64]int32, int(slots.len()))
	for i := range s.slots.len() {
		sl := s.slots.at(i)
		sl.next = -1
		if head, ok := s.index[sl.hash]; ok {
			sl.next = head
		}
		s.index[sl.hash] = int32(i)
	}
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

// HeldAt returns the held record at offset; nil when none is. The queue is
// by rising position, so it is a binary search.
func (c *Channel) HeldAt(offset int64) *HeldRecord {
	i, ok := slices.BinarySearchFunc(c.Held, offset, func(h Held, off int64) int { return cmp.Compare(h.Offset, off) })
	if !ok {
		return nil
	}
	return &c.Held[i].Record
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
// valid however the store goes on. Until the next Apply every Decode
// returns the same task (a process's reading decodes each store for its
// bindings, its start check and its diagnosis): read it, never change it.
func (s *Store) Decode() *Task {
	if s.decoded != nil {
		return s.decoded
	}
	s.decoded = s.decode()
	return s.decoded
}

func (s *Store) decode() *Task {
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
	corrupt := func(key []byte, v liveValue, err error) {
		t.Corrupt = append(t.Corrupt, &CorruptError{Partition: s.partition, Offset: v.offset, Key: bytes.Clone(key), Reason: err.Error()})
	}
	// Held entries are decoded in a second pass, channel by channel in
	// position order, into one array sized for them all: the queues come
	// out sorted and are never regrown.
	type heldAt struct {
		bucket, slot int32
		pos          int64
	}
	var held []heldAt
	buckets := map[clock.Channel]int32{}
	var bucketCh []clock.Channel
	var bucketN []int
	for i := range s.slots.len() {
		sl := s.slots.at(i)
		if !sl.live {
			continue
		}
		key := s.arena.bytes(sl.key)
		v := liveValue{offset: sl.offset, value: s.arena.bytes(sl.value)}
		k, err := ParseKey(key)
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
			b, ok := buckets[k.Channel]
			if !ok {
				b = int32(len(bucketCh))
				buckets[k.Channel] = b
				bucketCh = append(bucketCh, k.Channel)
				bucketN = append(bucketN, 0)
			}
			bucketN[b]++
			held = append(held, heldAt{bucket: b, slot: int32(i), pos: k.Position})
		}
	}
	if len(held) > 0 {
		// A counting sort by channel, then each channel's run by position
		// (already in order, mostly: a task writes its queue in order).
		base := make([]int, len(bucketN)+1)
		for b, n := range bucketN {
			base[b+1] = base[b] + n
		}
		byChan := make([]heldAt, len(held))
		next := slices.Clone(base[:len(bucketN)])
		for _, h := range held {
			byChan[next[h.bucket]] = h
			next[h.bucket]++
		}
		held = nil
		all := make([]Held, len(byChan))
		var causes []clock.Entry // the held records' causes, carved from shared blocks
		for b, ch := range bucketCh {
			run := byChan[base[b]:base[b+1]]
			slices.SortFunc(run, func(x, y heldAt) int { return cmp.Compare(x.pos, y.pos) })
			for _, h := range run {
				sl := s.slots.at(h.slot)
				v := liveValue{offset: sl.offset, value: s.arena.bytes(sl.value)}
				rec, err := parseHeldRecord(v.value, &causes)
				if err != nil {
					corrupt(s.arena.bytes(sl.key), v, err)
					continue
				}
				c := channel(ch)
				if c.Held == nil {
					c.Held = all[base[b]:base[b]:base[b+1]]
				}
				c.Held = append(c.Held, Held{Offset: h.pos, Record: rec})
			}
		}
	}
	if t.Version == 0 && s.live > 0 && !slices.ContainsFunc(t.Corrupt, func(e *CorruptError) bool { return len(e.Key) == 1 && e.Key[0] == byte(TagVersion) }) {
		t.Corrupt = append(t.Corrupt, &CorruptError{Partition: s.partition, Offset: -1, Reason: "entries present but no version key"})
	}
	t.Channels = slices.SortedFunc(maps.Values(chans), func(a, b *Channel) int { return a.Channel.Compare(b.Channel) })
	slices.SortFunc(t.Corrupt, func(a, b *CorruptError) int { return cmp.Compare(a.Offset, b.Offset) })
	return t
}

type liveValue struct {
	offset int64
	value  []byte
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

// DecodeAll decodes every partition's store (Store.Decode), as many at
// once as there are cores: the stores share nothing, and a process read
// decodes them all before anything else looks at them.
func (c *Changelog) DecodeAll() {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, pr := range c.parts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			pr.Store.Decode()
		})
	}
	wg.Wait()
}

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
