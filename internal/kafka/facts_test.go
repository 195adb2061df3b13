package kafka

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/record"
)

// TestLogFacts reads a range with WithLogFacts over a topic with a
// transaction left open, a deleted prefix and its own retention: the facts
// item comes first and names the offsets, the settings and the producer.
func TestLogFacts(t *testing.T) {
	c := newCluster(t)
	adm := newAdmin(t, c)
	ctx := testCtx(t)
	ms := "7200000"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": &ms}, "orders"); err != nil {
		t.Fatal(err)
	}
	w := writer(t, c)
	produce(t, w, rec("orders", "a"), rec("orders", "b"), rec("orders", "c"))
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 1})
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	tw := writer(t, c, kgo.TransactionalID("payments-tx"))
	if err := tw.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tw, rec("orders", "open")) // offset 3, left open

	cl := dialTest(t, c)
	items := openDrain(t, cl, []string{"orders"}, "start", WithLogFacts())
	if len(items) == 0 || items[0].Kind != record.KindLogFacts {
		t.Fatalf("first item %v, want log facts (all: %s)", items, trace(items, false))
	}
	f := items[0].Facts
	if f.LogStart != 1 || f.LastStable != 3 || f.HighWatermark != 4 {
		t.Errorf("offsets %+v, want log start 1, last stable 3, high watermark 4", f)
	}
	if f.Retention == nil || f.Retention.Ms != 7200000 || !f.Retention.Deletes() {
		t.Errorf("retention %+v, want 2h, delete", f.Retention)
	}
	if len(f.OpenTransactions) != 1 || f.OpenTransactions[0].FirstOffset != 3 || f.OpenTransactions[0].TransactionalID != "payments-tx" {
		t.Errorf("open transactions %+v, want payments-tx from offset 3", f.OpenTransactions)
	} else if f.OpenTransactions[0].StartedAt <= 0 {
		t.Errorf("open transaction without a start time: %+v", f.OpenTransactions[0])
	}
	if got := trace(items[1:], false); got != "p1 r1=b r2=c p3" {
		t.Errorf("items after the facts %q", got)
	}
	// Without the option nothing changes.
	if got := trace(openDrain(t, cl, []string{"orders"}, "start"), false); got != "p1 r1=b r2=c p3" {
		t.Errorf("without WithLogFacts: %q", got)
	}
}

// TestLogFactsWrittenWhileListed: a partition written while its offsets
// are listed (between two of the ListOffsets requests) still has
// log start ≤ last stable ≤ high watermark in its facts, which a capture
// must hold to be written.
func TestLogFactsWrittenWhileListed(t *testing.T) {
	c := newCluster(t)
	if _, err := newAdmin(t, c).CreateTopic(testCtx(t), 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	w := writer(t, c)
	produce(t, w, rec("orders", "a"), rec("orders", "b"))
	cl := dialTest(t, c)

	// The last of the three listings waits until another record is in.
	var lists atomic.Int32
	var writeErr error // set before the third listing is answered
	c.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if lists.Add(1) == 3 {
			written := make(chan struct{})
			go func() {
				defer close(written)
				writeErr = w.ProduceSync(context.Background(), rec("orders", "c")).FirstErr()
			}()
			c.SleepControl(func() { <-written })
		}
		return nil, nil, false
	})
	items := openDrain(t, cl, []string{"orders"}, "start", WithLogFacts())
	if writeErr != nil {
		t.Fatalf("writing between the listings: %v", writeErr)
	}
	if lists.Load() < 3 {
		t.Fatalf("%d ListOffsets requests: the test no longer writes between them", lists.Load())
	}
	f := items[0].Facts
	if f == nil || !(f.LogStart <= f.LastStable && f.LastStable <= f.HighWatermark) {
		t.Fatalf("facts %+v: want log start ≤ last stable ≤ high watermark", f)
	}
	var buf bytes.Buffer
	if err := capture.NewWriter(&buf).Write(items[0]); err != nil {
		t.Errorf("the facts cannot be written to a capture: %v", err)
	}
}
