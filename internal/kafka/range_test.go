package kafka

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// seedTxnTopic writes, on partition 0 of topic "tx":
//
//	0 a, 1 b  committed transaction, marker at 2
//	3 c       plain record
//	4 x, 5 y  aborted transaction, marker at 6
//	7 d       plain record
//	8 e       committed transaction (right after d), marker at 9
//	10 o      open transaction (never ended during the test)
//	11 f      plain record
//
// so the high watermark is 12 and the last stable offset 10.
func seedTxnTopic(t *testing.T, c *kfake.Cluster) {
	t.Helper()
	plain := writer(t, c)
	txA := writer(t, c, kgo.TransactionalID("tx-a"))
	txB := writer(t, c, kgo.TransactionalID("tx-b"))
	txn(t, txA, true, rec("tx", "a"), rec("tx", "b"))
	produce(t, plain, rec("tx", "c"))
	txn(t, txA, false, rec("tx", "x"), rec("tx", "y"))
	produce(t, plain, rec("tx", "d"))
	txn(t, txA, true, rec("tx", "e"))
	if err := txB.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, txB, rec("tx", "o"))
	produce(t, plain, rec("tx", "f"))
}

func TestRangeTransactions(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "tx"))
	seedTxnTopic(t, c)
	cl := dialTest(t, c)

	infos, err := cl.Topics(testCtx(t), "tx")
	if err != nil {
		t.Fatal(err)
	}
	p := infos[0].Partitions[0]
	if p.LogStart != 0 || p.HighWatermark != 12 || p.LastStable != 10 {
		t.Fatalf("offsets of tx/0: start %d hwm %d lso %d, want 0 12 10", p.LogStart, p.HighWatermark, p.LastStable)
	}

	for _, tc := range []struct {
		offsets string
		want    string
	}{
		// The whole committed log: the range ends at the last stable
		// offset, below the open transaction, and terminates.
		{"start", "p0 r0=a r1=b p3 r3=c p7 r7=d r8=e p10"},
		// Ending in an abort marker: the end position covers it.
		{"0:7", "p0 r0=a r1=b p3 r3=c p7"},
		// Ending in aborted records.
		{"0:5", "p0 r0=a r1=b p3 r3=c p5"},
		// Starting inside the aborted transaction.
		{"4", "p4 p7 r7=d r8=e p10"},
		// Starting on a commit marker.
		{"2:4", "p2 p3 r3=c p4"},
		// Nothing committed in the range at all.
		{"4:7", "p4 p7"},
		// Past the last stable offset: clamped, an empty range.
		{"11", "p10"},
		{"end", "p10"},
		{"-3", "p7 r7=d r8=e p10"},
		{"8:9", "p8 r8=e p9"},
		{"9", "p9 p10"},
	} {
		t.Run(tc.offsets, func(t *testing.T) {
			for _, bytes := range []int32{DefaultFetchPartitionBytes, 1} {
				got := trace(openDrain(t, cl, []string{"tx"}, tc.offsets, FetchPartitionBytes(bytes)), false)
				if got != tc.want {
					t.Errorf("fetch bytes %d:\n got %s\nwant %s", bytes, got, tc.want)
				}
			}
		})
	}
}

func TestRangeRecordFields(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "f"))
	ts := time.UnixMilli(1764450000123)
	produce(t, writer(t, c), &kgo.Record{
		Topic: "f", Key: nil, Value: []byte("v"), Timestamp: ts,
		Headers: []kgo.RecordHeader{
			{Key: clock.HeaderCauses, Value: []byte{1, 0}},
			{Key: "null", Value: nil},
			{Key: "empty", Value: []byte{}},
			{Key: clock.HeaderCauses, Value: []byte{1, 0}},
		},
	}, &kgo.Record{Topic: "f", Key: []byte{}, Value: nil})
	cl := dialTest(t, c)
	items := openDrain(t, cl, []string{"f"}, "start")
	if got, want := trace(items, false), "p0 r0=v r1= p2"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	infos, err := cl.Topics(testCtx(t), "f")
	if err != nil {
		t.Fatal(err)
	}
	r0, r1 := items[1], items[2]
	for _, it := range items {
		if it.Topic != "f" || it.TopicID != infos[0].ID || it.TopicID.IsZero() || it.Partition != 0 {
			t.Errorf("item %+v: want channel f (%s)/0", it, infos[0].ID)
		}
	}
	if !r0.HasTimestamp || r0.Timestamp != ts.UnixMilli() {
		t.Errorf("timestamp %d (%v), want %d", r0.Timestamp, r0.HasTimestamp, ts.UnixMilli())
	}
	if r0.Key != nil || !bytes.Equal(r0.Value, []byte("v")) {
		t.Errorf("record 0 key %v value %q: want null key, value v", r0.Key, r0.Value)
	}
	if r1.Key == nil || len(r1.Key) != 0 || r1.Value != nil {
		t.Errorf("record 1 key %v value %v: want empty key, null value", r1.Key, r1.Value)
	}
	hs := r0.Headers
	if len(hs) != 4 || hs[0].Key != clock.HeaderCauses || hs[3].Key != clock.HeaderCauses {
		t.Fatalf("headers %+v: want 4 in order, duplicates kept", hs)
	}
	if hs[1].Value != nil {
		t.Errorf("null header value read as %v, want nil", hs[1].Value)
	}
	if hs[2].Value == nil || len(hs[2].Value) != 0 {
		t.Errorf("empty header value read as %v, want empty non-nil", hs[2].Value)
	}
	if _, _, err := clock.FromHeaders(hs); err == nil {
		t.Errorf("FromHeaders accepted two %s headers", clock.HeaderCauses)
	} else if code, _ := clock.CodeOf(err); code != clock.CodeDuplicateHeader {
		t.Errorf("FromHeaders: %v, want duplicate-header", err)
	}
}

