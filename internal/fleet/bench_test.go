package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// BenchmarkIdleRefresh refreshes a refresher following N idle Parsley
// processes of 8 tasks (two bindings, two fed-up-to positions, a held
// record on every other task; nothing written after the first refresh).
// An idle refresh diagnoses no task and reads no changelog — the
// benchmark fails if one does — and what it costs is the reads of each
// group and its offsets, and one listing of every changelog's ends and
// of the business topics' log facts: ns/process is the per-process
// figure, first-refresh-s the refresh that read every changelog.
func BenchmarkIdleRefresh(b *testing.B) {
	for _, n := range []int{10, 100, 200} {
		b.Run(fmt.Sprintf("processes=%d", n), func(b *testing.B) { benchIdleRefresh(b, n) })
	}
}

func benchIdleRefresh(b *testing.B, procs int) {
	const tasks = 8
	topics := []string{"orders", "payments"}
	opts := []kfake.Opt{kfake.SeedTopics(tasks, topics...)}
	for i := range procs {
		opts = append(opts, kfake.SeedTopics(tasks, parsley.ChangelogTopic(fmt.Sprintf("app%03d", i))))
	}
	c := kafkatest.Cluster(b, opts...)
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	md, err := kadm.NewClient(w).Metadata(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	var recs []*kgo.Record
	for i := range procs {
		cl := parsley.ChangelogTopic(fmt.Sprintf("app%03d", i))
		for p := range int32(tasks) {
			entry := func(k parsley.Key, v []byte) {
				recs = append(recs, &kgo.Record{Topic: cl, Partition: p, Key: parsley.AppendKey(nil, k), Value: v})
			}
			entry(parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})
			for _, name := range topics {
				entry(parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, ids[name]))
				entry(parsley.Key{Tag: parsley.TagFedUpTo, Channel: clock.Channel{Topic: ids[name], Partition: p}}, parsley.AppendPosition(nil, 2))
			}
			if p%2 == 0 {
				entry(parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: ids["orders"], Partition: p}, Position: 2},
					parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: written.UnixMilli(), Key: []byte("k"), Value: []byte("v"),
						Causes: []clock.Entry{{Channel: clock.Channel{Topic: ids["payments"], Partition: p}, Position: 5}}}))
			}
		}
	}
	kafkatest.Produce(b, c, recs...)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	tr := New(Config{Client: cl, Now: func() time.Time { return now }, TxnWait: 10 * time.Second})
	defer tr.Close()
	if err := tr.Discover(ctx); err != nil {
		b.Fatal(err)
	}
	begun := time.Now()
	if err := tr.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	firstTook := time.Since(begun)
	s, _ := tr.Latest()
	if len(s.Processes) != procs || s.Diagnosed != uint64(procs*tasks) {
		b.Fatalf("first refresh: %d processes, %d diagnoses; want %d, %d", len(s.Processes), s.Diagnosed, procs, procs*tasks)
	}
	first, reads := s.Diagnosed, s.ChangelogReads
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
	}
	s, _ = tr.Latest()
	if s.Diagnosed != first {
		b.Fatalf("idle refreshes diagnosed %d tasks again", s.Diagnosed-first)
	}
	if s.ChangelogReads != reads {
		b.Fatalf("idle refreshes read %d changelogs again", s.ChangelogReads-reads)
	}
	b.ReportMetric(firstTook.Seconds(), "first-refresh-s")
	b.ReportMetric(float64(s.Diagnosed-first)/float64(b.N), "diagnoses/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(procs), "ns/process")
}
