package inspect

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// startProcess is one task receiving orders and payments, holding a
// record on payments/0, fed up to 4 on both, committed at 5.
func startProcess() *Process {
	orders, payments := clock.TopicID{1, 15: 1}, clock.TopicID{2, 15: 2}
	cl := parsley.NewChangelog(parsley.ChangelogTopic("app"), clock.TopicID{9, 15: 9})
	put := func(k parsley.Key, v []byte) {
		cl.Apply(0, int64(cl.Partition(0).Entries), parsley.AppendKey(nil, k), v)
	}
	put(parsley.Key{Tag: parsley.TagVersion}, []byte{1})
	for name, id := range map[string]clock.TopicID{"orders": orders, "payments": payments} {
		put(parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, id))
		put(parsley.Key{Tag: parsley.TagFedUpTo, Channel: clock.Channel{Topic: id}}, parsley.AppendPosition(nil, 4))
	}
	put(parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: payments}, Position: 4},
		parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Causes: []clock.Entry{{Channel: clock.Channel{Topic: orders}, Position: 9}}}))
	p := NewProcess("app", cl, &clock.Names{})
	p.Committed = map[clock.Channel]int64{}
	for name, id := range map[string]clock.TopicID{"orders": orders, "payments": payments} {
		p.Learn(name, id, 0)
		p.Facts[clock.Channel{Topic: id}] = &record.LogFacts{LogStart: 0, LastStable: 5, HighWatermark: 5}
		p.Committed[clock.Channel{Topic: id}] = 5
	}
	return p
}

func reasonsOf(rs []parsley.Refusal) []parsley.Reason {
	var out []parsley.Reason
	for _, r := range rs {
		out = append(out, r.Reason)
	}
	return out
}

// Today's declaration is the members' subscriptions while the process
// runs, else the store's bindings; --receives replaces it.
func TestNextStartDeclaration(t *testing.T) {
	p := startProcess()
	if got := p.NextStart(nil); len(got) != 0 {
		t.Fatalf("stopped, bindings: %+v", got)
	}
	in := p.StartInput(nil)
	if in.Committed[parsley.TopicPartition{Topic: "payments"}] != 5 || in.ChangelogPartitions != 1 ||
		!maps.Equal(in.Cluster["orders"].LogStarts, map[int32]int64{0: 0}) || in.Cluster["orders"].Partitions != 1 || in.Declared {
		t.Errorf("input %+v", in)
	}
	want := []parsley.Reason{parsley.ReasonRemovedWithHeld}
	if got := p.NextStart([]string{"orders"}); !slices.Equal(reasonsOf(got), want) {
		t.Errorf("declaration dropping payments: %+v", got)
	}
	p.Group = &record.Group{Group: "app", State: "Stable", Members: []record.GroupMember{{MemberID: "m", Subscription: []string{"orders"}}}}
	if got := p.NextStart(nil); !slices.Equal(reasonsOf(got), want) {
		t.Errorf("running, subscribed to orders only: %+v", got)
	}
	if got := p.NextStart([]string{"orders", "payments"}); len(got) != 0 {
		t.Errorf("--receives over the subscription: %+v", got)
	}
	// A capture: no group offsets, and a topic without log facts is
	// unknown rather than deleted.
	p = startProcess()
	p.Committed, p.Captured = nil, true
	delete(p.IDs, "payments")
	if got := p.NextStart(nil); len(got) != 0 {
		t.Errorf("capture lacking payments: %+v", got)
	}
	p.Captured = false
	if got := p.NextStart(nil); !slices.Equal(reasonsOf(got), []parsley.Reason{parsley.ReasonDeletedWithUndelivered}) {
		t.Errorf("cluster lacking payments: %+v", got)
	}
}

// A partition 2^31−1, which a capture may name and a broker may claim,
// makes no negative count (max+1 wrapped it to −2^31, printed in the
// width refusal) and no slice of 2^31 log starts.
func TestStartInputPartitionAtTheInt32End(t *testing.T) {
	p := startProcess()
	orders := p.IDs["orders"]
	p.Learn("orders", orders, math.MaxInt32)
	p.Changelog.Apply(math.MaxInt32, 0, parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagVersion}), []byte{1})
	in := p.StartInput(nil)
	if in.ChangelogPartitions != math.MaxInt32 || in.Cluster["orders"].Partitions != math.MaxInt32 {
		t.Fatalf("changelog %d partitions, orders %d", in.ChangelogPartitions, in.Cluster["orders"].Partitions)
	}
	for _, r := range p.NextStart(nil) {
		if strings.Contains(r.Detail, "-2147483648") {
			t.Errorf("a negative count: %s", r.Detail)
		}
	}
}

// A committed offset beyond the log's end is no lag of 0 ("caught up"),
// and a held record stamped 2^63−1 ms is of unknown time, not a negative
// age (time.UnixMilli(MaxInt64) is 292 million years ahead).
func TestSummaryOutOfRangeNumbers(t *testing.T) {
	p := startProcess()
	payments := p.IDs["payments"]
	for ch := range p.Committed {
		p.Committed[ch] = 1 << 62
	}
	held := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: math.MaxInt64})
	p.Changelog.Apply(0, int64(p.Changelog.Partition(0).Entries),
		parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: payments}, Position: 3}), held)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := SummarizeProcess(p.Changelog.Topic, 1, p, nil, now)
	if r.LagKnown {
		t.Errorf("lag %d on %s, from committed offsets 2^62 beyond ends of 5", r.MaxLag, r.LagChannel)
	}
	if r.Oldest < 0 || r.Undated != 1 {
		t.Errorf("oldest %v (dated %v), undated %d: want the 2^63−1 stamp undated", r.Oldest, r.Dated, r.Undated)
	}
	if _, ok := HeldTimestamp(p.Changelog.Partition(0).Store.Decode(), clock.Channel{Topic: payments}, 3); ok {
		t.Error("HeldTimestamp read 2^63−1 ms as a time")
	}
}