func TestRangeOffsetsGrammar(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "seq"))
	base := time.UnixMilli(1700000000000)
	w := writer(t, c)
	for i := range 10 {
		produce(t, w, &kgo.Record{Topic: "seq", Value: []byte{'a' + byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	cl := dialTest(t, c)
	ms := func(d time.Duration) string { return itoa(base.Add(d).UnixMilli()) }
	for _, tc := range []struct {
		offsets string
		want    string
	}{
		{"start", "p0 r0=a r1=b r2=c r3=d r4=e r5=f r6=g r7=h r8=i r9=j p10"},
		{":end", "p0 r0=a r1=b r2=c r3=d r4=e r5=f r6=g r7=h r8=i r9=j p10"},
		{"end", "p10"},
		{"3:6", "p3 r3=d r4=e r5=f p6"},
		{"3-6", "p3 r3=d r4=e r5=f p6"},
		{"7", "p7 r7=h r8=i r9=j p10"},
		{"7:end", "p7 r7=h r8=i r9=j p10"},
		{":2", "p0 r0=a r1=b p2"},
		{"+8", "p8 r8=i r9=j p10"},
		{"+80", "p10"},
		{"-2", "p8 r8=i r9=j p10"},
		{"-20", "p0 r0=a r1=b r2=c r3=d r4=e r5=f r6=g r7=h r8=i r9=j p10"},
		{"8:100", "p8 r8=i r9=j p10"},
		{"@" + ms(5*time.Second), "p5 r5=f r6=g r7=h r8=i r9=j p10"},
		{"@" + ms(4500*time.Millisecond), "p5 r5=f r6=g r7=h r8=i r9=j p10"},
		{"@" + ms(2*time.Second) + ":" + ms(4*time.Second), "p2 r2=c r3=d p4"},
		{"@" + ms(2*time.Second) + ":2s", "p2 r2=c r3=d p4"},
		{"@:" + ms(1*time.Second), "p0 r0=a p1"},
		{"@" + ms(8*time.Second) + ":end", "p8 r8=i r9=j p10"},
		{"@" + base.Add(3*time.Second).UTC().Format(time.RFC3339) + ":" + base.Add(5*time.Second).UTC().Format(time.RFC3339), "p3 r3=d r4=e p5"},
		{"@" + ms(time.Hour), "p10"},
		{"@2000-01-01", "p0 r0=a r1=b r2=c r3=d r4=e r5=f r6=g r7=h r8=i r9=j p10"},
		{"@-1h", "p10"}, // every record is from 2023
	} {
		got := trace(openDrain(t, cl, []string{"seq"}, tc.offsets), false)
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.offsets, got, tc.want)
		}
	}
}

func itoa(n int64) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int64) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func TestRangeManyChannels(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(3), kfake.SeedTopics(3, "a"), kfake.SeedTopics(2, "b"))
	w := writer(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	tx := writer(t, c, kgo.TransactionalID("many"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 40 {
		p := int32(i % 3)
		produce(t, w, &kgo.Record{Topic: "a", Partition: p, Value: []byte("x")})
		if i%4 == 0 {
			txn(t, tx, i%8 == 0, &kgo.Record{Topic: "b", Partition: p % 2, Value: []byte("t")})
		}
	}
	cl := dialTest(t, c)
	big := openDrain(t, cl, []string{"a", "b/1", "b/0", "a/2"}, "start")
	small := openDrain(t, cl, []string{"a", "b/1", "b/0", "a/2"}, "start", FetchPartitionBytes(1))

	// Per channel, both fetch sizes give the same items in the same order,
	// and offsets only go up.
	perChan := func(items []*record.Item) map[string]string {
		m := make(map[string][]*record.Item)
		for _, it := range items {
			k := it.Topic + "/" + itoa(int64(it.Partition))
			m[k] = append(m[k], it)
		}
		out := make(map[string]string)
		for k, its := range m {
			lastRec, lastPos := int64(-1), int64(-1)
			for _, it := range its {
				if it.Offset <= lastRec || it.Offset < lastPos {
					t.Errorf("%s: offsets out of order: %s", k, trace(its, false))
				}
				if it.Kind == record.KindRecord {
					lastRec = it.Offset
				} else {
					lastPos = it.Offset
				}
			}
			out[k] = trace(its, false)
		}
		return out
	}
	pb, ps := perChan(big), perChan(small)
	if len(pb) != 5 {
		t.Fatalf("channels %v, want a/0-2, b/0-1", pb)
	}
	for k, v := range pb {
		if ps[k] != v {
			t.Errorf("%s differs by fetch size:\n%s\n%s", k, v, ps[k])
		}
	}
	// a/0 holds 14 plain records. b/0 holds transactions committed at 0,
	// 2, 8, 10 and aborted at 4, 6, 12; b/1 aborted at 0, 4 and committed
	// at 2 (each transaction a record and its marker).
	if got := pb["a/0"]; got != "p0 r0=x r1=x r2=x r3=x r4=x r5=x r6=x r7=x r8=x r9=x r10=x r11=x r12=x r13=x p14" {
		t.Errorf("a/0: %s", got)
	}
	if got := pb["b/0"]; got != "p0 r0=t p2 r2=t p8 r8=t p10 r10=t p14" {
		t.Errorf("b/0: %s", got)
	}
	if got := pb["b/1"]; got != "p0 p2 r2=t p6" {
		t.Errorf("b/1: %s", got)
	}
}

func TestRangeStartsAndIdentity(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(2, "s"))
	w := writer(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 6 {
		produce(t, w, &kgo.Record{Topic: "s", Partition: int32(i % 2), Value: []byte("v")})
	}
	cl := dialTest(t, c)
	infos, err := cl.Topics(testCtx(t), "s")
	if err != nil {
		t.Fatal(err)
	}
	id := infos[0].ID
	starts := map[clock.Channel]int64{{Topic: id, Partition: 1}: 2, {Topic: clock.TopicID{9}, Partition: 0}: 1}
	got := trace(openDrain(t, cl, []string{"s"}, "start", WithStarts(starts)), true)
	if want := "s/0:p0 s/1:p2 s/0:r0=v s/0:r1=v s/0:r2=v s/0:p3 s/1:r2=v s/1:p3"; got != want {
		// Interleaving may differ by fetch order; compare per channel.
		if !sameMultiset(got, want) {
			t.Errorf("got %s\nwant (any interleaving) %s", got, want)
		}
	}
	if n := cl.Names(); n.Len() != 1 {
		t.Errorf("names %d, want 1", n.Len())
	} else if name, _ := n.Name(id); name != "s" {
		t.Errorf("name of %s: %q", id, name)
	}
	if name, ok := cl.TopicName(id); !ok || name != "s" {
		t.Errorf("TopicName(%s) = %q, %v; want s, as Names says", id, name, ok)
	}
	if name, ok := cl.TopicName(clock.TopicID{9}); ok {
		t.Errorf("TopicName of a topic never seen = %q, want none", name)
	}

	// By UUID.
	got = trace(openDrain(t, cl, []string{id.String() + "/1"}, "start"), false)
	if want := "p0 r0=v r1=v r2=v p3"; got != want {
		t.Errorf("by UUID: got %s, want %s", got, want)
	}

	// Unknown topic and partition.
	if _, err := cl.OpenRange(testCtx(t), []TopicSel{{Topic: "nope", Partition: AllPartitions}}, OffsetSpec{Bound{Kind: BoundLogStart}, Bound{Kind: BoundLogEnd}}); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("unknown topic: %v", err)
	} else if want := `unknown topic "nope"`; err.Error() != want {
		t.Errorf("unknown topic: %q, want %q", err, want)
	}
	if _, err := cl.OpenRange(testCtx(t), []TopicSel{{Topic: "s", Partition: 7}}, OffsetSpec{Bound{Kind: BoundLogStart}, Bound{Kind: BoundLogEnd}}); !errors.Is(err, ErrUnknownPartition) {
		t.Errorf("unknown partition: %v", err)
	}

	// Deleting and recreating the topic changes its UUID: the next lookup
	// in this run fails with channel-identity-changed.
	adm := newAdmin(t, c)
	if _, err := adm.DeleteTopics(testCtx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Topics(testCtx(t), "s"); !errors.Is(err, ErrIdentityChanged) {
		t.Fatalf("after delete: %v, want %s", err, CodeIdentityChanged)
	}
	if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, "s"); err != nil {
		t.Fatal(err)
	}
	_, err = cl.Topics(testCtx(t), "s")
	var ice *IdentityChangedError
	if !errors.As(err, &ice) || ice.Old != id || ice.New.IsZero() || ice.New == id {
		t.Fatalf("after recreate: %v, want %s", err, CodeIdentityChanged)
	}
	if !bytes.HasPrefix([]byte(err.Error()), []byte(CodeIdentityChanged+":")) {
		t.Errorf("error text %q does not start with the code", err)
	}
}

func sameMultiset(a, b string) bool {
	x, y := bytes.Fields([]byte(a)), bytes.Fields([]byte(b))
	sx := make([]string, len(x))
	sy := make([]string, len(y))
	for i := range x {
		sx[i] = string(x[i])
	}
	for i := range y {
		sy[i] = string(y[i])
	}
	slices.Sort(sx)
	slices.Sort(sy)
	return slices.Equal(sx, sy)
}

func TestRangeBrokerGone(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "big"))
	w := writer(t, c, kgo.ProducerLinger(0))
	for i := range 50 {
		produce(t, w, rec("big", "v"+itoa(int64(i))))
	}
	cl := dialTest(t, c)

	// A transient fault is retried and the range completes.
	fault := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Err: kerr.NotLeaderForPartition, Count: 2})
	if items := openDrain(t, cl, []string{"big"}, "start", FetchPartitionBytes(1), RetryFor(5*time.Second)); len(items) != 52 {
		t.Fatalf("with a transient fault: %d items, want 52", len(items))
	}
	if hits := fault.Hits(); hits != 2 {
		t.Fatalf("the fault answered %d fetches, want 2", hits)
	}

	// The broker disappears mid-range: the items read are returned, then an
	// error naming the channel and the last offset read.
	spec, _ := ParseOffsets("start", time.Now())
	clk := newFakeClock()
	r, err := cl.OpenRange(testCtx(t), []TopicSel{{Topic: "big", Partition: AllPartitions}}, spec, FetchPartitionBytes(1), RetryFor(time.Second), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	lastRecord := int64(-1)
	for range 5 {
		it, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind == record.KindRecord {
			lastRecord = it.Offset
		}
	}
	c.Close()
	start := clk.Now()
	for {
		it, err := r.Next(ctx)
		if err == nil {
			if it.Kind == record.KindRecord {
				lastRecord = it.Offset
			}
			continue
		}
		var re *RangeError
		if !errors.As(err, &re) || !errors.Is(err, ErrRangeFailed) {
			t.Fatalf("got %v, want a RangeError", err)
		}
		if re.Channel != "big/0" || re.LastOffset != lastRecord || re.Position != lastRecord+1 {
			t.Errorf("error %q: channel %s last %d position %d; want big/0, last record %d", err, re.Channel, re.LastOffset, re.Position, lastRecord)
		}
		// On the range's clock it retried for RetryFor, backing off between
		// tries, and gave up within one backoff of it.
		if d := clk.Now().Sub(start); d < time.Second || d > time.Second+maxBackoff {
			t.Errorf("gave up after %s on the range's clock, want 1s to %s", d, time.Second+maxBackoff)
		}
		if clk.Slept() == 0 {
			t.Error("the range never waited on its clock between retries")
		}
		if _, again := r.Next(ctx); !errors.Is(again, ErrRangeFailed) {
			t.Errorf("next after failure: %v", again)
		}
		t.Logf("error: %v", err)
		return
	}
}

