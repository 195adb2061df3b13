package parsley

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

var (
	orders   = clock.TopicID{0x01, 1}
	payments = clock.TopicID{0x02, 2}
)

func key(k Key) []byte { return AppendKey(nil, k) }

func heldKey(ch clock.Channel, pos int64) []byte {
	return key(Key{Tag: TagHeld, Channel: ch, Position: pos})
}

func heldValue(ts int64, causes ...clock.Entry) []byte {
	return AppendHeldRecord(nil, &HeldRecord{Timestamp: ts, Key: []byte("k"), Value: []byte("v"), Causes: causes})
}

func TestStoreKeepsLastValueAndAppliesTombstones(t *testing.T) {
	o0 := clock.Channel{Topic: orders, Partition: 0}
	p0 := clock.Channel{Topic: payments, Partition: 0}
	s := NewStore(0)
	off := int64(0)
	put := func(k, v []byte) { s.Apply(off, k, v); off++ }
	put([]byte{'v'}, []byte{1})
	put(key(Key{Tag: TagName, Name: "orders"}), AppendNameValue(nil, orders))
	put(key(Key{Tag: TagFedUpTo, Channel: o0}), AppendPosition(nil, 4))
	put(heldKey(o0, 3), heldValue(100, clock.Entry{Channel: p0, Position: 9}))
	put(heldKey(o0, 4), heldValue(101))
	put(heldKey(o0, 2), heldValue(99)) // written out of order: the queue is by position
	put(heldKey(o0, 2), nil)           // delivered
	put(key(Key{Tag: TagFedUpTo, Channel: o0}), AppendPosition(nil, 7))
	put([]byte{'v'}, []byte{1}) // repeated, as every partition repeats it
	if s.Len() != 5 {
		t.Errorf("live keys %d, want 5 (tombstoned keys freed)", s.Len())
	}
	task := s.Decode()
	if len(task.Corrupt) != 0 {
		t.Fatalf("corrupt: %v", task.Corrupt)
	}
	if task.Version != 1 || task.Names["orders"] != orders {
		t.Errorf("version %d names %v", task.Version, task.Names)
	}
	c := task.Channel(o0)
	if c == nil || c.FedUpTo != 7 || len(c.Held) != 2 || c.Held[0].Offset != 3 || c.Held[1].Offset != 4 {
		t.Fatalf("channel %+v", c)
	}
	if c.Settled() != 2 {
		t.Errorf("settled %d, want 2 (head 3 − 1)", c.Settled())
	}
	if got := c.Held[0].Record.Causes; !slices.Equal(got, []clock.Entry{{Channel: p0, Position: 9}}) {
		t.Errorf("head causes %v", got)
	}
	if c.Frontier != -1 || c.DeliveredPast != -1 {
		t.Errorf("absent positions %d %d, want −1", c.Frontier, c.DeliveredPast)
	}
	if task.HeldCount() != 2 {
		t.Errorf("held %d", task.HeldCount())
	}
}

