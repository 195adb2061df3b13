package live

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/causalctl/causalctl/internal/view"
)

var (
	a1 = clock.Channel{Topic: idA, Partition: 1}
	b1 = clock.Channel{Topic: idB, Partition: 1}
)

// randomItems writes n records per channel over a0, a1, b0, b1, in a
// random interleaving, each claiming a random position of a random
// channel now and then — of its own partition or another's.
func randomItems(seed uint64, n int) []*record.Item {
	rng := rand.New(rand.NewPCG(seed, 1))
	chans := []clock.Channel{a0, a1, b0, b1}
	next := map[clock.Channel]int64{}
	var out []*record.Item
	for len(out) < n*len(chans) {
		ch := chans[rng.IntN(len(chans))]
		if next[ch] == int64(n) {
			continue
		}
		var hs []clock.Header
		if rng.IntN(3) == 0 {
			dep := chans[rng.IntN(len(chans))]
			// Mostly what is written already or soon; beyond the end
			// sometimes, so that some heads stay held.
			if pos := next[dep] + int64(rng.IntN(4)) - 1; dep != ch && pos >= 0 {
				hs = append(hs, causes(clock.Entry{Channel: dep, Position: pos}))
			}
		}
		out = append(out, recordAt(ch, next[ch], hs...))
		next[ch]++
	}
	return out
}

