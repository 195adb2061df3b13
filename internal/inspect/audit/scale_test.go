package audit

import (
	"fmt"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
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