func TestStoreNamesCorruptEntries(t *testing.T) {
	o0 := clock.Channel{Topic: orders, Partition: 1}
	s := NewStore(1)
	s.Apply(10, []byte{'v'}, []byte{1})
	s.Apply(11, heldKey(o0, 3), heldValue(1))
	bad := heldValue(2)
	bad = append(bad, 0) // a byte after the last cause
	s.Apply(12, heldKey(o0, 5), bad)
	s.Apply(13, []byte{'x', 1}, []byte{1})
	s.Apply(14, heldKey(o0, 6), heldValue(3)[:5]) // corrupt, then replaced: not corrupt
	s.Apply(15, heldKey(o0, 6), heldValue(3))
	task := s.Decode()
	if len(task.Corrupt) != 2 {
		t.Fatalf("corrupt %v, want 2", task.Corrupt)
	}
	e := task.Corrupt[0]
	if e.Partition != 1 || e.Offset != 12 || !bytes.Equal(e.Key, heldKey(o0, 5)) {
		t.Errorf("first corrupt entry %+v", e)
	}
	for _, want := range []string{"partition 1", "offset 12", "bytes after the last cause"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
	if task.Corrupt[1].Offset != 13 {
		t.Errorf("second corrupt entry %+v", task.Corrupt[1])
	}
	if c := task.Channel(o0); c == nil || len(c.Held) != 2 || c.Held[0].Offset != 3 || c.Held[1].Offset != 6 {
		t.Errorf("the rest of the task lost: %+v", c)
	}
}

func TestStoreWithoutVersionIsCorrupt(t *testing.T) {
	s := NewStore(2)
	s.Apply(0, key(Key{Tag: TagFedUpTo, Channel: clock.Channel{Topic: orders}}), AppendPosition(nil, 1))
	task := s.Decode()
	if len(task.Corrupt) != 1 || task.Corrupt[0].Offset != -1 || !strings.Contains(task.Corrupt[0].Error(), "partition 2: entries present but no version key") {
		t.Fatalf("got %v", task.Corrupt)
	}
	if got := NewStore(0).Decode(); len(got.Corrupt) != 0 || got.Version != 0 {
		t.Errorf("an empty store is not corrupt: %+v", got)
	}
	s = NewStore(0)
	s.Apply(0, []byte{'v'}, []byte{2})
	if task := s.Decode(); len(task.Corrupt) != 1 || !strings.Contains(task.Corrupt[0].Reason, "unknown store version 2") {
		t.Errorf("version 2: %v", task.Corrupt)
	}
}

// TestStoreAgainstReference applies random changelogs to a Store and to a
// plain map of every entry ever written, replayed naively, and compares the
// decoded held queues and positions.
func TestStoreAgainstReference(t *testing.T) {
	chans := []clock.Channel{{Topic: orders, Partition: 0}, {Topic: orders, Partition: 3}, {Topic: payments, Partition: 0}}
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := NewStore(0)
		type write struct{ k, v []byte }
		var log []write
		add := func(k, v []byte) { s.Apply(int64(len(log)), k, v); log = append(log, write{k, v}) }
		add([]byte{'v'}, []byte{1})
		for range 50 + rng.IntN(200) {
			ch := chans[rng.IntN(len(chans))]
			switch rng.IntN(4) {
			case 0:
				add(key(Key{Tag: TagFedUpTo, Channel: ch}), AppendPosition(nil, rng.Int64N(100)))
			case 1:
				add(heldKey(ch, rng.Int64N(30)), heldValue(rng.Int64N(1e12), clock.Entry{Channel: chans[rng.IntN(3)], Position: rng.Int64N(50)}))
			case 2:
				add(heldKey(ch, rng.Int64N(30)), nil)
			case 3:
				add(key(Key{Tag: TagFrontier, Channel: ch}), AppendPosition(nil, rng.Int64N(100)))
			}
		}
		// The reference: for every key, its last write; a nil value is gone.
		last := map[string][]byte{}
		for _, w := range log {
			last[string(w.k)] = w.v
		}
		task := s.Decode()
		for _, ch := range chans {
			var wantHeld []int64
			for pos := int64(0); pos < 30; pos++ {
				if v := last[string(heldKey(ch, pos))]; v != nil {
					wantHeld = append(wantHeld, pos)
				}
			}
			wantFed := int64(-1)
			if v := last[string(key(Key{Tag: TagFedUpTo, Channel: ch}))]; v != nil {
				wantFed, _ = ParsePosition(v)
			}
			var gotHeld []int64
			gotFed := int64(-1)
			if c := task.Channel(ch); c != nil {
				for _, h := range c.Held {
					gotHeld = append(gotHeld, h.Offset)
					if !bytes.Equal(AppendHeldRecord(nil, &h.Record), last[string(heldKey(ch, h.Offset))]) {
						t.Fatalf("seed %d: %s@%d holds another value than its last write", seed, ch, h.Offset)
					}
				}
				gotFed = c.FedUpTo
			}
			if !reflect.DeepEqual(gotHeld, wantHeld) || gotFed != wantFed {
				t.Fatalf("seed %d %s: held %v fed %d; reference %v %d", seed, ch, gotHeld, gotFed, wantHeld, wantFed)
			}
		}
	}
}

