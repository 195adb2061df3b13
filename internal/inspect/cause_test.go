package inspect

import (
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// testChannel is partition p of topic "t<n>".
func testChannel(n int, p int32) clock.Channel {
	var id clock.TopicID
	id[0] = 0x5a
	id[14], id[15] = byte(n>>8), byte(n)
	return clock.Channel{Topic: id, Partition: p}
}

func TestCauseRanks(t *testing.T) {
	for i, c := range Causes() {
		if c.String() == "" || c.Rank() != i {
			t.Errorf("cause %d %q: rank %d", i, c, c.Rank())
		}
	}
	if Cause("bogus").Rank() != len(Causes()) {
		t.Error("an unknown cause does not rank last")
	}
}

// BenchmarkSnapshot builds a snapshot of a gate with 10 000 channels (100
// topics of 100 partitions; the 9 000 not held are settled, so the stamp
// has over 9 000 entries) and 1 000 held heads with 4-entry clocks — 900
// waiting on a record not received, 100 in chains of ten — each with a
// second record queued behind it. A live driver builds at most ten a
// second. With stamp=1s the stamp is recomputed once a second
// (SnapshotOptions.StampEvery), as a live driver over such a scope would
// ask.
