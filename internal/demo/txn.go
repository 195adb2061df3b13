package demo

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnAttempts bounds the attempts at one transaction whose writes the
// broker refuses, or that the broker aborts when it was to commit.
const txnAttempts = 3

// errTxnAborted says that a transaction asked to commit ended aborted.
// franz-go v1.22.3's EndTransaction(TryCommit) can send an abort and
// return nil (docs/troubleshooting.md, "franz-go can abort a commit
// silently").
var errTxnAborted = errors.New("the broker aborted the transaction it was asked to commit")

// inTxn begins a transaction of cl and runs write in it, leaving the
// transaction open when write succeeds; it returns the records write
// produced. When the broker refuses a write for the producer's own state
// (an OUT_OF_ORDER_SEQUENCE_NUMBER, as under load when a transaction
// ended before franz-go published a partition it wrote, whose sequence
// numbers were then not reset: waitPublished; an epoch it no longer
// knows), inTxn aborts the transaction, which makes franz-go renew the
// producer's epoch and number its batches afresh, and runs write again in
// a new one: what an exactly-once producer such as a Kafka Streams task
// does. It tries txnAttempts times in all. aborted, when set, is told how
// many records each abandoned attempt had written.
func inTxn(ctx context.Context, cl *kgo.Client, write func() ([]*kgo.Record, error), aborted func(written int)) ([]*kgo.Record, error) {
	for attempt := 1; ; attempt++ {
		if err := cl.BeginTransaction(); err != nil {
			return nil, fmt.Errorf("beginning a transaction: %w", err)
		}
		written, err := write()
		if err == nil {
			return written, nil
		}
		if abortErr := cl.EndTransaction(ctx, kgo.TryAbort); abortErr != nil {
			return nil, fmt.Errorf("%w (and aborting the transaction: %v)", err, abortErr)
		}
		if aborted != nil {
			aborted(len(written))
		}
		if !refusedForProducerState(err) || ctx.Err() != nil {
			return nil, err
		}
		if attempt == txnAttempts {
			return nil, fmt.Errorf("%d attempts: %w", attempt, err)
		}
	}
}

// transact runs write in a transaction of cl and commits it, and runs it
// again in a new one, txnAttempts times in all, when the broker aborted
// it instead (endTxn). aborted is told how many records each attempt that
// did not commit had written.
func (d *Demo) transact(ctx context.Context, cl *kgo.Client, write func() ([]*kgo.Record, error), aborted func(written int)) error {
	for attempt := 1; ; attempt++ {
		written, err := inTxn(ctx, cl, write, aborted)
		if err != nil {
			return err
		}
		err = d.endTxn(ctx, cl, written, true)
		if !errors.Is(err, errTxnAborted) {
			return err
		}
		if aborted != nil {
			aborted(len(written))
		}
		if attempt == txnAttempts {
			return fmt.Errorf("%d attempts: %w", attempt, err)
		}
	}
}

// endTxn ends cl's open transaction, in which written were produced:
// commits it when commit is set, aborts it otherwise. A commit is trusted
// only once the broker's log says it happened: endTxn first waits until
// franz-go publishes every partition written (see waitPublished), then
// ends the transaction, then reads its commit marker back (see
// verifyCommit); an error wrapping errTxnAborted when the broker aborted
// it.
func (d *Demo) endTxn(ctx context.Context, cl *kgo.Client, written []*kgo.Record, commit bool) error {
	if err := waitPublished(ctx, cl, written); err != nil {
		return err
	}
	if d.beforeEnd != nil {
		d.beforeEnd(cl, written, commit)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		if commit {
			return fmt.Errorf("committing a transaction: %w", err)
		}
		return fmt.Errorf("aborting a transaction: %w", err)
	}
	if !commit {
		return nil
	}
	return verifyCommit(ctx, cl, written)
}

