package kafkatest

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
)

// Big is a big cluster: topics of partitions each, one record on every
// partition, every tenth channel's record claiming an offset never written
// on the next channel — a held head beyond the log end.
type Big struct {
	*kfake.Cluster
	Topics     []string // big000, big001, …
	Partitions int32
	Held       int // the channels whose one record is held
}

// BigCluster starts a one-broker kfake cluster of topics × partitions
// (500 × 20 is the 10 000 partitions of docs/performance.md's "Big
// clusters") and writes its records.
func BigCluster(tb testing.TB, topics int, partitions int32) *Big {
	tb.Helper()
	b := &Big{Partitions: partitions}
	for i := range topics {
		b.Topics = append(b.Topics, fmt.Sprintf("big%03d", i))
	}
	b.Cluster = Cluster(tb, kfake.SeedTopics(partitions, b.Topics...))
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableClientMetrics(), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1<<20))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(context.Background(), b.Topics...)
	if err != nil {
		tb.Fatal(err)
	}
	chans := make([]clock.Channel, 0, topics*int(partitions))
	for _, name := range b.Topics {
		id := md.Topics[name].ID
		for p := range partitions {
			chans = append(chans, clock.Channel{Topic: clock.TopicID(id), Partition: p})
		}
	}
	recs := make([]*kgo.Record, 0, len(chans))
	for k, ch := range chans {
		r := &kgo.Record{Topic: b.Topics[k/int(partitions)], Partition: ch.Partition, Value: []byte("v")}
		if k%10 == 0 {
			next := chans[(k+1)%len(chans)]
			r.Headers = []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: next, Position: 5}))}}
			b.Held++
		}
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	return b
}
