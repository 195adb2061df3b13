package live

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/record"
)

var (
	idA = clock.TopicID{0xa}
	idB = clock.TopicID{0xb}
	a0  = clock.Channel{Topic: idA, Partition: 0}
	b0  = clock.Channel{Topic: idB, Partition: 0}
)

// fakeSource is a Source fed by the test.
type fakeSource struct {
	items chan *record.Item
	errs  chan error
	mu    sync.Mutex
	ends  map[clock.Channel]int64
}

func newFake() *fakeSource {
	return &fakeSource{items: make(chan *record.Item), errs: make(chan error, 1), ends: map[clock.Channel]int64{}}
}

func (f *fakeSource) Next(ctx context.Context) (*record.Item, error) {
	select {
	case it := <-f.items:
		return it, nil
	case err := <-f.errs:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeSource) LogEnds() map[clock.Channel]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[clock.Channel]int64{}
	for k, v := range f.ends {
		out[k] = v
	}
	return out
}

func (f *fakeSource) setEnd(ch clock.Channel, end int64) {
	f.mu.Lock()
	f.ends[ch] = end
	f.mu.Unlock()
}

func (f *fakeSource) push(t *testing.T, it *record.Item) {
	t.Helper()
	select {
	case f.items <- it:
	case <-time.After(5 * time.Second):
		t.Fatal("the driver does not read")
	}
}

func name(ch clock.Channel) string {
	if ch.Topic == idA {
		return "a"
	}
	return "b"
}

func recordAt(ch clock.Channel, off int64, hs ...clock.Header) *record.Item {
	return &record.Item{Kind: record.KindRecord, Topic: name(ch), TopicID: ch.Topic, Partition: ch.Partition, Offset: off, Headers: hs}
}

func causes(es ...clock.Entry) clock.Header {
	return clock.Header{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(es...))}
}

// start runs a driver over src with a fast interval; stop cancels it and
// returns Run's error.
func start(t *testing.T, src Source, cfg Config) (d *Driver, stop func() error) {
	t.Helper()
	if cfg.Replay.Scope == nil {
		cfg.Replay.Scope = []clock.Channel{a0, b0}
	}
	d, err := New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return d, stop
}

// waitFor takes the driver's snapshots until the status of one satisfies
// ok, and returns that status. It gives up after 5 s (of the bubble's
// clock under synctest), which only ends a hung test.
func waitFor(t *testing.T, d *Driver, what string, ok func(Status) bool) Status {
	t.Helper()
	var st Status
	waitSnapshot(t, d, what, func(s *view.Snapshot) bool {
		st = StatusOf(s)
		return ok(st)
	})
	return st
}

// waitSnapshot takes the driver's snapshots until ok holds for one, and
// returns it; it gives up after 5 s.
func waitSnapshot(t *testing.T, d *Driver, what string, ok func(*view.Snapshot) bool) view.Snapshot {
	t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case s, open := <-d.Snapshots():
			if !open {
				t.Fatalf("waiting for %s: the snapshots ended", what)
			}
			if ok(&s) {
				return s
			}
		case <-deadline.C:
			t.Fatalf("waiting for %s: status %+v", what, d.Status())
		}
	}
}

// advance moves the fake clock of the calling goroutine's synctest bubble
// on by d: it waits on a timer, which fires once every goroutine of the
// bubble is blocked and the bubble's clock has reached it. No wall time
// passes and nothing waits on the machine's load; only call it inside
// synctest.Test.
func advance(d time.Duration) { <-time.After(d) }