func TestTaskScope(t *testing.T) {
	parts := map[clock.TopicID]int32{orders: 4, payments: 2}
	if got := TaskScope(3, parts); !slices.Equal(got, []clock.Channel{{Topic: orders, Partition: 3}}) {
		t.Errorf("task 3: %v", got)
	}
	if got := TaskScope(1, parts); len(got) != 2 || got[0].Topic != orders || got[1].Topic != payments {
		t.Errorf("task 1: %v", got)
	}
}

// A decoded task aliases the store's values: the store going on must not
// change it.
func TestDecodedTaskOutlivesTheStore(t *testing.T) {
	o0 := clock.Channel{Topic: orders, Partition: 0}
	s := NewStore(0)
	s.Apply(0, []byte{'v'}, []byte{1})
	value := heldValue(100, clock.Entry{Channel: clock.Channel{Topic: payments}, Position: 9})
	s.Apply(1, heldKey(o0, 3), value)
	task := s.Decode()
	before := AppendHeldRecord(nil, &task.Channel(o0).Held[0].Record)
	value[len(value)-1] = 0x7f                                                        // the caller reuses its buffer
	s.Apply(2, heldKey(o0, 3), heldValue(200, clock.Entry{Channel: o0, Position: 1})) // the key rewritten
	s.Apply(3, heldKey(o0, 3), nil)                                                   // and deleted
	if after := AppendHeldRecord(nil, &task.Channel(o0).Held[0].Record); !bytes.Equal(before, after) {
		t.Fatalf("the decoded record changed:\n%x\n%x", before, after)
	}
}

// TestStoreIndexAgainstMap applies random changelogs — a few dozen keys of
// every length, the empty key and empty values among them, rewritten and
// tombstoned — to a Store whose index is made to collide (hash chains of
// many keys) and whose arena compacts after a few dead bytes, and to a
// plain map. After every entry the store answers as the map does, its
// arena holds the live bytes and at most half as much again of garbage,
// and a task decoded earlier still reads as it did.
func TestStoreIndexAgainstMap(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 27))
		s := NewStore(0)
		s.compactMin = rng.IntN(200)
		s.hashMask = uint64(1)<<rng.IntN(4) - 1 // 1 to 8 chains
		s.slots.size = 1 + rng.Int32N(8)        // many pages of slots
		ref := map[string][]byte{}
		keys := make([][]byte, 1+rng.IntN(40))
		for i := range keys {
			keys[i] = make([]byte, rng.IntN(12))
			for j := range keys[i] {
				keys[i][j] = byte(rng.IntN(3)) // few distinct bytes: near-equal keys
			}
		}
		var early *Task
		var earlyHeld []byte
		o0 := clock.Channel{Topic: orders, Partition: 0}
		for off := range int64(300 + rng.IntN(700)) {
			k := keys[rng.IntN(len(keys))]
			var v []byte
			switch rng.IntN(3) {
			case 0: // a tombstone
			case 1:
				v = []byte{}
			default:
				v = make([]byte, 1+rng.IntN(60))
				for j := range v {
					v[j] = byte(rng.Uint32())
				}
			}
			s.Apply(off, k, v)
			if v == nil {
				delete(ref, string(k))
			} else {
				ref[string(k)] = bytes.Clone(v)
			}
			if len(v) > 0 {
				v[0] ^= 0xff // the caller reuses its buffer
			}
			if got, ok := s.Value(k); ok != (ref[string(k)] != nil) || !bytes.Equal(got, ref[string(k)]) {
				t.Fatalf("seed %d offset %d: key %x reads %x %v, want %x", seed, off, k, got, ok, ref[string(k)])
			}
			if s.Len() != len(ref) || int(s.slots.len())-len(s.free) != len(ref) {
				t.Fatalf("seed %d offset %d: %d live keys (%d slots, %d free), want %d", seed, off, s.Len(), s.slots.len(), len(s.free), len(ref))
			}
			arena := 0
			for _, c := range s.arena.chunks {
				arena += len(c)
			}
			if arena != s.liveBytes+s.deadBytes || s.deadBytes > max(s.compactMin, s.liveBytes/2) {
				t.Fatalf("seed %d offset %d: arena %d bytes, %d live, %d dead (compacting past %d)", seed, off, arena, s.liveBytes, s.deadBytes, s.compactMin)
			}
			if off == 100 {
				s.Apply(off, heldKey(o0, 7), heldValue(100, clock.Entry{Channel: o0, Position: 3}))
				early = s.Decode()
				earlyHeld = AppendHeldRecord(nil, &early.Channel(o0).Held[0].Record)
				s.Apply(off, heldKey(o0, 7), nil)
			}
		}
		for _, k := range keys {
			if got, ok := s.Value(k); ok != (ref[string(k)] != nil) || !bytes.Equal(got, ref[string(k)]) {
				t.Fatalf("seed %d: key %x reads %x %v at the end, want %x", seed, k, got, ok, ref[string(k)])
			}
		}
		if early != nil && !bytes.Equal(AppendHeldRecord(nil, &early.Channel(o0).Held[0].Record), earlyHeld) {
			t.Fatalf("seed %d: a task decoded before later compactions changed", seed)
		}
	}
}

