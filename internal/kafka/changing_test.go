package kafka

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/record"
)

// This file tests a cluster that changes under a read: the log start
// moving past the position, offsets listed while the log is written.

// retentionMidRead seeds orders/0 with ten records, one batch each, opens a
// range over it that fetches one batch at a time, reads until a record at
// offset 2 or later is yielded, and then deletes every record below 8. It
// returns the range and the items read so far.
func retentionMidRead(t *testing.T, opts ...ReadOption) (*Range, []*record.Item) {
	t.Helper()
	c := newCluster(t, kfake.SeedTopics(1, "orders"))
	w := writer(t, c)
	for i := range 10 {
		produce(t, w, rec("orders", fmt.Sprint(i)))
	}
	cl := dialTest(t, c)
	sels, spec := parseRange(t, []string{"orders"}, "start")
	r, err := cl.OpenRange(testCtx(t), sels, spec, append([]ReadOption{FetchPartitionBytes(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var items []*record.Item
	for {
		it, err := r.Next(testCtx(t))
		if err != nil {
			t.Fatalf("before the deletion: %v", err)
		}
		items = append(items, it.Clone())
		if it.Kind == record.KindRecord && it.Offset >= 2 {
			break
		}
	}
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 8})
	if _, err := newAdmin(t, c).DeleteRecords(testCtx(t), del); err != nil {
		t.Fatal(err)
	}
	return r, items
}

// lastRecord returns the offset of the last record of items, -1 for none.
func lastRecord(items []*record.Item) int64 {
	last := int64(-1)
	for _, it := range items {
		if it.Kind == record.KindRecord {
			last = it.Offset
		}
	}
	return last
}

// TestRangeGapFails: retention deleting what a range still had to read
// fails it, naming the channel and the deleted offsets from exactly where
// the read had got to — never a shorter range that ends well.
func TestRangeGapFails(t *testing.T) {
	r, items := retentionMidRead(t)
	for {
		it, err := r.Next(testCtx(t))
		if err == nil {
			items = append(items, it.Clone())
			continue
		}
		if errors.Is(err, io.EOF) {
			t.Fatalf("the range ended well over deleted offsets: %s", trace(items, false))
		}
		var gap *GapError
		if !errors.As(err, &gap) || !errors.Is(err, ErrRangeFailed) {
			t.Fatalf("error %v, want a RangeError holding a GapError", err)
		}
		if want := lastRecord(items) + 1; gap.Channel != "orders/0" || gap.From != want || gap.To != 8 {
			t.Errorf("gap %+v, want orders/0 from %d to 8 (read: %s)", gap, want, trace(items, false))
		}
		msg := err.Error()
		for _, want := range []string{"reading orders/0 failed at position", fmt.Sprintf("offsets %d to 7 of orders/0 were deleted", gap.From), "--allow-gaps"} {
			if !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line with %q", msg, want)
			}
		}
		return
	}
}

// TestRangeAllowGaps: with AllowGaps the range goes on at the new log
// start, and a position item there carries the gap.
func TestRangeAllowGaps(t *testing.T) {
	r, items := retentionMidRead(t, AllowGaps())
	from := int64(-1)
	for {
		it, err := r.Next(testCtx(t))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if it.Gap != nil {
			if from >= 0 {
				t.Errorf("a second gap: %+v", it.Gap)
			}
			if it.Kind != record.KindPosition || it.Offset != 8 || it.Gap.To != 8 || it.Gap.From != lastRecord(items)+1 {
				t.Errorf("gap item %+v (gap %+v) after %s", it, it.Gap, trace(items, false))
			}
			from = it.Gap.From
		}
		items = append(items, it.Clone())
	}
	if from < 0 {
		t.Fatalf("no gap recorded: %s", trace(items, false))
	}
	tr := trace(items, false)
	if !strings.HasSuffix(tr, fmt.Sprintf("r%d=%d p8 r8=8 r9=9 p10", from-1, from-1)) {
		t.Errorf("items %s: want the records up to %d, the gap's position at 8, then 8, 9 and the end", tr, from-1)
	}
}

// TestListedOffsetsOrdered: offsets listed while the partition is written
// keep log start ≤ last stable ≤ high watermark, whatever moved between the
// requests. The broker here grows the log by one offset after every
// ListOffsets answer, the worst a busy partition can do.
func TestListedOffsetsOrdered(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "orders"))
	cl := dialTest(t, c)
	var mu sync.Mutex
	end := int64(199)
	c.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.ListOffsetsRequest)
		resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
		mu.Lock()
		defer mu.Unlock()
		for _, rt := range r.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.LeaderEpoch, sp.Offset = rp.Partition, 0, end
				if rp.Timestamp == -2 {
					sp.Offset = 0
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		end++
		return resp, nil, true
	})
	infos, err := cl.Topics(testCtx(t), "orders")
	if err != nil {
		t.Fatal(err)
	}
	p := infos[0].Partitions[0]
	if p.LogStart > p.LastStable || p.LastStable > p.HighWatermark {
		t.Errorf("listed log start %d, last stable %d, high watermark %d: out of order", p.LogStart, p.LastStable, p.HighWatermark)
	}
}