// TestSnapshotRate feeds records all through one second of the bubble's
// clock and checks that snapshots come ten times a second (one as Run
// starts, then one per interval), never one per record; that a slow reader
// gets the newest one; and that the channel closes at the end.
func TestSnapshotRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake()
		d, stop := start(t, src, Config{})
		defer stop()
		const n = 20000
		go func() {
			for i := range int64(n) {
				src.items <- recordAt(a0, i)
				if i%20 == 19 {
					advance(time.Millisecond) // 1000 pauses, one second of the bubble's clock
				}
			}
		}()
		count := 0
		second := time.After(time.Second)
		for loop := true; loop; {
			select {
			case <-d.Snapshots():
				count++
			case <-second:
				loop = false
			}
		}
		// The snapshot of the tick at 1 s and the end of the second come
		// at the same instant, in either order.
		if count != 10 && count != 11 {
			t.Errorf("%d snapshots in a second, want 10 (and the one at its end)", count)
		}
		waitFor(t, d, "every delivery", func(s Status) bool { return s.Delivered == n })
		// A reader that comes back late gets the state of now, not a
		// backlog: the snapshots of two more intervals replaced each
		// other unread.
		advance(250 * time.Millisecond)
		if s := <-d.Snapshots(); s.Delivered != n || s.Received != n || s.State != engine.StateRunning {
			t.Errorf("late snapshot: %d received, %d delivered, %v", s.Received, s.Delivered, s.State)
		}
		select {
		case s := <-d.Snapshots():
			t.Errorf("a second snapshot waiting (%d delivered): a backlog", s.Delivered)
		default:
		}
		if err := stop(); err != nil {
			t.Fatalf("run: %v", err)
		}
		var last view.Snapshot
		for s := range d.Snapshots() {
			last = s
		}
		if last.State != engine.StateFinished || last.Delivered != n {
			t.Errorf("last snapshot: %v, %d delivered", last.State, last.Delivered)
		}
		if sum := d.Summary(); sum == nil || sum.Delivered != n || sum.Failed != nil {
			t.Errorf("summary %+v", sum)
		}
	})
}

// TestHoldsAgeAndDrain: a held head ages by the clock, is classified
// against the log ends as they move, and drains.
func TestHoldsAgeAndDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake()
		d, stop := start(t, src, Config{Interval: 20 * time.Millisecond})
		defer stop()
		src.setEnd(a0, 5)
		src.setEnd(b0, 1)
		src.push(t, &record.Item{Kind: record.KindPosition, Topic: "a", TopicID: idA, Offset: 0})
		src.push(t, recordAt(b0, 0, causes(clock.Entry{Channel: a0, Position: 3})))
		st := waitFor(t, d, "a hold", func(s Status) bool { return s.Held == 1 && s.OldestHold.D >= 100*time.Millisecond })
		if st.HeldChannels != 1 || !st.LagKnown || st.Lag != 5 {
			t.Errorf("status %+v: want 1 held channel, lag 5", st)
		}
		if st.OldestHold.D != 100*time.Millisecond {
			t.Errorf("oldest hold %v: want 100ms, five intervals of the bubble's clock", st.OldestHold.D)
		}
		if line := st.String(); !strings.Contains(line, " held=1 held_channels=1 oldest_hold=") || !strings.HasSuffix(line, " lag=5") {
			t.Errorf("status line %q", line)
		}
		s := <-d.Snapshots()
		if len(s.Heads) != 1 || len(s.Heads[0].Blockers) != 1 {
			t.Fatalf("heads %+v", s.Heads)
		}
		if b := s.Heads[0].Blockers[0]; b.Cause != inspect.CauseLagging || b.Channel != "a/0" || b.Log == nil || b.Log.StableEnd() != 5 {
			t.Errorf("blocker %+v: want a/0 lagging below its log end 5", b)
		}
		// The requirement beyond the log end: not yet written. The next
		// snapshot taken after the change says so.
		src.setEnd(a0, 2)
		synctest.Wait()
		<-d.Snapshots() // possibly taken before the change
		if s := <-d.Snapshots(); len(s.Heads) != 1 || s.Heads[0].Blockers[0].Cause != inspect.CauseBeyondLogEnd {
			t.Errorf("heads %+v: want a/0 beyond its log end", s.Heads)
		}
		for off := range int64(4) {
			src.push(t, recordAt(a0, off))
		}
		waitFor(t, d, "the drain", func(s Status) bool { return s.Held == 0 && s.Delivered == 5 })
	})
}