func TestRangeEOFStays(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "e"))
	cl := dialTest(t, c)
	spec, _ := ParseOffsets("start", time.Now())
	r, err := cl.OpenRange(testCtx(t), []TopicSel{{Topic: "e", Partition: 0}}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := trace(drain(t, r), false); got != "p0" {
		t.Errorf("empty topic: %s, want p0", got)
	}
	if _, err := r.Next(testCtx(t)); !errors.Is(err, io.EOF) {
		t.Errorf("after EOF: %v", err)
	}
	if ch := r.Channels()[0]; !ch.Done || ch.Start != 0 || ch.End != 0 {
		t.Errorf("channel %+v", ch)
	}
}

func TestStableEnd(t *testing.T) {
	for _, tc := range []struct{ lso, hwm, want int64 }{
		{lso: 5, hwm: 9, want: 5},  // an open transaction from 5 on
		{lso: 9, hwm: 9, want: 9},  // nothing open
		{lso: 0, hwm: 3, want: 0},  // open from the first offset
		{lso: -1, hwm: 7, want: 7}, // the broker gave no last stable offset
	} {
		if got := StableEnd(tc.lso, tc.hwm); got != tc.want {
			t.Errorf("StableEnd(%d, %d) = %d, want %d", tc.lso, tc.hwm, got, tc.want)
		}
	}
}