// reference replays items with one gate per task, as `replay --tasks`
// does, from seeds when given.
func reference(t *testing.T, items []*record.Item, seeds []replay.TaskSeed) *replay.Tasks {
	t.Helper()
	cfg := replay.Config{Scope: []clock.Channel{a0, a1, b0, b1}}
	if seeds != nil {
		cfg.Scope = nil
	}
	ts, err := replay.NewTasks(cfg, seeds)
	if err != nil {
		t.Fatal(err)
	}
	emit := func(*replay.Task, *replay.Event) error { return nil }
	if err := ts.Flush(emit); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := ts.Feed(it, emit); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// sameAsReference checks that the snapshot shows each task's gate as the
// reference has it: per channel settled, received and held, per task the
// counters.
func sameAsReference(t *testing.T, s *view.Snapshot, ref *replay.Tasks) {
	t.Helper()
	if len(s.Tasks) != len(ref.Tasks) {
		t.Fatalf("%d tasks in the snapshot, want %d", len(s.Tasks), len(ref.Tasks))
	}
	rows := 0
	for i, task := range ref.Tasks {
		g := task.Gate()
		st := g.Stats()
		got := s.Tasks[i]
		if got.Task != task.Task || got.Delivered != st.Delivered || got.Held != st.Held || got.Received != st.Received || got.Dropped != st.Dropped {
			t.Errorf("task %d: %+v, the reference received %d, delivered %d, dropped %d, holds %d", task.Task, got, st.Received, st.Delivered, st.Dropped, st.Held)
		}
		for _, ch := range g.Scope() {
			rows++
			var row *view.ChannelRow
			for k := range s.Channels {
				if s.Channels[k].Partition == ch.Partition && s.Channels[k].TopicID == ch.Topic.String() {
					row = &s.Channels[k]
				}
			}
			if row == nil {
				t.Fatalf("task %d: no row for %v", task.Task, ch)
			}
			head := int64(-1)
			if h, ok := g.Head(ch); ok {
				head = h.Offset
			}
			if row.Task != task.Task || row.Settled != g.Settled(ch) || row.Held != g.Depth(ch) || row.HeadOffset != head {
				t.Errorf("%s: row %+v, the reference's task %d settled %d, holds %d, head %d", row.Channel, *row, task.Task, g.Settled(ch), g.Depth(ch), head)
			}
		}
	}
	if rows != len(s.Channels) || s.Scope != rows {
		t.Errorf("%d rows, scope %d, want %d", len(s.Channels), s.Scope, rows)
	}
}

// feedAll gives the driver items and waits until its tasks have received
// as many records as the reference's.
func feedAll(t *testing.T, src *fakeSource, d *Driver, items []*record.Item, ref *replay.Tasks) view.Snapshot {
	t.Helper()
	go func() {
		for _, it := range items {
			select {
			case src.items <- it:
			case <-time.After(5 * time.Second):
				return
			}
		}
	}()
	var want int64
	for _, task := range ref.Tasks {
		want += task.Gate().Stats().Received
	}
	return waitSnapshot(t, d, "every record received", func(s *view.Snapshot) bool {
		var n int64
		for _, task := range s.Tasks {
			n += task.Received
		}
		return n == want
	})
}

// TestTasksMatchTheReplay runs the driver with one gate per task over
// random inputs with claims across partitions, and compares each task's
// gate with the per-task replay of the same items.
func TestTasksMatchTheReplay(t *testing.T) {
	held := int64(0)
	for seed := range uint64(8) {
		items := randomItems(seed, 30)
		src := newFake()
		d, stop := start(t, src, Config{Tasks: true, Replay: replay.Config{Scope: []clock.Channel{a0, a1, b0, b1}}})
		ref := reference(t, items, nil)
		held += ref.Held()
		s := feedAll(t, src, d, items, ref)
		sameAsReference(t, &s, ref)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	if held == 0 {
		t.Error("nothing held at the end of any input: the holds are not compared")
	}
}

// TestSeededTasksMatchTheReplay seeds the driver's tasks from a per-task
// replay of a prefix of the items and feeds it the rest: each task ends
// as the replay of the whole, and the heads the seeds held say since when
// they were written.
func TestSeededTasksMatchTheReplay(t *testing.T) {
	seededHeads := 0
	for seed := range uint64(8) {
		items := randomItems(seed, 30)
		cut := len(items) / 2
		pre := reference(t, items[:cut], nil)
		var seeds []replay.TaskSeed
		for _, task := range pre.Tasks {
			seeds = append(seeds, replay.TaskSeed{Task: task.Task, State: task.Gate().State()})
		}
		written := time.Unix(1000, 0)
		now := written.Add(time.Minute)
		src := newFake()
		d, stop := start(t, src, Config{Seeds: seeds, Replay: replay.Config{Scope: []clock.Channel{}},
			Now:         func() time.Time { return now },
			SeedWritten: func(clock.Channel, int64) (time.Time, bool) { return written, true }})
		ref := reference(t, items[cut:], seeds)
		s := feedAll(t, src, d, items[cut:], ref)
		sameAsReference(t, &s, ref)
		// A head still held from the seed is aged since its written time.
		for _, row := range s.Channels {
			if row.Held == 0 {
				continue
			}
			g := pre.Task(row.Task).Gate()
			for _, cs := range g.State() {
				if cs.Channel.Partition == row.Partition && cs.Channel.Topic.String() == row.TopicID && len(cs.Held) > 0 && cs.Held[0].Offset == row.HeadOffset {
					seededHeads++
					if !row.HeadWritten.Known || row.HeadWritten.D != time.Minute {
						t.Errorf("seed %d: %s: seeded head %d written %v ago, want 1m", seed, row.Channel, row.HeadOffset, row.HeadWritten)
					}
				}
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	if seededHeads == 0 {
		t.Error("no seeded head still held at the end: the inputs test nothing of the seeds' ages")
	}
}

// TestTaskGateDeliversCrossPartitionClaim: b0 claims a1@5, never written.
// One gate holds it; the task gate of partition 0, which does not read
// a1, delivers it, and the status says per task what it holds.
func TestTaskGateDeliversCrossPartitionClaim(t *testing.T) {
	items := []*record.Item{recordAt(a1, 0), recordAt(b0, 0, causes(clock.Entry{Channel: a1, Position: 5}))}
	for _, tasks := range []bool{false, true} {
		src := newFake()
		d, stop := start(t, src, Config{Tasks: tasks, Replay: replay.Config{Scope: []clock.Channel{a0, a1, b0, b1}}})
		go func() {
			for _, it := range items {
				src.items <- it
			}
		}()
		s := waitSnapshot(t, d, "both records", func(s *view.Snapshot) bool { return s.Received == 2 })
		if want := map[bool]int64{false: 1, true: 0}[tasks]; s.Held != want {
			t.Errorf("tasks %v: %d held, want %d", tasks, s.Held, want)
		}
		if tasks != (s.Tasks != nil) {
			t.Errorf("tasks %v: task rows %v", tasks, s.Tasks)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTaskFailsClosedAlone: with one gate per task, a task whose gate
// fails closed stops there and the others read on, as Parsley's tasks do
// (and as process.ReadOn reads a process on): the snapshot shows the
// failure, the failed task reads nothing past the record, the other task
// delivers what comes after, and the feed stops only once every task has
// failed.
func TestTaskFailsClosedAlone(t *testing.T) {
	undecodable := clock.Header{Key: clock.HeaderCauses, Value: []byte{1}}
	src := newFake()
	d, stop := start(t, src, Config{Tasks: true, Replay: replay.Config{Scope: []clock.Channel{a0, a1, b0, b1}}})
	go func() {
		for _, it := range []*record.Item{recordAt(a0, 0, undecodable), recordAt(a0, 1), recordAt(b1, 0), recordAt(a1, 0, causes(clock.Entry{Channel: b1, Position: 0}))} {
			src.items <- it
		}
	}()
	s := waitSnapshot(t, d, "task 1 delivered past task 0's failure", func(s *view.Snapshot) bool {
		return len(s.Tasks) == 2 && s.Tasks[1].Delivered == 2
	})
	if s.State != replay.StateFailedClosed || s.Failure == nil || s.Failure.Offset != 0 {
		t.Errorf("state %v, failure %+v: want failed closed at a/0@0", s.State, s.Failure)
	}
	if s.Tasks[0].Received != 0 || s.Tasks[0].Delivered != 0 {
		t.Errorf("task 0 read past the record it failed closed on: %+v", s.Tasks[0])
	}
	select {
	case <-d.Stopped():
		t.Fatal("the feed stopped while task 1 still reads")
	default:
	}
	if d.TaskFailed() == nil || d.Err() != nil {
		t.Errorf("TaskFailed %v, Err %v: want task 0's failure, and no error while the feed reads", d.TaskFailed(), d.Err())
	}
	// Task 1 fails closed too: nothing reads on, the feed stops.
	src.items <- recordAt(b1, 1, undecodable)
	select {
	case <-d.Stopped():
	case <-time.After(5 * time.Second):
		t.Fatal("every task failed closed and the feed goes on")
	}
	if err := stop(); err == nil {
		t.Error("Run returned no error after every task failed closed")
	}
}