// TestFailClosed: an undecodable header stops the feed; the driver goes on
// publishing the failed state, reads nothing more, and leaves nothing
// running (synctest.Test fails on a goroutine left blocked).
func TestFailClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake()
		d, stop := start(t, src, Config{Interval: 20 * time.Millisecond})
		defer stop()
		src.push(t, recordAt(a0, 0))
		src.push(t, recordAt(b0, 7, clock.Header{Key: clock.HeaderCauses, Value: []byte{1, 1}}))
		select {
		case <-d.Stopped():
		case <-time.After(5 * time.Second):
			t.Fatal("not stopped")
		}
		var ie *engine.InputError
		if err := d.Err(); !errors.As(err, &ie) || ie.Code != "truncated" || ie.Offset != 7 || ie.Channel != "b/0" {
			t.Fatalf("err %v", err)
		}
		st := waitFor(t, d, "failed closed", func(s Status) bool { return s.State == engine.StateFailedClosed })
		if st.Failure == nil || st.Failure.Code != "truncated" || !strings.HasPrefix(st.String(), "state=failed-closed code=truncated at=b/0@7 scope=2 ") {
			t.Errorf("status %+v %q", st, st)
		}
		// Still publishing, still failed.
		for range 2 {
			if s := <-d.Snapshots(); s.State != engine.StateFailedClosed {
				t.Errorf("snapshot state %v", s.State)
			}
		}
		// The feed is no longer read: with every goroutine of the bubble
		// blocked, a reader would be waiting to take this.
		synctest.Wait()
		select {
		case src.items <- recordAt(a0, 1):
			t.Error("the driver reads on after failing closed")
		default:
		}
		if err := stop(); !errors.As(err, &ie) {
			t.Errorf("run returned %v", err)
		}
		if sum := d.Summary(); sum.Failed == nil || sum.Failed.Code != "truncated" || sum.Delivered != 1 {
			t.Errorf("summary %+v", sum)
		}
	})
}

func TestSourceError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake()
		d, stop := start(t, src, Config{Interval: 20 * time.Millisecond})
		defer stop()
		src.errs <- errors.New("broker gone")
		<-d.Stopped()
		st := waitFor(t, d, "the error", func(s Status) bool { return s.State == engine.StateError })
		if !strings.HasSuffix(st.String(), ` error="broker gone"`) {
			t.Errorf("status line %q", st)
		}
		if err := stop(); err == nil || err.Error() != "broker gone" {
			t.Errorf("run returned %v", err)
		}
	})
}

