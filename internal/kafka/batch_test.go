package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// decoded is what a read_committed consumer receives from one fetched
// partition, for comparing decoders.
type decoded struct {
	records []string
	next    int64
}

func (d decoded) String() string {
	return fmt.Sprintf("next %d: %s", d.next, strings.Join(d.records, " "))
}

func showRecord(off, ts int64, key, value []byte, hs []clock.Header) string {
	show := func(b []byte) string {
		if b == nil {
			return "null"
		}
		return fmt.Sprintf("%q", b)
	}
	s := fmt.Sprintf("%d@%d:%s=%s", off, ts, show(key), show(value))
	for _, h := range hs {
		s += fmt.Sprintf("[%s:%s]", h.Key, show(h.Value))
	}
	return s
}

// viaDecoder reads rp with the package's decoder.
func viaDecoder(rp *kmsg.FetchResponseTopicPartition, offset int64) (decoded, error) {
	d := batchDecoder{decompressor: kgo.DefaultDecompressor()}
	var out decoded
	next, err := d.each(rp, "t", offset, func(r *batchRecord) bool {
		out.records = append(out.records, showRecord(r.Offset, r.Timestamp, r.Key, r.Value, r.Headers))
		return true
	})
	out.next = next
	return out, err
}

// How viaBuffer hands records to the buffer.
const (
	inBatch = iota // as the reader does: spans of the batch bytes
	noBatch        // as a legacy message set's: lying in no batch, copied
	foreign        // claiming zeroed bytes of another array as their batch
)

// viaBuffer reads rp with the package's decoder into a chunk, as a range
// buffers it, and takes the items back out.
func viaBuffer(rp *kmsg.FetchResponseTopicPartition, offset int64, mode int) (decoded, error) {
	d := batchDecoder{decompressor: kgo.DefaultDecompressor()}
	var c chunk
	next, err := d.each(rp, "t", offset, func(r *batchRecord) bool {
		switch mode {
		case noBatch:
			r.buf = nil
		case foreign:
			r.buf = make([]byte, len(r.buf), cap(r.buf))
		}
		c.addRecord(r)
		return true
	})
	out := decoded{next: next}
	ch := &rchan{}
	var it record.Item
	var hs []clock.Header
	for i := range c.slots {
		hs = c.itemOf(i, ch, &it, hs[:0])
		out.records = append(out.records, showRecord(it.Offset, it.Timestamp, it.Key, it.Value, it.Headers))
	}
	return out, err
}

// viaKgo reads rp with franz-go's own processing, the reference.
func viaKgo(rp *kmsg.FetchResponseTopicPartition, offset int64) (decoded, error) {
	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: offset, IsolationLevel: kgo.ReadCommitted(), Topic: "t", Partition: rp.Partition},
		rp, kgo.DefaultDecompressor(), nil)
	var out decoded
	for _, r := range fp.Records {
		var hs []clock.Header
		for _, h := range r.Headers {
			hs = append(hs, clock.Header{Key: h.Key, Value: h.Value})
		}
		out.records = append(out.records, showRecord(r.Offset, r.Timestamp.UnixMilli(), r.Key, r.Value, hs))
	}
	out.next = next
	return out, fp.Err
}

