package view

import (
	"math"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
)

func TestAgeText(t *testing.T) {
	for _, c := range []struct {
		a    inspect.Age
		want string
	}{
		{inspect.Age{}, "-"},
		{inspect.Age{D: -time.Second, Known: true}, "0ms"},
		{inspect.Age{D: 850 * time.Millisecond, Known: true}, "850ms"},
		{inspect.Age{D: 12340 * time.Millisecond, Known: true}, "12.3s"},
		{inspect.Age{D: 4*time.Minute + 5*time.Second, Known: true}, "4m05s"},
		{inspect.Age{D: 2*time.Hour + 3*time.Minute, Known: true}, "2h03m"},
		{inspect.Age{D: 76 * time.Hour, Known: true}, "3d04h"},
	} {
		if got := AgeText(c.a); got != c.want {
			t.Errorf("%v: %q, want %q", c.a.D, got, c.want)
		}
	}
}

// TestEventsTimestampOutOfRange: a held record stamped beyond 2262 (ms
// whose nanoseconds wrap an int64) has no time, rather than a wrapped one
// that makes a negative or absurd age.
func TestEventsTimestampOutOfRange(t *testing.T) {
	ch := clock.Channel{Topic: clock.TopicID{1, 15: 1}}
	tr := NewEvents(0)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for off, ms := range []int64{math.MaxInt64, record.MaxTimestamp + 1, at.UnixMilli()} {
		tr.Observe(&engine.Event{Type: engine.EventHold, Channel: ch, Offset: int64(off), HasTimestamp: true, Timestamp: ms}, at)
	}
	for off := range 2 {
		if ts, ok := tr.Timestamp(ch, int64(off)); ok {
			t.Errorf("offset %d: timestamp read as %v", off, ts)
		}
	}
	if ts, ok := tr.Timestamp(ch, 2); !ok || !ts.Equal(at) {
		t.Errorf("an ordinary timestamp: %v %v", ts, ok)
	}
}