// TestFollower runs the driver over a real Follower against kfake: records
// produced after it starts are delivered, holds drain, the lag is read
// from the log ends, and nothing is left running after cancel.
func TestFollower(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := runtime.NumGoroutine()
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("live"), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	topics, err := cl.Topics(ctx, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, ti := range topics {
		ids[ti.Name] = ti.ID
	}
	spec, _ := kafka.ParseOffsets("start", time.Now())
	f, err := cl.Follow(ctx, []kafka.TopicSel{{Topic: "a", Partition: kafka.AllPartitions}, {Topic: "b", Partition: kafka.AllPartitions}}, spec, kafka.FetchWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var scope []clock.Channel
	for _, rc := range f.Channels() {
		scope = append(scope, rc.Channel())
	}
	d, stop := start(t, f, Config{Replay: engine.Config{Scope: scope, Names: cl.Names()}, Interval: 20 * time.Millisecond})

	ca := clock.Channel{Topic: ids["a"], Partition: 0}
	// b/0@0 claims a/0@0 (a transaction's record, committed later).
	if err := w.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := w.ProduceSync(ctx, &kgo.Record{Topic: "a", Value: []byte("cause")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	hdr := causes(clock.Entry{Channel: ca, Position: 0})
	plain, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "b", Value: []byte("effect"), Headers: []kgo.RecordHeader{{Key: hdr.Key, Value: hdr.Value}}}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the effect held", func(s Status) bool { return s.Held == 1 && s.Received == 1 })
	// The open transaction's record is below the high watermark, not below
	// the last stable offset; the latest snapshot, besides the one-slot
	// channel, shows both. Latest is set before a snapshot is sent: look
	// at it as each one comes.
	waitSnapshot(t, d, "a/0's high watermark above its log end", func(*view.Snapshot) bool {
		s, ok := d.Latest()
		for _, r := range s.Channels {
			if r.Channel == "a/0" {
				return ok && r.HighWatermark == 1 && r.LogEnd == 0
			}
		}
		return false
	})
	if err := w.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, d, "the drain", func(s Status) bool { return s.Held == 0 && s.Delivered == 2 && s.LagKnown && s.Lag == 0 })
	if st.State != engine.StateRunning {
		t.Errorf("state %v", st.State)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	w.Close()
	plain.Close()
	testutil.WaitGoroutines(t, before)
}

// TestStatusString: the one status line, field by field, for a running
// gate with and without known log ends, a disconnected feed and a stopped
// one.
func TestStatusString(t *testing.T) {
	snap := view.Snapshot{State: engine.StateRunning, Scope: 30, Received: 5000, Delivered: 4991, Held: 9, HeldChannels: 3,
		OldestHold: inspect.Age{D: 83 * time.Second, Known: true}, RecvRate: 123456.7, DeliverRate: 120001}
	want := "state=running scope=30 received=5000 delivered=4991 dropped=0 held=9 held_channels=3 oldest_hold=1m23s in=123457/s out=120001/s"
	if got := StatusOf(&snap).String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	snap.Channels = []view.ChannelRow{{LogEnd: 10, ReceivedUpTo: 6}, {LogEnd: -1, ReceivedUpTo: 3}, {LogEnd: 4, ReceivedUpTo: 3}}
	if got := StatusOf(&snap).String(); got != want+" lag=3" {
		t.Errorf("with log ends: %s", got)
	}
	snap.State, snap.RetryingFor = engine.StateDisconnected, 7300*time.Millisecond
	if got := StatusOf(&snap).String(); !strings.HasPrefix(got, `state="disconnected (retrying, 7s)" scope=30 received=5000`) {
		t.Errorf("disconnected: %s", got)
	}
	snap.State, snap.Err = engine.StateError, "reading a/0 failed\nat 3"
	if got := StatusOf(&snap).String(); !strings.HasSuffix(got, ` lag=3 error="reading a/0 failed at 3"`) {
		t.Errorf("stopped: %s", got)
	}
	// Per-task gates say each task's held heads and records.
	snap = view.Snapshot{State: engine.StateRunning, Scope: 6, Held: 4, HeldChannels: 2,
		Tasks: []view.TaskRow{{Task: 0, Scope: 3, Held: 3, HeldChannels: 1}, {Task: 1, Scope: 3, Held: 1, HeldChannels: 1}, {Task: 2}}}
	want = "state=running scope=6 tasks=3 task_heads=0:1,1:1,2:0 task_held=0:3,1:1,2:0 received=0"
	if got := StatusOf(&snap).String(); !strings.HasPrefix(got, want) {
		t.Errorf("tasks:\n got %s\nwant %s…", got, want)
	}
}

// TestGap: a gap item (a read with --allow-gaps past deleted offsets) is
// told to OnGap once, as it is fed, and is a recent event of the
// snapshots; the read goes on past it.
func TestGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake()
		var gaps []string
		d, stop := start(t, src, Config{Interval: 20 * time.Millisecond, OnGap: func(it *record.Item) {
			gaps = append(gaps, fmt.Sprintf("%s/%d %d-%d", it.Topic, it.Partition, it.Gap.From, it.Gap.To))
		}})
		defer stop()
		src.push(t, &record.Item{Kind: record.KindPosition, Topic: "a", TopicID: idA, Offset: 0})
		src.push(t, &record.Item{Kind: record.KindPosition, Topic: "a", TopicID: idA, Offset: 10, Gap: &record.Gap{From: 0, To: 10}})
		src.push(t, recordAt(a0, 10))
		s := waitSnapshot(t, d, "the record after the gap", func(s *view.Snapshot) bool { return s.Delivered == 1 })
		var kinds []string
		for _, e := range s.Recent {
			kinds = append(kinds, e.Kind+": "+e.Text)
		}
		if len(kinds) != 2 || kinds[0] != "gap: gap a/0: offsets 0 to 9 deleted before they were read; read on at 10" || !strings.HasPrefix(kinds[1], "deliver: ") {
			t.Errorf("recent %q: want the gap, then the delivery", kinds)
		}
		if stop(); len(gaps) != 1 || gaps[0] != "a/0 0-10" {
			t.Errorf("OnGap told %q, want a/0 0-10 once", gaps)
		}
	})
}
