package kafka

import (
	"context"
	"slices"
	"strconv"

	"github.com/causalctl/causalctl/internal/record"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// WithLogFacts makes a read yield, before anything else, one
// record.KindLogFacts item per channel: the offsets listed when the read
// opened, the topic's retention settings (DescribeConfigs) and the
// transactions open on the channel (DescribeProducers, then
// ListTransactions and DescribeTransactions for their transactional IDs
// and start times). The settings and transactions are best effort: a
// broker that refuses or does not know those requests leaves them out,
// and the read goes on.
func WithLogFacts() ReadOption {
	return readOpt(func(c *readConfig) { c.facts = true })
}

// logFacts returns the facts of every channel of rd, whose offsets are
// listed, as items in channel order.
func (c *Client) logFacts(ctx context.Context, rd *reader) []*record.Item {
	var topics []string
	var parts kadm.TopicsSet
	for _, ch := range rd.chans {
		topics = append(topics, ch.Topic)
		parts.Add(ch.Topic, ch.Partition)
	}
	topics = slices.Compact(slices.Sorted(slices.Values(topics)))
	retention := c.retention(ctx, topics)
	open := c.openTransactions(ctx, parts)
	at := rd.cfg.clock.Now().UnixMilli()
	items := make([]*record.Item, 0, len(rd.chans))
	for _, ch := range rd.chans {
		f := &record.LogFacts{LogStart: ch.LogStart, LastStable: ch.LastStable, HighWatermark: ch.HighWatermark, At: at}
		if r, ok := retention[ch.Topic]; ok {
			f.Retention = &r
		}
		f.OpenTransactions = open[chanKey{ch.Topic, ch.Partition}]
		items = append(items, &record.Item{Kind: record.KindLogFacts, Topic: ch.Topic, TopicID: ch.TopicID, Partition: ch.Partition, Facts: f})
	}
	return items
}

// retention describes the topics' retention.ms, retention.bytes and
// cleanup.policy; a topic the brokers do not describe is left out.
func (c *Client) retention(ctx context.Context, topics []string) map[string]record.Retention {
	out := map[string]record.Retention{}
	rcs, err := c.adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil && len(rcs) == 0 {
		return out
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		r := record.Retention{Ms: -1, Bytes: -1, CleanupPolicy: "delete"} // Kafka's defaults but for ms
		seen := false
		for _, cfg := range rc.Configs {
			if cfg.Value == nil {
				continue
			}
			v := *cfg.Value
			switch cfg.Key {
			case "retention.ms":
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					r.Ms, seen = n, true
				}
			case "retention.bytes":
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					r.Bytes = n
				}
			case "cleanup.policy":
				r.CleanupPolicy = v
			}
		}
		if seen {
			out[rc.Name] = r
		}
	}
	return out
}

// openTransactions returns, per partition, the transactions open on it,
// by first offset. A producer with a current transaction start offset has
// one open; its transactional ID and start time come from the transaction
// coordinator when it answers.
func (c *Client) openTransactions(ctx context.Context, parts kadm.TopicsSet) map[chanKey][]record.OpenTransaction {
	out := map[chanKey][]record.OpenTransaction{}
	described, err := c.adm.DescribeProducers(ctx, parts)
	if err != nil && len(described) == 0 {
		return out
	}
	var ids []int64
	described.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset < 0 {
			return
		}
		k := chanKey{p.Topic, p.Partition}
		out[k] = append(out[k], record.OpenTransaction{ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch, FirstOffset: p.CurrentTxnStartOffset})
		ids = append(ids, p.ProducerID)
	})
	if len(ids) == 0 {
		return out
	}
	type txn struct {
		id      string
		started int64
	}
	byProducer := map[int64]txn{}
	if listed, err := c.adm.ListTransactions(ctx, ids, nil); err == nil || len(listed) > 0 {
		var txnIDs []string
		for _, l := range listed {
			byProducer[l.ProducerID] = txn{id: l.TxnID}
			txnIDs = append(txnIDs, l.TxnID)
		}
		if txns, err := c.adm.DescribeTransactions(ctx, txnIDs...); err == nil || len(txns) > 0 {
			for _, d := range txns {
				if d.Err == nil && d.ProducerID >= 0 {
					byProducer[d.ProducerID] = txn{id: d.TxnID, started: d.StartTimestamp}
				}
			}
		}
	}
	for k, ts := range out {
		for i := range ts {
			if t, ok := byProducer[ts[i].ProducerID]; ok {
				ts[i].TransactionalID = t.id
				if t.started > 0 {
					ts[i].StartedAt = t.started
				}
			}
		}
		slices.SortFunc(ts, func(a, b record.OpenTransaction) int {
			if a.FirstOffset != b.FirstOffset {
				return int(a.FirstOffset - b.FirstOffset)
			}
			return int(a.ProducerID - b.ProducerID)
		})
		out[k] = ts
	}
	return out
}

// ChangelogSettings describes an ordering changelog's cleanup.policy and
// max.message.bytes (DescribeConfigs, read-only), best effort: "" and 0
// when the brokers do not say. A cleanup.policy left at the broker's
// default is "": only a policy set on the topic is judged (every changelog
// Parsley creates sets it).
func (c *Client) ChangelogSettings(ctx context.Context, topic string) (policy string, maxBytes int64) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	rcs, err := c.adm.DescribeTopicConfigs(rctx, topic)
	if err != nil && len(rcs) == 0 {
		return "", 0
	}
	for _, rc := range rcs {
		if rc.Err != nil || rc.Name != topic {
			continue
		}
		for _, cfg := range rc.Configs {
			if cfg.Value == nil {
				continue
			}
			switch cfg.Key {
			case "cleanup.policy":
				if cfg.Source == kmsg.ConfigSourceDynamicTopicConfig {
					policy = *cfg.Value
				}
			case "max.message.bytes":
				if n, err := strconv.ParseInt(*cfg.Value, 10, 64); err == nil && n > 0 {
					maxBytes = n
				}
			}
		}
	}
	return policy, maxBytes
}
