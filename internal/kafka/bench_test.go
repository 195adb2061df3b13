package kafka

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// benchRecords is the size of the range the benchmarks read: 6 channels of
// records with a 3-entry parsley.causes clock and a 100-byte value.
const (
	benchRecords  = 300_000
	benchChannels = 6
)

// benchCluster seeds an in-process cluster for the range benchmarks.
func benchCluster(b *testing.B) (*kfake.Cluster, *Client) {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(benchChannels, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	up := clock.TopicID{0xbe, 0x0c}
	// Values of random letters, which compress as real payloads do (a
	// little), not to nothing.
	rng := rand.New(rand.NewPCG(1, 2))
	letters := make([]byte, 1<<16)
	for i := range letters {
		letters[i] = 'a' + byte(rng.IntN(26))
	}
	ctx := context.Background()
	const round = 6000
	for i := 0; i < benchRecords; i += round {
		rs := make([]*kgo.Record, 0, round)
		for j := i; j < min(i+round, benchRecords); j++ {
			c := clock.MustNew(
				clock.Entry{Channel: clock.Channel{Topic: up, Partition: 0}, Position: int64(j)},
				clock.Entry{Channel: clock.Channel{Topic: up, Partition: 1}, Position: int64(j)},
				clock.Entry{Channel: clock.Channel{Topic: up, Partition: 2}, Position: int64(j)},
			)
			at := rng.IntN(len(letters) - 100)
			rs = append(rs, &kgo.Record{Partition: int32(j % benchChannels), Value: letters[at : at+100], Timestamp: time.UnixMilli(1764450000000 + int64(j)),
				Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(c)}}})
		}
		if err := w.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	cl, err := Dial(ctx, Config{Brokers: c.ListenAddrs()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return c, cl
}

// BenchmarkRangeNext reads a whole range of benchRecords records through
// Range.Next, as replay and capture do, and reports records/s and
// allocations per record. The in-process broker shares the machine, so
// compare runs with benchstat rather than reading one figure.
func BenchmarkRangeNext(b *testing.B) {
	_, cl := benchCluster(b)
	sels, err := ParseTopicSels([]string{"bench"})
	if err != nil {
		b.Fatal(err)
	}
	spec, err := ParseOffsets(":end", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var records int64
	for b.Loop() {
		r, err := cl.OpenRange(ctx, sels, spec)
		if err != nil {
			b.Fatal(err)
		}
		n := countRecords(b, func() (*record.Item, error) { return r.Next(ctx) }, nil)
		if n != benchRecords {
			b.Fatalf("read %d records, want %d", n, benchRecords)
		}
		records += int64(n)
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}
