package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// writerTail is how many offsets before each partition's end Writers
// reads the batches of, for their producer ids.
const writerTail = 64

// Writers says which of apps write each of topics, as far as the cluster
// can tell: Kafka Streams (and Parsley on it) gives each producer a
// transactional id beginning with the application id, so ListTransactions
// maps producer ids to applications; the producers of a topic are those
// DescribeProducers names on its partitions (the brokers keep a producer's
// state there) and those of the last batches of each partition (the batch
// header names its producer: a producer a broker no longer describes, or
// one kfake, which describes only producers inside a transaction, does not
// name). A topic no producer of a known application wrote is left out: the
// fleet file says who writes it. Read-only: the batches are fetched by a
// plain Fetch, no group, nothing committed.
//
// An application's transactional id is app or app-…; a transactional id
// both of two applications could begin (orders and orders-eu) belongs to
// the longer one.
func (c *Client) Writers(ctx context.Context, topics, apps []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(topics) == 0 || len(apps) == 0 {
		return out, nil
	}
	listed, err := c.adm.ListTransactions(ctx, nil, nil)
	if err != nil && len(listed) == 0 {
		return nil, fmt.Errorf("listing transactions: %w", c.classify(err))
	}
	byLen := slices.Clone(apps)
	slices.SortFunc(byLen, func(a, b string) int { return len(b) - len(a) })
	owner := map[int64]string{} // producer id → application
	for _, l := range listed.Sorted() {
		for _, app := range byLen {
			if l.TxnID == app || strings.HasPrefix(l.TxnID, app+"-") {
				owner[l.ProducerID] = app
				break
			}
		}
	}
	if len(owner) == 0 {
		return out, nil
	}
	metas, err := c.metadata(ctx, topics, true)
	if err != nil {
		return nil, err
	}
	var parts []chanKey
	set := kadm.TopicsSet{}
	for _, name := range topics {
		if m, ok := metas[name]; ok {
			for _, p := range m.partitions() {
				parts = append(parts, chanKey{name, p})
				set.Add(name, p)
			}
		}
	}
	seen := map[string]map[string]bool{}
	add := func(topic string, pid int64) {
		app, ok := owner[pid]
		if !ok {
			return
		}
		if seen[topic] == nil {
			seen[topic] = map[string]bool{}
		}
		seen[topic][app] = true
	}
	if described, err := c.adm.DescribeProducers(ctx, set); err == nil || len(described) > 0 {
		described.EachProducer(func(p kadm.DescribedProducer) { add(p.Topic, p.ProducerID) })
	}
	offsets, err := c.listOffsets(ctx, parts)
	if err != nil {
		return nil, err
	}
	for _, k := range parts {
		o := offsets[k]
		if o.hwm <= o.logStart {
			continue
		}
		m := metas[k.topic]
		pids, err := c.batchProducers(ctx, m.leaders[k.partition], k, m.id, max(o.logStart, o.hwm-writerTail))
		if err != nil {
			return nil, fmt.Errorf("reading the producers of %s/%d: %w", k.topic, k.partition, err)
		}
		for _, pid := range pids {
			add(k.topic, pid)
		}
	}
	for topic, apps := range seen {
		for app := range apps {
			out[topic] = append(out[topic], app)
		}
		slices.Sort(out[topic])
	}
	return out, nil
}

// batchProducers fetches the batches of one partition from offset from
// its leader, uncommitted ones included (an open transaction's producer is
// a writer too), and returns the producer ids their headers name.
func (c *Client) batchProducers(ctx context.Context, leader int32, k chanKey, id [16]byte, from int64) ([]int64, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.IsolationLevel = 0
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = k.topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = k.partition, from, 1<<20
	rp.LogStartOffset, rp.CurrentLeaderEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, c.cl.Broker(int(leader)))
	if err != nil {
		return nil, c.classify(err)
	}
	var pids []int64
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition != k.partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, err
			}
			b := p.RecordBatches
			for len(b) >= 12 {
				var batch kmsg.RecordBatch
				size := 12 + int(int32(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11])))
				if size > len(b) || batch.ReadFrom(b[:size]) != nil {
					break // a partial batch at the end of the answer
				}
				if batch.ProducerID >= 0 && !slices.Contains(pids, batch.ProducerID) {
					pids = append(pids, batch.ProducerID)
				}
				b = b[size:]
			}
		}
	}
	return pids, nil
}
