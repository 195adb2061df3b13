package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
)

// RetentionClock is one retention clock (inspect.RetentionClock) as
// `state` and `processes` print it: its JSON is the retention_clock items
// of both commands' schemas.
type RetentionClock struct {
	Channel  string `json:"channel"`
	Read     int64  `json:"read"`
	Expired  bool   `json:"offsets_expired"`
	LogStart int64  `json:"log_start"`
	End      int64  `json:"end"`
	Headroom int64  `json:"headroom"`
	Passed   bool   `json:"passed"`
	// Written, RetentionMs, DeletesAt and LeftMs are null when unknown.
	Written     *string `json:"written"`
	RetentionMs *int64  `json:"retention_ms"`
	DeletesAt   *string `json:"deletes_at"`
	LeftMs      *int64  `json:"left_ms"`
}

// RetentionClocks renders clocks with channels named by name, in the
// order people read them: by topic name, then partition.
func RetentionClocks(clocks []inspect.RetentionClock, name func(clock.Channel) string) []RetentionClock {
	out := []RetentionClock{}
	clocks = slices.Clone(clocks)
	topic := func(c inspect.RetentionClock) string {
		n, _, _ := strings.Cut(name(c.Channel), "/")
		return n
	}
	slices.SortStableFunc(clocks, func(a, b inspect.RetentionClock) int {
		return cmp.Or(cmp.Compare(topic(a), topic(b)), cmp.Compare(a.Channel.Partition, b.Channel.Partition))
	})
	for _, c := range clocks {
		rc := RetentionClock{Channel: name(c.Channel), Read: c.Read, Expired: c.Expired, LogStart: c.LogStart, End: c.End,
			Headroom: c.Headroom, Passed: c.Passed()}
		if !c.Written.IsZero() {
			rc.Written = ptr(Time(c.Written))
		}
		if c.RetentionMs >= 0 {
			rc.RetentionMs = ptr(c.RetentionMs)
		}
		if c.Known {
			rc.DeletesAt, rc.LeftMs = ptr(Time(c.DeletesAt)), ptr(c.Left.Milliseconds())
		}
		out = append(out, rc)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// RetentionText says each clock in a line for people, under a heading;
// "" when none runs.
func RetentionText(clocks []RetentionClock) string {
	if len(clocks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("retention clock (the read positions retention runs against):\n")
	for _, c := range clocks {
		from := "committed"
		if c.Expired {
			from = "covered + 1, the group's offsets expired"
		}
		fmt.Fprintf(&b, "  %s: reads at %d (%s), log %d–%d: ", c.Channel, c.Read, from, c.LogStart, c.End)
		switch {
		case c.Passed:
			fmt.Fprintf(&b, "retention passed it by %s: the next fetch refuses (POSITIONS_DISCARDED_UNREAD)\n", Count(-c.Headroom, "position", "positions"))
		case c.LeftMs != nil && *c.LeftMs <= 0:
			fmt.Fprintf(&b, "%s of headroom, and its record may go any time (written %s, retention.ms %d)\n", Count(c.Headroom, "position", "positions"), *c.Written, *c.RetentionMs)
		case c.LeftMs != nil:
			fmt.Fprintf(&b, "%s of headroom, %s left (until %s)\n", Count(c.Headroom, "position", "positions"), (time.Duration(*c.LeftMs) * time.Millisecond).Round(time.Second), *c.DeletesAt)
		case c.RetentionMs == nil:
			fmt.Fprintf(&b, "%s of headroom; the topic keeps its records (no time limit known)\n", Count(c.Headroom, "position", "positions"))
		default:
			fmt.Fprintf(&b, "%s of headroom; time left unknown (no timestamp at the read position)\n", Count(c.Headroom, "position", "positions"))
		}
	}
	return b.String()
}