// Decode decodes once until the store changes: the same task until the
// next Apply, then one that shows it.
func TestDecodeIsKeptUntilApply(t *testing.T) {
	o0 := clock.Channel{Topic: orders, Partition: 0}
	s := NewStore(0)
	s.Apply(0, []byte{'v'}, []byte{1})
	s.Apply(1, heldKey(o0, 3), heldValue(100))
	first := s.Decode()
	if again := s.Decode(); again != first {
		t.Error("a second Decode of an unchanged store decoded again")
	}
	s.Apply(2, heldKey(o0, 4), heldValue(101))
	after := s.Decode()
	if after == first || after.HeldCount() != 2 || first.HeldCount() != 1 {
		t.Errorf("after an Apply: same task %v, held %d (before: %d)", after == first, after.HeldCount(), first.HeldCount())
	}
}

// TestSmallStoreSmallArena: a store of a few entries reserves about its
// bytes — the exporter keeps every task of every process, thousands of
// them mostly small — and a large one still fills whole chunks.
func TestSmallStoreSmallArena(t *testing.T) {
	reserved := func(s *Store) int {
		n := 0
		for _, c := range s.arena.chunks {
			n += cap(c)
		}
		return n
	}
	s := NewStore(0)
	for i := range 5 {
		s.Apply(int64(i), AppendKey(nil, Key{Tag: TagName, Name: fmt.Sprintf("topic-%d", i)}), make([]byte, 20))
	}
	if n := reserved(s); n > 1024 {
		t.Errorf("5 entries of about 30 bytes reserve %d arena bytes, want at most 1 KiB", n)
	}
	big := NewStore(0)
	written := 0
	for i := range 20000 {
		k := AppendKey(nil, Key{Tag: TagName, Name: fmt.Sprintf("topic-%d", i)})
		big.Apply(int64(i), k, make([]byte, 50))
		written += len(k) + 50
	}
	if n := reserved(big); n > written+written/2 {
		t.Errorf("%d bytes written reserve %d arena bytes", written, n)
	}
}

// TestStoreDropBelow: the entries written below a log start are removed,
// the others kept, as a read from that log start rebuilds the store.
func TestStoreDropBelow(t *testing.T) {
	s := NewStore(0)
	s.Apply(1, []byte("a"), []byte("1"))
	s.Apply(2, []byte("b"), []byte("2"))
	s.Apply(3, []byte("a"), []byte("3")) // a rewritten above the start
	s.Apply(4, []byte("c"), []byte("4"))
	if n := s.DropBelow(3); n != 1 {
		t.Errorf("dropped %d, want 1 (b)", n)
	}
	if _, ok := s.Value([]byte("b")); ok || s.Len() != 2 {
		t.Errorf("b kept or %d live", s.Len())
	}
	if v, ok := s.Value([]byte("a")); !ok || string(v) != "3" {
		t.Errorf("a = %q, %v", v, ok)
	}
	if n := s.DropBelow(5); n != 2 || s.Len() != 0 {
		t.Errorf("purged whole: dropped %d, %d live", n, s.Len())
	}
}

