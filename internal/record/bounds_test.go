package record

import (
	"math"
	"testing"
	"time"
)

func TestCommittedLag(t *testing.T) {
	f := &LogFacts{LogStart: 0, LastStable: 90, HighWatermark: 100}
	for _, tc := range []struct {
		committed, want int64
	}{
		{0, 90},
		{90, 0},
		{95, 0},       // inside an open transaction: at the stable end
		{100, 0},      // at the high watermark
		{101, -1},     // beyond the log: truncated under it, or bogus
		{1 << 62, -1}, // was lag 0, "caught up"
		{math.MaxInt64, -1},
		{-1, -1},
	} {
		if got := f.CommittedLag(tc.committed); got != tc.want {
			t.Errorf("committed %d: lag %d, want %d", tc.committed, got, tc.want)
		}
	}
	if got := (&LogFacts{LastStable: -1, HighWatermark: -1}).CommittedLag(3); got != -1 {
		t.Errorf("no end: lag %d", got)
	}
	if got := (&LogFacts{LastStable: 10, HighWatermark: -1}).CommittedLag(11); got != -1 {
		t.Errorf("beyond the last stable offset, no high watermark: lag %d", got)
	}
}

func TestTimeOf(t *testing.T) {
	for _, ms := range []int64{-1, math.MinInt64, MaxTimestamp + 1, math.MaxInt64} {
		if at, ok := TimeOf(ms); ok {
			t.Errorf("%d: read as %v", ms, at)
		}
	}
	for _, ms := range []int64{0, 1764590400000, MaxTimestamp} {
		at, ok := TimeOf(ms)
		if !ok || at.UnixMilli() != ms || at.UnixNano()/int64(time.Millisecond) != ms {
			t.Errorf("%d: %v %v", ms, at, ok)
		}
	}
}
