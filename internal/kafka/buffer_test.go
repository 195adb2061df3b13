package kafka

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// seedMany writes n records of about size bytes round-robin over the
// partitions of topic, in small batches so that a small fetch size means
// many fetches.
func seedMany(t *testing.T, c *kfake.Cluster, topic string, partitions, n, size int) {
	t.Helper()
	w := writer(t, c, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(4096))
	value := make([]byte, size)
	var rs []*kgo.Record
	for i := range n {
		value[i%size] = byte(i)
		rs = append(rs, &kgo.Record{Partition: int32(i % partitions), Value: append([]byte(nil), value...),
			Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: []byte{byte(i)}}}})
	}
	produce(t, w, rs...)
}

// countFetches counts the fetch requests c receives from now on.
func countFetches(c *kfake.Cluster) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// TestRangePrefetches: once the first fetch's records are handed out, the
// next fetch is sent without the caller asking for more — it is in flight
// while the caller works on the records it has.
func TestRangePrefetches(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "p"))
	seedMany(t, c, "p", 1, 400, 200)
	cl := dialTest(t, c)
	sels, spec := parseRange(t, []string{"p"}, ":end")
	r, err := cl.OpenRange(testCtx(t), sels, spec, FetchPartitionBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	fetches := countFetches(c)
	for {
		it, err := r.Next(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind == record.KindRecord {
			break
		}
	}
	// Hold the first record and ask for nothing more: a second fetch
	// must still reach the broker.
	deadline := time.Now().Add(10 * time.Second)
	for fetches.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d fetch sent while the caller held the first fetch's records, want the next one in flight", fetches.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx := testCtx(t)
	if n := countRecords(t, func() (*record.Item, error) { return r.Next(ctx) }, nil); n != 399 {
		t.Errorf("read %d more records, want 399", n)
	}
}

// TestRangeAllocatesPerFetchNotPerRecord reads 20 000 records and counts
// the allocations of the whole process (the in-process broker's included):
// far fewer than one a record. The range reuses item storage, decodes
// records in place and interns header keys.
func TestRangeAllocatesPerFetchNotPerRecord(t *testing.T) {
	const n = 20_000
	c := newCluster(t, kfake.SeedTopics(4, "a"))
	seedMany(t, c, "a", 4, n, 100)
	cl := dialTest(t, c)
	sels, spec := parseRange(t, []string{"a"}, ":end")
	ctx := testCtx(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := cl.OpenRange(ctx, sels, spec)
	if err != nil {
		t.Fatal(err)
	}
	records := countRecords(t, func() (*record.Item, error) { return r.Next(ctx) }, nil)
	runtime.ReadMemStats(&after)
	if records != n {
		t.Fatalf("read %d records, want %d", records, n)
	}
	if allocs := after.Mallocs - before.Mallocs; allocs > n/4 {
		t.Errorf("%d allocations for %d records, want under one for every four records", allocs, n)
	}
}

// TestRangeNextOf: reading channel by channel, in any order of channels,
// yields for each channel exactly what Next yields for it — transactions,
// markers and end positions included.
func TestRangeNextOf(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "tx"), kfake.SeedTopics(3, "m"))
	seedTxnTopic(t, c)
	seedMany(t, c, "m", 3, 300, 50)
	cl := dialTest(t, c)
	sels, spec := parseRange(t, []string{"tx", "m"}, ":end")
	open := func() *Range {
		r, err := cl.OpenRange(testCtx(t), sels, spec, FetchPartitionBytes(1024))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	want := map[string][]string{}
	for _, it := range drain(t, open()) {
		k := fmt.Sprintf("%s/%d", it.Topic, it.Partition)
		want[k] = append(want[k], trace([]*record.Item{it}, false))
	}
	for seed := range 5 {
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		r := open()
		chans := r.Channels()
		got := map[string][]string{}
		ended := make([]bool, len(chans))
		left := len(chans)
		ctx := testCtx(t)
		for left > 0 {
			i := rng.IntN(len(chans))
			if ended[i] {
				continue
			}
			it, err := r.NextOf(ctx, i)
			if errors.Is(err, io.EOF) {
				ended[i] = true
				left--
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			k := fmt.Sprintf("%s/%d", chans[i].Topic, chans[i].Partition)
			if k != fmt.Sprintf("%s/%d", it.Topic, it.Partition) {
				t.Fatalf("NextOf(%d) (%s) returned an item of %s/%d", i, k, it.Topic, it.Partition)
			}
			got[k] = append(got[k], trace([]*record.Item{it}, false))
		}
		for k, w := range want {
			if fmt.Sprint(got[k]) != fmt.Sprint(w) {
				t.Errorf("seed %d, %s by NextOf: %v\nby Next: %v", seed, k, got[k], w)
			}
		}
	}
}

// TestRangeNextOfBoundsBuffers reads one channel to its end and never the
// others: what the others buffer meanwhile stays within a few fetches'
// worth, not their whole range.
func TestRangeNextOfBoundsBuffers(t *testing.T) {
	const partBytes = 2048
	c := newCluster(t, kfake.SeedTopics(3, "b"))
	seedMany(t, c, "b", 3, 3000, 300)
	cl := dialTest(t, c)
	sels, spec := parseRange(t, []string{"b"}, ":end")
	r, err := cl.OpenRange(testCtx(t), sels, spec, FetchPartitionBytes(partBytes))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	most, mostFetches := 0, 0
	records := countRecords(t, func() (*record.Item, error) { return r.NextOf(ctx, 0) }, func() {
		for _, ch := range r.rd.chans[1:] {
			most, mostFetches = max(most, ch.bufBytes), max(mostFetches, len(ch.buf))
		}
	})
	if records != 1000 {
		t.Fatalf("channel 0 yielded %d records, want 1000", records)
	}
	// Each of the others has 1000 records of 300 bytes in the range; while
	// channel 0 is read they may hold a few fetches, never their range.
	if mostFetches > bufferedFetches+1 || most == 0 || most > 1000*300/4 {
		t.Errorf("other channels buffered up to %d fetches, %d bytes while channel 0 was read, want some and at most %d fetches", mostFetches, most, bufferedFetches+1)
	}
}