// randomLog writes a random log on partition 0 of topic t: plain records
// and transactions of two producers, committed and aborted and
// interleaved, in batches of every compression codec, with null and empty
// keys, values and header values.
func randomLog(t *testing.T, c *kfake.Cluster, rng *rand.Rand) {
	t.Helper()
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	codec := codecs[rng.IntN(len(codecs))]
	opts := []kgo.Opt{kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner())}
	plain := writer(t, c, opts...)
	txs := []*kgo.Client{
		writer(t, c, append(opts, kgo.TransactionalID(fmt.Sprintf("a%d", rng.Uint64())))...),
		writer(t, c, append(opts, kgo.TransactionalID(fmt.Sprintf("b%d", rng.Uint64())))...),
	}
	n := 0
	records := func(k int) []*kgo.Record {
		var rs []*kgo.Record
		for range k {
			n++
			r := &kgo.Record{Timestamp: time.UnixMilli(1764450000000 + int64(n)*int64(1+rng.IntN(5)))}
			switch rng.IntN(4) {
			case 0: // null key
			case 1:
				r.Key = []byte{}
			default:
				r.Key = fmt.Appendf(nil, "k%d", rng.IntN(100))
			}
			switch rng.IntN(5) {
			case 0: // null value
			case 1:
				r.Value = []byte{}
			default:
				r.Value = bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(300))
			}
			for h := range rng.IntN(4) {
				hv := fmt.Appendf(nil, "v%d", rng.IntN(1000))
				if rng.IntN(4) == 0 {
					hv = nil
				}
				key := clock.HeaderCauses
				if h > 0 {
					key = fmt.Sprintf("h%d", rng.IntN(3))
				}
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: key, Value: hv})
			}
			rs = append(rs, r)
		}
		return rs
	}
	ctx := context.Background()
	for range 4 + rng.IntN(8) {
		switch rng.IntN(3) {
		case 0:
			produce(t, plain, records(1+rng.IntN(20))...)
		default:
			tx := txs[rng.IntN(len(txs))]
			if err := tx.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			produce(t, tx, records(1+rng.IntN(20))...)
			if rng.IntN(2) == 0 { // the other producer writes inside this transaction
				produce(t, plain, records(1+rng.IntN(3))...)
			}
			if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(rng.IntN(2) == 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fetchRaw fetches partition 0 of t at offset, read_committed, with at most
// maxBytes: the raw response a Range decodes.
func fetchRaw(t *testing.T, cl *kgo.Client, offset int64, maxBytes int32) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	td, err := kadm.NewClient(cl).ListTopics(testCtx(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.IsolationLevel = 10, 1, maxBytes, 1
	req.SessionID, req.SessionEpoch = 0, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "t", td["t"].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, maxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return &kresp.Topics[0].Partitions[0]
}

// TestDecoderMatchesKgo holds the decoder beside kgo.ProcessFetchPartition,
// the reference, over random logs (every codec, committed and aborted
// transactions interleaved with plain writes) fetched at every offset with
// random size limits, so that batches straddle the fetch offset and
// responses end inside a batch. Two broken variants — one that forgets the
// aborted transactions, one that ignores the fetch offset — must be told
// apart from the reference, or the comparison proves nothing.
func TestDecoderMatchesKgo(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	var caughtAborts, caughtOffset, compared int
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 77))
		c := newCluster(t, kfake.SeedTopics(1, "t"))
		randomLog(t, c, rng)
		cl := writer(t, c)
		for offset := int64(0); ; offset++ {
			rp := fetchRaw(t, cl, offset, int32(200+rng.IntN(4000)))
			if rp.ErrorCode != 0 || len(rp.RecordBatches) == 0 {
				break
			}
			want, werr := viaKgo(rp, offset)
			got, gerr := viaDecoder(rp, offset)
			compared++
			if got.String() != want.String() || (gerr == nil) != (werr == nil) {
				t.Fatalf("seed %d offset %d:\n got  %s (err %v)\n want %s (err %v)", seed, offset, got, gerr, want, werr)
			}
			for mode, name := range []string{"in the batch", "in no batch", "in a foreign array"} {
				if got, gerr := viaBuffer(rp, offset, mode); got.String() != want.String() || (gerr == nil) != (werr == nil) {
					t.Fatalf("seed %d offset %d, buffered %s:\n got  %s (err %v)\n want %s (err %v)", seed, offset, name, got, gerr, want, werr)
				}
			}
			if len(rp.AbortedTransactions) > 0 {
				stripped := *rp
				stripped.AbortedTransactions = nil
				if bad, _ := viaDecoder(&stripped, offset); bad.String() != want.String() {
					caughtAborts++
				}
			}
			if offset > 0 {
				if bad, _ := viaDecoder(rp, 0); bad.String() != want.String() {
					caughtOffset++
				}
			}
		}
		c.Close()
	}
	if caughtAborts == 0 || caughtOffset == 0 {
		t.Errorf("broken decoders went unnoticed: without aborts caught %d times, without the offset %d times (of %d fetches)", caughtAborts, caughtOffset, compared)
	}
}

// TestDecoderRefusesCorruption: a flipped byte fails the CRC check, a
// truncated tail is left for the next fetch, and neither panics.
func TestDecoderRefusesCorruption(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	cl := writer(t, c, kgo.DefaultProduceTopic("t"))
	for i := range 3 {
		produce(t, cl, &kgo.Record{Value: fmt.Appendf(nil, "v%d", i)})
	}
	rp := fetchRaw(t, cl, 0, 1<<20)
	whole := slices.Clone(rp.RecordBatches)

	got, err := viaDecoder(rp, 0)
	if err != nil || len(got.records) != 3 || got.next != 3 {
		t.Fatalf("clean log: %s (err %v), want 3 records and next 3", got, err)
	}
	for cut := range len(whole) {
		rp.RecordBatches = whole[:cut]
		got, err := viaDecoder(rp, 0)
		if err != nil || got.next > 3 || len(got.records) != int(got.next) {
			t.Fatalf("cut at %d: %s (err %v), want the whole batches before the cut", cut, got, err)
		}
	}
	// Every byte the first batch's CRC covers.
	first := 12 + int(binary.BigEndian.Uint32(whole[8:]))
	for i := batchAttrsAt; i < first; i++ {
		bad := slices.Clone(whole)
		bad[i] ^= 0x40
		rp.RecordBatches = bad
		if got, err := viaDecoder(rp, 0); err == nil && len(got.records) == 3 {
			t.Fatalf("byte %d flipped: read %s without an error", i, got)
		}
	}
}
