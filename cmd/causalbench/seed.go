package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
)

// benchTopic is the topic every scenario reads.
const benchTopic = "bench"

// Seeding shape: records go in rounds of roundPerChannel records per
// channel; every txnEvery-th round is one committed transaction (a marker
// offset per channel), and every abortEvery-th round is preceded by an
// aborted transaction of abortedPerChannel records per channel, which a
// read_committed reader never sees. The last round is always plain, so
// every channel's last offset holds a record.
const (
	roundPerChannel   = 500
	txnEvery          = 10
	abortEvery        = 25
	abortedPerChannel = 5
	// upstreamTopics name channels outside the range: clocks of a real
	// pipeline also claim the topics its inputs came from, which a node
	// consuming only the bench topic ignores.
	upstreamTopics     = 2
	upstreamPartitions = 3
	maxEntries         = 8
)

// seeded describes what was written.
type seeded struct {
	Records   int64   // committed records
	Aborted   int64   // aborted records (never read)
	MeanClock float64 // mean number of clock entries
	Bytes     int64   // key, value and header bytes of the committed records
	Took      time.Duration
}

// startBroker starts a one-broker in-process cluster with the bench topic.
func startBroker(channels int) (*kfake.Cluster, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(channels), benchTopic))
	if err != nil {
		return nil, fmt.Errorf("starting the in-process broker: %w", err)
	}
	return c, nil
}

// seed writes n committed records over the bench topic's channels, each
// stamped with a parsley.causes clock of 1 to 8 entries. Entries on the
// bench topic claim records committed two rounds earlier, so that nothing
// stays held whatever the interleaving; the rest claim upstream channels.
// Timestamps rise by a millisecond a record, as a busy topic's do.
func seed(ctx context.Context, addrs []string, channels int, n int64, rng *rand.Rand) (seeded, error) {
	start := time.Now()
	var out seeded
	common := []kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.DisableClientMetrics(),
		kgo.DefaultProduceTopic(benchTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1 << 20),
		kgo.ProducerLinger(0),
	}
	plain, err := kgo.NewClient(common...)
	if err != nil {
		return out, err
	}
	defer plain.Close()
	txn, err := kgo.NewClient(append(common, kgo.TransactionalID("causalbench"))...)
	if err != nil {
		return out, err
	}
	defer txn.Close()

	id, err := topicID(ctx, plain)
	if err != nil {
		return out, err
	}
	var upstream []clock.Channel
	for t := range upstreamTopics {
		uid := clock.TopicID{0xbe, 0x0c, byte(t + 1)}
		for p := range upstreamPartitions {
			upstream = append(upstream, clock.Channel{Topic: uid, Partition: int32(p)})
		}
	}

	// The offset of each channel's last committed record one round ago and
	// two rounds ago (-1: none yet).
	lastRound := make([]int64, channels)
	twoAgo := make([]int64, channels)
	for c := range channels {
		lastRound[c], twoAgo[c] = -1, -1
	}
	upstreamPos := make([]int64, len(upstream))
	payload := make([]byte, 256)
	for i := range payload {
		payload[i] = 'a' + byte(rng.IntN(26)) // printable, no newline: kcat prints one line a record
	}
	ts := time.UnixMilli(1764450000000)
	var entries int64
	for round := 0; out.Records < n; round++ {
		total := min(int64(roundPerChannel*channels), n-out.Records)
		final := out.Records+total == n
		if round%abortEvery == abortEvery-1 && !final {
			var rs []*kgo.Record
			for c := range channels {
				for range abortedPerChannel {
					rs = append(rs, &kgo.Record{Partition: int32(c), Value: []byte("aborted")})
				}
			}
			if err := inTxn(ctx, txn, false, rs); err != nil {
				return out, err
			}
			out.Aborted += int64(len(rs))
		}
		rs := make([]*kgo.Record, 0, total)
		for i := range total {
			c := int(i) % channels
			hdr, k := stamp(rng, id, channels, c, twoAgo, upstream, upstreamPos)
			entries += int64(k)
			ts = ts.Add(time.Millisecond)
			key := payload[:8+rng.IntN(9)]
			value := payload[:64+rng.IntN(129)] // shared: the client copies it out
			r := &kgo.Record{
				Partition: int32(c),
				Key:       key,
				Value:     value,
				Timestamp: ts,
				Headers:   []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: hdr}},
			}
			out.Bytes += int64(len(key) + len(value) + len(hdr) + len(clock.HeaderCauses))
			rs = append(rs, r)
		}
		if round%txnEvery == txnEvery-1 && !final {
			err = inTxn(ctx, txn, true, rs)
		} else {
			err = plain.ProduceSync(ctx, rs...).FirstErr()
		}
		if err != nil {
			return out, fmt.Errorf("seeding round %d: %w", round, err)
		}
		copy(twoAgo, lastRound)
		for _, r := range rs {
			lastRound[r.Partition] = max(lastRound[r.Partition], r.Offset)
		}
		out.Records += int64(len(rs))
	}
	out.MeanClock = float64(entries) / float64(max(out.Records, 1))
	out.Took = time.Since(start)
	return out, nil
}

// stamp returns the encoded clock of a record on channel c and its number
// of entries: 1 to maxEntries, most of them small (as fan-in usually is).
func stamp(rng *rand.Rand, id clock.TopicID, channels, c int, twoAgo []int64, upstream []clock.Channel, upstreamPos []int64) ([]byte, int) {
	want := 1 + rng.IntN(1+rng.IntN(maxEntries))
	es := make([]clock.Entry, 0, want)
	// A pick over the bench channels (other than c) and the upstream
	// ones, without repeats.
	for _, j := range rng.Perm(channels + len(upstream)) {
		if len(es) == want {
			break
		}
		switch {
		case j < channels:
			if j == c || twoAgo[j] < 0 {
				continue
			}
			es = append(es, clock.Entry{Channel: clock.Channel{Topic: id, Partition: int32(j)}, Position: twoAgo[j]})
		default:
			u := j - channels
			upstreamPos[u] += int64(1 + rng.IntN(3))
			es = append(es, clock.Entry{Channel: upstream[u], Position: upstreamPos[u]})
		}
	}
	return clock.Encode(clock.MustNew(es...)), len(es)
}

func inTxn(ctx context.Context, cl *kgo.Client, commit bool, rs []*kgo.Record) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("transactional produce: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		return fmt.Errorf("ending a transaction: %w", err)
	}
	return nil
}

func topicID(ctx context.Context, cl *kgo.Client) (clock.TopicID, error) {
	td, err := kadm.NewClient(cl).ListTopics(ctx, benchTopic)
	if err != nil {
		return clock.TopicID{}, fmt.Errorf("looking up %s: %w", benchTopic, err)
	}
	t, ok := td[benchTopic]
	if !ok || t.Err != nil {
		return clock.TopicID{}, fmt.Errorf("looking up %s: %v", benchTopic, t.Err)
	}
	return clock.TopicID(t.ID), nil
}
