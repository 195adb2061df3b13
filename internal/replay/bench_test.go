package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// benchItems is a capture of n channels with per items each, timestamps
// rising per channel but interleaved at random across channels, in file
// order channel by channel.
func benchItems(n, per int) ([]record.Item, []clock.Channel, *clock.Names) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := &clock.Names{}
	var items []record.Item
	var chans []clock.Channel
	for c := range n {
		var id clock.TopicID
		id[0], id[15] = 0xbe, byte(c)
		id[14] = byte(c >> 8)
		chans = append(chans, clock.Channel{Topic: id})
		ts := int64(0)
		for off := range per {
			ts += rng.Int64N(100)
			items = append(items, record.Item{Kind: record.KindRecord, TopicID: id, Offset: int64(off), Timestamp: ts, HasTimestamp: true})
		}
	}
	return items, chans, names
}

// BenchmarkTimestampOrder measures the timestamp merge, per item: of a
// capture Reorder read already, and of a source read channel by channel
// (MergeByTimestamp). Building the sources is not timed.
func BenchmarkTimestampOrder(b *testing.B) {
	for _, n := range []int{8, 512} {
		items, chans, names := benchItems(n, 200_000/n)
		b.Run(fmt.Sprintf("reorder/channels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				src, err := Reorder(&chunky{items: items}, Interleave{Mode: Timestamp}, names, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				drain(src)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(items)), "ns/item")
		})
		b.Run(fmt.Sprintf("merge/channels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			src := newPerChannel(items, chans, names)
			for b.Loop() {
				clear(src.next)
				drain(MergeByTimestamp(src, len(chans)))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(items)), "ns/item")
		})
	}
}

func drain(src engine.Source) {
	for {
		if _, err := src.Next(); err != nil {
			return
		}
	}
}
