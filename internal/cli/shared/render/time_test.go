package render

import (
	"testing"
	"time"
)

// TestTime: UTC whatever the zone, milliseconds always written.
func TestTime(t *testing.T) {
	east := time.FixedZone("east", 5*3600)
	for in, want := range map[time.Time]string{
		time.Date(2026, 12, 1, 17, 0, 0, 0, east):           "2026-12-01T12:00:00.000Z",
		time.UnixMilli(1764450000123):                       "2025-11-29T21:00:00.123Z",
		time.Date(2026, 1, 2, 3, 4, 5, 6_999_999, time.UTC): "2026-01-02T03:04:05.006Z",
	} {
		if got := Time(in); got != want {
			t.Errorf("Time(%v) = %s, want %s", in, got, want)
		}
	}
}
