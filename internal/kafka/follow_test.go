package kafka

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

func follow(t *testing.T, cl *Client, topics []string, offsets string, opts ...ReadOption) *Follower {
	t.Helper()
	sels, spec := parseRange(t, topics, offsets)
	f, err := cl.Follow(testCtx(t), sels, spec, opts...)
	if err != nil {
		t.Fatalf("follow %v %s: %v", topics, offsets, err)
	}
	return f
}

// take reads n items from f, failing the test if they do not come within
// a few seconds.
func take(t *testing.T, f *Follower, n int) []*record.Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var items []*record.Item
	for len(items) < n {
		it, err := f.Next(ctx)
		if err != nil {
			t.Fatalf("next after %s: %v", trace(items, false), err)
		}
		items = append(items, it)
	}
	return items
}

// quiet checks that f yields nothing more for a while.
func quiet(t *testing.T, f *Follower, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if it, err := f.Next(ctx); err == nil {
		t.Fatalf("unexpected item %s", trace([]*record.Item{it}, false))
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for nothing: %v", err)
	}
}

func TestFollowNewRecordsAndTransactions(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "live"))
	plain := writer(t, c)
	tx := writer(t, c, kgo.TransactionalID("live-tx"))
	produce(t, plain, rec("live", "a"), rec("live", "b"))
	cl := dialTest(t, c)
	f := follow(t, cl, []string{"live"}, "start", FetchWait(50*time.Millisecond))
	ch := f.Channels()[0].Channel()

	// What is there when it starts, then nothing: it does not end.
	if got, want := trace(take(t, f, 3), false), "p0 r0=a r1=b"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	quiet(t, f, 200*time.Millisecond)
	if end := f.LogEnds()[ch]; end != 2 {
		t.Errorf("log end %d, want 2", end)
	}

	// A record produced after the start is yielded.
	produce(t, plain, rec("live", "c"))
	if got, want := trace(take(t, f, 1), false), "r2=c"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}

	// A committed transaction: its records, then a position item past its
	// marker as soon as the marker is read.
	txn(t, tx, true, rec("live", "d"), rec("live", "e"))
	if got, want := trace(take(t, f, 3), false), "r3=d r4=e p6"; got != want {
		t.Fatalf("committed: got %s, want %s", got, want)
	}
	// An aborted one: only a position item over its records and marker.
	txn(t, tx, false, rec("live", "x"))
	if got, want := trace(take(t, f, 1), false), "p8"; got != want {
		t.Fatalf("aborted: got %s, want %s", got, want)
	}

	// An open transaction holds the follower at the last stable offset;
	// records produced after it wait for it to end.
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tx, rec("live", "o"))
	produce(t, plain, rec("live", "f"))
	quiet(t, f, 300*time.Millisecond)
	if end := f.LogEnds()[ch]; end != 8 {
		t.Errorf("log end with an open transaction at 8: %d, want the last stable offset 8", end)
	}
	// The high watermark is past the open transaction's record and the
	// plain record after it.
	if hw := f.HighWatermarks()[ch]; hw != 10 {
		t.Errorf("high watermark with an open transaction at 8: %d, want 10", hw)
	}
	if err := tx.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// o at 8, f at 9, the commit marker at 10: the position moves past
	// the marker as soon as it is read.
	if got, want := trace(take(t, f, 3), false), "r8=o r9=f p11"; got != want {
		t.Fatalf("after commit: got %s, want %s", got, want)
	}
	produce(t, plain, rec("live", "g"))
	if got, want := trace(take(t, f, 1), false), "r11=g"; got != want {
		t.Fatalf("after the marker: got %s, want %s", got, want)
	}
	if end, hw := f.LogEnds()[ch], f.HighWatermarks()[ch]; end != 12 || hw != 12 {
		t.Errorf("log end %d, high watermark %d, want 12 and 12", end, hw)
	}
	if rc := f.Channels()[0]; rc.Position != 12 || rc.Records != 8 || rc.LastOffset != 11 {
		t.Errorf("channel %+v", rc)
	}
}

