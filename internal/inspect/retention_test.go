package inspect

import (
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// TestRetentionClocks: a process that keeps up has no clock; records past
// the committed offset start one, from the timestamp at the read position
// and the topic's retention.ms; with the group's offsets expired the read
// position is the covered position + 1; a log start past it has passed.
func TestRetentionClocks(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	orders := clock.Channel{Topic: clock.TopicID{1, 15: 1}}
	p := startProcess()
	if got := p.RetentionClocks(now); len(got) != 0 {
		t.Fatalf("a process that keeps up: %+v", got)
	}
	p.Facts[orders] = &record.LogFacts{LogStart: 2, LastStable: 9, HighWatermark: 9, Retention: &record.Retention{Ms: 3_600_000, Bytes: -1, CleanupPolicy: "delete"}}
	p.ReadOn = map[int32]*ReadOn{0: {First: map[clock.Channel]FirstRead{orders: {Offset: 5, Timestamp: now.Add(-20 * time.Minute).UnixMilli(), HasTimestamp: true}}}}
	got := p.RetentionClocks(now)
	if len(got) != 1 || got[0].Read != 5 || got[0].Expired || got[0].Headroom != 3 || !got[0].Known || got[0].Left != 40*time.Minute || got[0].Passed() {
		t.Fatalf("committed: %+v", got)
	}
	delete(p.Committed, orders) // expired: fed-up-to 4 + 1
	if got := p.RetentionClocks(now); len(got) != 1 || got[0].Read != 5 || !got[0].Expired {
		t.Fatalf("expired: %+v", got)
	}
	p.Facts[orders].LogStart = 7
	if got := p.RetentionClocks(now); len(got) != 1 || !got[0].Passed() || got[0].Headroom != -2 {
		t.Fatalf("passed: %+v", got)
	}
	p.Facts[orders].Retention = &record.Retention{Ms: -1, Bytes: 1 << 30, CleanupPolicy: "delete"}
	p.Facts[orders].LogStart = 0
	if got := p.RetentionClocks(now); len(got) != 1 || got[0].Known || got[0].RetentionMs != -1 || got[0].Headroom != 5 {
		t.Fatalf("no time limit: %+v", got)
	}
	p.Captured = true
	if got := p.RetentionClocks(now); len(got) != 0 {
		t.Fatalf("a capture: %+v", got)
	}
}