// waitPublished waits until cl's producer has published the partition of
// every record in written in its topic map. franz-go v1.22.3 hands a new
// topic's first records to their partitions before it stores the
// partitions in that map (storePartitionsUpdate defers the store), and
// EndTransaction finds the partitions of a transaction there: one that
// runs in the gap sees nothing produced, sends an abort for a commit and
// returns nil, and leaves those partitions' sequence numbers unreset.
// PartitionLeader reads the same map, so a leader there means the
// partition is published. franz-go signals nothing when it stores, so
// this polls; the gap is a few instructions of another goroutine, and
// ctx bounds the wait.
func waitPublished(ctx context.Context, cl *kgo.Client, written []*kgo.Record) error {
	type tp struct {
		topic     string
		partition int32
	}
	seen := map[tp]bool{}
	for _, r := range written {
		k := tp{r.Topic, r.Partition}
		if seen[k] {
			continue
		}
		seen[k] = true
		for {
			if leader, _, _ := cl.PartitionLeader(r.Topic, r.Partition); leader >= 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for the producer to publish %s/%d: %w", r.Topic, r.Partition, ctx.Err())
			case <-time.After(time.Millisecond):
			}
		}
	}
	return nil
}

// verifyCommit makes sure the transaction that produced written, just
// ended by cl as a commit, committed: in each partition written it reads
// the log from the transaction's first record there, read_uncommitted,
// to the producer's first control marker after the transaction's last
// record — the marker that ended this transaction, since cl runs one at
// a time — and checks that it is a commit.
//
// The marker is what read_committed readers go by (an abort marker is
// what puts records on the aborted-transactions list that they drop), so
// it is the broker's own answer. Reading the records back read_committed
// instead would wait for the last stable offset, which another
// producer's open transaction can hold below them for as long as it
// stays open (the open-txn fault). The read is one fetch per partition
// leader; kfake writes the markers before it answers EndTxn, and a real
// broker's coordinator writes them shortly after, which the fetch waits
// for (MaxWaitMillis) rather than sleeping.
func verifyCommit(ctx context.Context, cl *kgo.Client, written []*kgo.Record) error {
	if len(written) == 0 {
		return nil
	}
	var spans []*txnSpan
	byTP := map[string]map[int32]*txnSpan{}
	for _, r := range written {
		parts := byTP[r.Topic]
		if parts == nil {
			parts = map[int32]*txnSpan{}
			byTP[r.Topic] = parts
		}
		s := parts[r.Partition]
		if s == nil {
			s = &txnSpan{topic: r.Topic, partition: r.Partition, from: r.Offset, last: r.Offset}
			parts[r.Partition] = s
			spans = append(spans, s)
		}
		s.from, s.last = min(s.from, r.Offset), max(s.last, r.Offset)
	}
	topics := make([]string, 0, len(byTP))
	for topic := range byTP {
		topics = append(topics, topic)
	}
	ids, leaders, err := lookUp(ctx, cl, topics)
	if err != nil {
		return err
	}
	for _, s := range spans {
		s.id = ids[s.topic]
	}
	pid := written[0].ProducerID
	for len(spans) > 0 {
		byLeader := map[int32][]*txnSpan{}
		for _, s := range spans {
			l := leaders[s.topic][s.partition]
			byLeader[l] = append(byLeader[l], s)
		}
		spans = spans[:0]
		for leader, ss := range byLeader {
			open, err := readMarkers(ctx, cl, leader, ss, pid)
			if err != nil {
				return err
			}
			spans = append(spans, open...)
		}
	}
	return nil
}

// txnSpan is where a transaction wrote in one partition.
type txnSpan struct {
	topic     string
	id        [16]byte
	partition int32
	last      int64 // the transaction's last record there
	from      int64 // where the next read begins
}

// readMarkers reads ss from leader in one fetch, looking for the markers
// of producer pid after each span's last record (findMarker). It returns
// an error wrapping errTxnAborted at an abort marker, and the spans whose
// marker it has not read yet, moved on past what it read.
func readMarkers(ctx context.Context, cl *kgo.Client, leader int32, ss []*txnSpan, pid int64) (open []*txnSpan, err error) {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 500, 1, 16<<20
	req.IsolationLevel = 0 // read_uncommitted: the markers, whatever the last stable offset
	req.SessionID, req.SessionEpoch = 0, -1
	for _, s := range ss {
		// A topic entry per partition: a broker takes the partitions of
		// repeated topic entries as those of one.
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = s.topic, s.id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = s.partition, s.from, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("reading the transaction's markers back from broker %d: %w", leader, err)
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("reading the transaction's markers back from broker %d: %w", leader, err)
	}
	for _, s := range ss {
		rp := fetchedPartition(resp, s.topic, s.id, s.partition)
		if rp == nil {
			return nil, fmt.Errorf("reading %s/%d back: not in the fetch response", s.topic, s.partition)
		}
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			return nil, fmt.Errorf("reading %s/%d back: %w", s.topic, s.partition, err)
		}
		found, committed, next, err := findMarker(rp.RecordBatches, pid, s.last)
		if err != nil {
			return nil, fmt.Errorf("reading %s/%d back: %w", s.topic, s.partition, err)
		}
		switch {
		case !found:
			s.from = max(s.from, next)
			open = append(open, s)
		case !committed:
			return nil, fmt.Errorf("%w: %s/%d holds its abort marker", errTxnAborted, s.topic, s.partition)
		}
	}
	return open, nil
}