func TestFollowStartsAndChannels(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(2, "m"), kfake.SeedTopics(1, "n"))
	w := writer(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, w, &kgo.Record{Topic: "m", Partition: 0, Value: []byte("old")}, &kgo.Record{Topic: "m", Partition: 1, Value: []byte("old")})
	cl := dialTest(t, c)
	f := follow(t, cl, []string{"m", "n"}, "end", FetchWait(50*time.Millisecond))
	if got, want := trace(take(t, f, 3), true), "m/0:p1 m/1:p1 n/0:p0"; got != want {
		t.Fatalf("start: got %s, want %s", got, want)
	}
	produce(t, w, &kgo.Record{Topic: "n", Partition: 0, Value: []byte("new")})
	produce(t, w, &kgo.Record{Topic: "m", Partition: 1, Value: []byte("new")})
	got := trace(take(t, f, 2), true)
	if !sameMultiset(got, "n/0:r0=new m/1:r1=new") {
		t.Fatalf("got %s", got)
	}
	ends := f.LogEnds()
	if len(ends) != 3 {
		t.Fatalf("log ends %v, want 3 channels", ends)
	}
	for _, rc := range f.Channels() {
		want := int64(1)
		if rc.Topic == "m" && rc.Partition == 1 {
			want = 2
		}
		if ends[rc.Channel()] != want {
			t.Errorf("log end of %s/%d: %d, want %d", rc.Topic, rc.Partition, ends[rc.Channel()], want)
		}
	}
	ends[clock.Channel{}] = 9 // a copy: changing it changes nothing
	if len(f.LogEnds()) != 3 {
		t.Error("LogEnds returned its own map")
	}

	spec, _ := ParseOffsets("0:5", time.Now())
	if _, err := cl.Follow(testCtx(t), []TopicSel{{Topic: "m", Partition: AllPartitions}}, spec); err == nil || !strings.Contains(err.Error(), "no end") {
		t.Errorf("follow with an end: %v", err)
	}
	spec, _ = ParseOffsets("start", time.Now())
	if _, err := cl.Follow(testCtx(t), []TopicSel{{Topic: "nope", Partition: AllPartitions}}, spec); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("unknown topic: %v", err)
	}
}

// TestFollowCancel checks that cancelling the context ends a waiting Next
// at once and leaves no goroutine behind once the client is closed.
func TestFollowCancel(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "idle"))
	before := runtime.NumGoroutine()
	cl, err := Dial(testCtx(t), Config{Brokers: c.ListenAddrs(), DialTimeout: 2 * time.Second, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := ParseOffsets("start", time.Now())
	// The broker may hold each fetch open for a minute: only honouring the
	// cancellation returns Next before the guard below.
	f, err := cl.Follow(testCtx(t), []TopicSel{{Topic: "idle", Partition: AllPartitions}}, spec, FetchWait(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	take(t, f, 1) // the start position
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.Next(ctx)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // inside a long poll
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("next after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("next did not return after cancel")
	}
	cl.Close()
	testutil.WaitGoroutines(t, before)
}

// TestFollowRetryForever: with RetryForever a follower whose broker is gone
// keeps retrying long past RetryFor, says so through Retrying, and ends only
// when its context does; without it, it gives up (TestRangeBrokerGone).
func TestFollowRetryForever(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "gone"))
	cl := dialTest(t, c)
	spec, _ := ParseOffsets("start", time.Now())
	clk := newFakeClock()
	const retryFor = 200 * time.Millisecond
	f, err := cl.Follow(testCtx(t), []TopicSel{{Topic: "gone", Partition: AllPartitions}}, spec,
		RetryFor(retryFor), RetryForever(), WithClock(clk), FetchWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	take(t, f, 1) // the start position
	c.Close()
	start := clk.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.Next(ctx)
		done <- err
	}()
	for clk.Now().Sub(start) < 5*retryFor {
		select {
		case err := <-done:
			t.Fatalf("next returned %v after %s on the follower's clock; want it still retrying", err, clk.Now().Sub(start))
		case <-time.After(10 * time.Millisecond):
		}
	}
	if f.Retrying().IsZero() {
		t.Errorf("retrying for %s on the follower's clock, but Retrying says it is not", clk.Now().Sub(start))
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("next after cancel: %v, want context.Canceled", err)
	}
}

// TestFollowItemsStayValid: a Follower's items are handed to other
// goroutines, so each must keep its own key, value and headers however
// many fetches later it is looked at.
func TestFollowItemsStayValid(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "kept"))
	w := writer(t, c, kgo.DefaultProduceTopic("kept"))
	const n = 300
	for batch := range 3 {
		var rs []*kgo.Record
		for i := batch * n / 3; i < (batch+1)*n/3; i++ {
			rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i),
				Headers: []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "h%d", i)}}})
		}
		produce(t, w, rs...)
	}
	cl := dialTest(t, c)
	spec, _ := ParseOffsets("start", time.Now())
	f, err := cl.Follow(testCtx(t), []TopicSel{{Topic: "kept", Partition: AllPartitions}}, spec, FetchPartitionBytes(512))
	if err != nil {
		t.Fatal(err)
	}
	var records []*record.Item
	for len(records) < n {
		for _, it := range take(t, f, 1) {
			if it.Kind == record.KindRecord {
				records = append(records, it) // not cloned
			}
		}
	}
	for i, it := range records {
		want := fmt.Sprintf("k%d=v%d [h:h%d]", i, i, i)
		got := fmt.Sprintf("%s=%s", it.Key, it.Value)
		for _, h := range it.Headers {
			got += fmt.Sprintf(" [%s:%s]", h.Key, h.Value)
		}
		if it.Offset != int64(i) || got != want {
			t.Fatalf("record %d, read %d records ago: offset %d, %q, want %q", i, n-i, it.Offset, got, want)
		}
	}
}
