package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Fetch sizes of the floor: those internal/kafka's ranges ask for
// (kafka.DefaultFetchPartitionBytes per partition, 16 MiB per fetch, a
// 100 ms wait), so the floor measures the same fetches.
const (
	floorPartitionBytes = 1 << 20
	floorFetchBytes     = 16 << 20
	floorWait           = 100 * time.Millisecond
)

// floorMain is the floor: a plain franz-go consumer of the bench topic from
// its start to its last stable offset, read_committed, with the fetch sizes
// of a range, doing nothing with the records but count them. It prints the
// count. Every channel of a seeded topic ends in a record, so a channel is
// done when that record arrives.
func floorMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	brokers := fs.String("brokers", "", "broker addresses, comma-separated")
	topic := fs.String("topic", benchTopic, "topic to read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	addrs := strings.Split(*brokers, ",")
	admin, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DisableClientMetrics())
	if err != nil {
		return err
	}
	ends, err := kadm.NewClient(admin).ListCommittedOffsets(ctx, *topic)
	admin.Close()
	if err != nil {
		return fmt.Errorf("listing offsets: %w", err)
	}
	from := map[int32]kgo.Offset{}
	last := map[int32]int64{} // the offset of each channel's last record
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			from[o.Partition] = kgo.NewOffset().AtStart()
			last[o.Partition] = o.Offset - 1
		}
	})
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addrs...),
		kgo.DisableClientMetrics(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxPartitionBytes(floorPartitionBytes),
		kgo.FetchMaxBytes(floorFetchBytes),
		kgo.FetchMaxWait(floorWait),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{*topic: from}),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	var n int64
	for len(last) > 0 {
		fetches := cl.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetching %s/%d: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			n += int64(len(p.Records))
			if k := len(p.Records); k > 0 {
				if end, ok := last[p.Partition]; ok && p.Records[k-1].Offset >= end {
					delete(last, p.Partition)
				}
			}
		})
	}
	_, err = fmt.Fprintln(stdout, n)
	return err
}
