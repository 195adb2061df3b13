package kafka

import (
	"context"
	"encoding/binary"
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
	offsets, err := c.listOffsets(ctx, parts, listBound{})
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
	batches, err := c.batchHeaders(ctx, leader, k, id, from)
	if err != nil {
		return nil, err
	}
	var pids []int64
	for _, b := range batches {
		if b.ProducerID >= 0 && !slices.Contains(pids, b.ProducerID) {
			pids = append(pids, b.ProducerID)
		}
	}
	return pids, nil
}

// batchHeaders fetches the batches of one partition from offset from its
// leader by a plain Fetch (no group, uncommitted batches included) and
// returns their headers, records left undecoded.
func (c *Client) batchHeaders(ctx context.Context, leader int32, k chanKey, id [16]byte, from int64) ([]kmsg.RecordBatch, error) {
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
	var out []kmsg.RecordBatch
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
				size := 12 + int(binary.BigEndian.Uint32(b[8:12]))
				var batch kmsg.RecordBatch
				if size > len(b) || batch.ReadFrom(b[:size]) != nil {
					break // a partial batch at the end of the answer
				}
				batch.Records = nil
				out = append(out, batch)
				b = b[size:]
			}
		}
	}
	return out, nil
}

// LastWritten is when topic was last written: the greatest timestamp of
// the last batches of its partitions (a transaction's marker included, so
// a process that only committed is seen too); ok false when the topic
// holds nothing. Read-only, as Writers.
func (c *Client) LastWritten(ctx context.Context, topic string) (last int64, ok bool, err error) {
	metas, err := c.metadata(ctx, []string{topic}, false)
	if err != nil {
		return 0, false, err
	}
	m := metas[topic]
	var parts []chanKey
	for _, p := range m.partitions() {
		parts = append(parts, chanKey{topic, p})
	}
	offsets, err := c.listOffsets(ctx, parts, listBound{})
	if err != nil {
		return 0, false, err
	}
	for _, k := range parts {
		o := offsets[k]
		if o.hwm <= o.logStart {
			continue
		}
		batches, err := c.batchHeaders(ctx, m.leaders[k.partition], k, m.id, max(o.logStart, o.hwm-writerTail))
		if err != nil {
			return 0, false, fmt.Errorf("reading the last batches of %s/%d: %w", k.topic, k.partition, err)
		}
		for _, b := range batches {
			// A transaction's marker is stamped by the broker's clock, not
			// the writer's: the records say when the writer wrote.
			if b.Attributes&0x20 != 0 {
				continue
			}
			if !ok || b.MaxTimestamp > last {
				last, ok = b.MaxTimestamp, true
			}
		}
	}
	return last, ok, nil
}