// HeldAt finds what a scan of the queue finds, for every offset around
// it, over random queues.
func TestHeldAtAgainstScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for seed := range 200 {
		var c Channel
		off := int64(rng.IntN(3))
		for range rng.IntN(20) {
			c.Held = append(c.Held, Held{Offset: off, Record: HeldRecord{Timestamp: off}})
			off += 1 + int64(rng.IntN(3))
		}
		for o := int64(-1); o <= off; o++ {
			var want *HeldRecord
			for i := range c.Held {
				if c.Held[i].Offset == o {
					want = &c.Held[i].Record
				}
			}
			if got := c.HeldAt(o); got != want {
				t.Fatalf("seed %d offset %d: HeldAt %v, the scan %v", seed, o, got, want)
			}
		}
	}
}

// TestCauseBlocksGrow: the blocks a store's causes are carved from start
// small and double up to causeBlock, so a store of a few held records (the
// exporter decodes thousands) does not allocate a big one, and a large
// store still costs a few allocations; a record with more causes than a
// block gets a block of its own size.
func TestCauseBlocksGrow(t *testing.T) {
	id := clock.TopicID{1}
	value := func(n int) []byte {
		rec := HeldRecord{Causes: make([]clock.Entry, n)}
		for i := range rec.Causes {
			rec.Causes[i] = clock.Entry{Channel: clock.Channel{Topic: id, Partition: int32(i)}, Position: int64(i)}
		}
		return AppendHeldRecord(nil, &rec)
	}
	var block []clock.Entry
	var caps []int
	for range 200 {
		rec, err := parseHeldRecord(value(3), &block)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Causes) != 3 || cap(rec.Causes) != 3 || rec.Causes[2].Position != 2 {
			t.Fatalf("causes %v (cap %d), want 3 of their own", rec.Causes, cap(rec.Causes))
		}
		if len(caps) == 0 || caps[len(caps)-1] != cap(block) {
			caps = append(caps, cap(block))
		}
	}
	if want := []int{16, 32, 64, 128, 256, 512}; !slices.Equal(caps, want) {
		t.Errorf("block sizes %v for 600 causes, want %v", caps, want)
	}
	block = make([]clock.Entry, 0, causeBlock)
	block = block[:causeBlock-1]
	if _, err := parseHeldRecord(value(3), &block); err != nil {
		t.Fatal(err)
	}
	if cap(block) != causeBlock {
		t.Errorf("the block after a full one of causeBlock: cap %d, want %d", cap(block), causeBlock)
	}
	if _, err := parseHeldRecord(value(2000), &block); err != nil || cap(block) != 2000 {
		t.Errorf("a record of 2000 causes: block cap %d (%v), want a block of its own size", cap(block), err)
	}
}

// TestDecodeAllMatchesDecode: decoding a changelog's stores concurrently
// (DecodeAll) leaves each decoded, as Decode one by one decodes the same
// entries; the race detector (CI) watches the stores share nothing.
func TestDecodeAllMatchesDecode(t *testing.T) {
	chans := []clock.Channel{{Topic: orders, Partition: 0}, {Topic: payments, Partition: 1}}
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		all, one := NewChangelog(ChangelogTopic("app"), orders), NewChangelog(ChangelogTopic("app"), orders)
		parts := 1 + rng.IntN(12)
		for p := range int32(parts) {
			for i := range int64(20 + rng.IntN(100)) {
				ch := chans[rng.IntN(len(chans))]
				k, v := heldKey(ch, rng.Int64N(40)), heldValue(rng.Int64N(1e12), clock.Entry{Channel: chans[rng.IntN(2)], Position: rng.Int64N(50)})
				if rng.IntN(4) == 0 {
					v = nil
				}
				if i == 0 {
					k, v = []byte{'v'}, []byte{1}
				}
				all.Apply(p, i, k, v)
				one.Apply(p, i, k, v)
			}
		}
		all.DecodeAll()
		for _, p := range all.Partitions() {
			if all.Partition(p).Store.decoded == nil {
				t.Fatalf("seed %d: partition %d not decoded by DecodeAll", seed, p)
			}
			if got, want := all.Partition(p).Store.Decode(), one.Partition(p).Store.Decode(); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, partition %d: DecodeAll gave\n%+v\nDecode\n%+v", seed, p, got, want)
			}
		}
	}
}
