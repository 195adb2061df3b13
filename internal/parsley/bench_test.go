package parsley

import (
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// changelogEntries builds n changelog entries as a busy task writes them:
// held records on 16 channels, 30 % of them tombstoned later, fed-up-to
// rewritten as it goes.
func changelogEntries(n int) (keys, values [][]byte) {
	chans := make([]clock.Channel, 16)
	for i := range chans {
		chans[i] = clock.Channel{Topic: clock.TopicID{byte(1 + i/4), 1}, Partition: int32(i % 4)}
	}
	var pos [16]int64
	for i := 0; len(keys) < n; i++ {
		c := i % 16
		ch := chans[c]
		switch {
		case i%10 < 6:
			keys = append(keys, heldKey(ch, pos[c]))
			values = append(values, heldValue(1764450000000+int64(i), clock.Entry{Channel: chans[(c+1)%16], Position: pos[c]}))
			pos[c]++
		case i%10 < 9:
			keys = append(keys, heldKey(ch, max(0, pos[c]-3)))
			values = append(values, nil)
		default:
			keys = append(keys, key(Key{Tag: TagFedUpTo, Channel: ch}))
			values = append(values, AppendPosition(nil, pos[c]))
		}
	}
	return keys, values
}

// BenchmarkStore applies a million-entry changelog (30 % tombstones) and
// decodes the live store: entries/s is the figure of issue 27's target.
func BenchmarkStore(b *testing.B) {
	const n = 1_000_000
	keys, values := changelogEntries(n)
	b.ResetTimer()
	for range b.N {
		s := NewStore(0)
		s.Apply(-1, []byte{'v'}, []byte{StoreVersion})
		for i := range keys {
			s.Apply(int64(i), keys[i], values[i])
		}
		if t := s.Decode(); len(t.Corrupt) != 0 {
			b.Fatal(t.Corrupt[0])
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