// lookUp returns the IDs of topics (a fetch names topics by ID from v13
// on) and their partitions' leaders.
func lookUp(ctx context.Context, cl *kgo.Client, topics []string) (ids map[string][16]byte, leaders map[string]map[int32]int32, err error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, topic := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := cl.RequestCachedMetadata(ctx, req, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("looking up the transaction's topics: %w", err)
	}
	ids, leaders = map[string][16]byte{}, map[string]map[int32]int32{}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, nil, fmt.Errorf("looking up topic %s: %w", *t.Topic, err)
		}
		ids[*t.Topic] = t.TopicID
		m := map[int32]int32{}
		for _, p := range t.Partitions {
			m[p.Partition] = p.Leader
		}
		leaders[*t.Topic] = m
	}
	for _, topic := range topics {
		if leaders[topic] == nil {
			return nil, nil, fmt.Errorf("looking up topic %s: not in the metadata", topic)
		}
	}
	return ids, leaders, nil
}

func fetchedPartition(resp *kmsg.FetchResponse, topic string, id [16]byte, partition int32) *kmsg.FetchResponseTopicPartition {
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		if rt.Topic != topic && rt.TopicID != id {
			continue
		}
		for j := range rt.Partitions {
			if rt.Partitions[j].Partition == partition {
				return &rt.Partitions[j]
			}
		}
	}
	return nil
}

// findMarker looks through fetched record batches for producer pid's
// first control marker after offset last. found reports whether there is
// one, committed whether it is a commit; next is the offset after the
// last whole batch, where a read goes on when there is none.
func findMarker(batches []byte, pid, last int64) (found, committed bool, next int64, err error) {
	const control = 0x20 // the control bit of a batch's attributes
	next = -1
	for len(batches) >= 12 {
		var b kmsg.RecordBatch
		size := 12 + int(int32(binary.BigEndian.Uint32(batches[8:12]))) // offset, length, then length bytes
		if size < 12 || size > len(batches) {
			break // a partial batch at the end of the response
		}
		if err := b.ReadFrom(batches[:size]); err != nil {
			return false, false, 0, fmt.Errorf("a record batch: %w", err)
		}
		batches = batches[size:]
		next = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		if b.ProducerID != pid || b.Attributes&control == 0 || b.FirstOffset <= last {
			continue
		}
		var rec kmsg.Record
		if err := rec.ReadFrom(b.Records); err != nil {
			return false, false, 0, fmt.Errorf("the control record at %d: %w", b.FirstOffset, err)
		}
		var key kmsg.ControlRecordKey
		if err := key.ReadFrom(rec.Key); err != nil {
			return false, false, 0, fmt.Errorf("the control record key at %d: %w", b.FirstOffset, err)
		}
		return true, key.Type == kmsg.ControlRecordKeyTypeCommit, next, nil
	}
	return false, false, next, nil
}

// produceSync produces krs and waits for them; it returns those the
// broker took, and the first error.
func produceSync(ctx context.Context, cl *kgo.Client, krs []*kgo.Record) (written []*kgo.Record, err error) {
	res := cl.ProduceSync(ctx, krs...)
	for _, pr := range res {
		if pr.Err == nil {
			written = append(written, pr.Record)
		}
	}
	return written, res.FirstErr()
}

// refusedForProducerState reports whether err is a broker's refusal of a
// batch for the producer's sequence or epoch, which a new transaction,
// under a renewed epoch, does not meet.
func refusedForProducerState(err error) bool {
	return errors.Is(err, kerr.OutOfOrderSequenceNumber) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.UnknownProducerID) || errors.Is(err, kerr.InvalidProducerIDMapping)
}
