package audit

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// manyChannels is an input of n channels (topics of 100 partitions) of two
// records each, the second claiming the first records of two other
// channels, and a scope of every other channel.
func manyChannels(n int) ([]record.Item, []Scope) {
	ch := func(k int) (string, clock.Channel) {
		var id clock.TopicID
		id[0], id[14], id[15] = 0x6d, byte(k/100>>8), byte(k/100)
		return fmt.Sprintf("t%d", k/100), clock.Channel{Topic: id, Partition: int32(k % 100)}
	}
	var items []record.Item
	var half Scope
	for k := range n {
		name, c := ch(k)
		if k%2 == 0 {
			half.Channels = append(half.Channels, c)
		}
		_, x := ch((k + 1) % n)
		_, y := ch((k + 7) % n)
		items = append(items,
			record.Item{Kind: record.KindRecord, Topic: name, TopicID: c.Topic, Partition: c.Partition},
			record.Item{Kind: record.KindRecord, Topic: name, TopicID: c.Topic, Partition: c.Partition, Offset: 1,
				Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(
					clock.Entry{Channel: x, Position: 0}, clock.Entry{Channel: y, Position: 0}))}}})
	}
	half.Name = "half"
	return items, []Scope{half}
}

// BenchmarkAuditChannels audits inputs of 1 000, 5 000 and 20 000 channels
// with claims: the memory must grow with the records and claims, not with
// the channels times a fixed reserve.
func BenchmarkAuditChannels(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			items, scopes := manyChannels(n)
			b.ReportAllocs()
			for b.Loop() {
				if rep := auditItems(b, New(Config{}), items, scopes); rep.Records != int64(2*n) {
					b.Fatalf("%d records", rep.Records)
				}
			}
		})
	}
}

// TestChunkedGrows: a chunked array keeps every value in order across the
// first chunk's doublings and the fixed chunks after it, and a small one
// reserves no more than twice what it holds.
func TestChunkedGrows(t *testing.T) {
	var c chunked[uint32]
	const n = 3<<chunkBits + 5
	for i := range n {
		c.append(uint32(i))
		if i == 5 && cap(c.chunks[0]) > 2*(i+1) {
			t.Fatalf("6 values reserve %d", cap(c.chunks[0]))
		}
	}
	if c.len() != n || len(c.chunks) != 4 || cap(c.chunks[0]) != 1<<chunkBits {
		t.Fatalf("len %d, %d chunks, first of %d", c.len(), len(c.chunks), cap(c.chunks[0]))
	}
	for i := range n {
		if c.at(i) != uint32(i) {
			t.Fatalf("at(%d) = %d", i, c.at(i))
		}
	}
}

// chainChannel is channel k of a chain: topics of 20 partitions, as a
// cluster-wide capture of 1 000 topics × 20 partitions has 20 000 channels.
func chainChannel(k int) (string, clock.Channel) {
	var id clock.TopicID
	id[0], id[14], id[15] = 0xc4, byte(k/20>>8), byte(k/20)
	return fmt.Sprintf("c%d", k/20), clock.Channel{Topic: id, Partition: int32(k % 20)}
}

// chain is a chain of n channels of two records each: the first record of
// channel k claims the last of channel k−1 and nothing else, so that every
// record has every earlier channel among its causes while the input holds
// one claim a channel. The records come in causal order.
func chain(n int) []record.Item {
	items := make([]record.Item, 0, 2*n)
	for k := range n {
		name, c := chainChannel(k)
		first := record.Item{Kind: record.KindRecord, Topic: name, TopicID: c.Topic, Partition: c.Partition}
		if k > 0 {
			_, up := chainChannel(k - 1)
			first.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: up, Position: 1}))}}
		}
		second := first
		second.Offset, second.Headers = 1, nil
		items = append(items, first, second)
	}
	for i := range items {
		items[i].Line = int64(i + 1)
	}
	return items
}

// chainScopes are the scopes BenchmarkAuditChain audits a chain for: every
// channel (the default), and the lower half of the chain, a node that
// waits for all it consumes (no hole) while every record of the upper
// half has the whole lower half among its causes.
func chainScopes(n int) map[string][]Scope {
	var lower Scope
	for k := range n / 2 {
		_, c := chainChannel(k)
		lower.Channels = append(lower.Channels, c)
	}
	return map[string][]Scope{"every": nil, "lower": {lower}}
}

var (
	chainCapture  = flag.String("audit.chain", "", "TestWriteChainCapture writes a chain of channels to this `FILE`")
	chainChannels = flag.Int("audit.channels", 20_000, "channels of the chain")
)

// TestWriteChainCapture writes the chain for measuring `causalctl check`
// end to end (docs/performance.md, "A chain of channels"):
//
//	go test ./internal/inspect/audit -run WriteChain -audit.chain /tmp/chain.ndjson -audit.channels 20000
func TestWriteChainCapture(t *testing.T) {
	if *chainCapture == "" {
		t.Skip("no -audit.chain FILE")
	}
	var out []byte
	for _, it := range chain(*chainChannels) {
		it.Line = 0
		var err error
		if out, err = capture.AppendItem(out, &it); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(*chainCapture, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAuditChain audits chains of 5 000, 10 000 and 20 000 channels
// (issue 36: the audit grew with channels², 1.86 GiB at 20 000): the cost
// must grow with the channels and claims. peak-heap-MiB is the most heap
// in use seen during an audit.
func BenchmarkAuditChain(b *testing.B) {
	for _, n := range []int{5000, 10000, 20000} {
		items := chain(n)
		for _, name := range []string{"every", "lower"} {
			scopes := chainScopes(n)[name]
			b.Run(fmt.Sprintf("scope=%s/channels=%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				peak := testutil.PeakHeap(b)
				for b.Loop() {
					if rep := auditItems(b, New(Config{}), items, scopes); rep.Records != int64(2*n) || rep.Len() != 0 {
						b.Fatalf("%d records, %d findings", rep.Records, rep.Len())
					}
				}
				peak()
			})
		}
	}
}

// On a chain, a scope of its lower half is closed: no closure is computed
// and nothing is found. With the top channel added, which claims the upper
// half, the scope is not closed and both records of the top channel miss
// every lower channel, as the dense audit finds too.
func TestAuditChainScopes(t *testing.T) {
	const n = 40
	items := chain(n)
	lower := chainScopes(n)["lower"]
	_, top := chainChannel(n - 1)
	open := []Scope{{Name: "open", Channels: append(slices.Clone(lower[0].Channels), top)}}
	for _, tc := range []struct {
		name   string
		scopes []Scope
		holes  int
	}{{"every", nil, 0}, {"lower", lower, 0}, {"lower and top", open, n}} {
		a := New(Config{})
		rep := auditItems(t, a, items, tc.scopes)
		if rep.Len() != tc.holes || rep.Counts[FindingHole] != tc.holes {
			t.Errorf("%s: %d findings (%v), want %d holes", tc.name, rep.Len(), rep.Counts, tc.holes)
		}
		if closures := a.rel != nil; closures != (tc.holes > 0) {
			t.Errorf("%s: closures computed %v, want %v", tc.name, closures, tc.holes > 0)
		}
		dense := New(Config{})
		dense.dense = true
		if got, want := reportText(rep), reportText(auditItems(t, dense, items, tc.scopes)); got != want {
			t.Errorf("%s: the report differs from the dense audit's\ngot:\n%s\nwant:\n%s", tc.name, got, want)
		}
	}
}
