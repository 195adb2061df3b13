package kafka

import (
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
)

func TestParseOffsets(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	start, end := Bound{Kind: BoundLogStart}, Bound{Kind: BoundLogEnd}
	off := func(n int64) Bound { return Bound{Kind: BoundOffset, N: n} }
	at := func(t time.Time) Bound { return Bound{Kind: BoundTime, Time: t} }
	day := time.Date(2022, 2, 14, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want OffsetSpec
	}{
		{"start", OffsetSpec{start, end}},
		{"oldest", OffsetSpec{start, end}},
		{" start ", OffsetSpec{start, end}},
		{":end", OffsetSpec{start, end}},
		{"end", OffsetSpec{end, end}},
		{"newest", OffsetSpec{end, end}},
		{"0", OffsetSpec{off(0), end}},
		{"47", OffsetSpec{off(47), end}},
		{"47:", OffsetSpec{off(47), end}},
		{"47:end", OffsetSpec{off(47), end}},
		{"47-end", OffsetSpec{off(47), end}},
		{":90", OffsetSpec{start, off(90)}},
		{"10:20", OffsetSpec{off(10), off(20)}},
		{"10-20", OffsetSpec{off(10), off(20)}},
		{"+5", OffsetSpec{Bound{Kind: BoundAfterStart, N: 5}, end}},
		{"-5", OffsetSpec{Bound{Kind: BoundBeforeEnd, N: 5}, end}},
		{"+0", OffsetSpec{Bound{Kind: BoundAfterStart}, end}},
		// Timestamps: unix milliseconds, 10 digits as seconds, dates,
		// RFC 3339, durations.
		{"@1644796800000", OffsetSpec{at(day), end}},
		{"@1644796800", OffsetSpec{at(day), end}},
		{"@0", OffsetSpec{at(time.UnixMilli(0)), end}},
		{"@2022-02-14", OffsetSpec{at(day), end}},
		{"@2022-02-14:", OffsetSpec{at(day), end}},
		{"@2022-02-14:end", OffsetSpec{at(day), end}},
		{"@2022-02-14:1h", OffsetSpec{at(day), at(day.Add(time.Hour))}},
		{"@2022-02-14:2022-02-15", OffsetSpec{at(day), at(day.Add(24 * time.Hour))}},
		{"@2022-02-14T10:30:00Z", OffsetSpec{at(day.Add(10*time.Hour + 30*time.Minute)), end}},
		{"@2022-02-14T10:30:00.250Z", OffsetSpec{at(day.Add(10*time.Hour + 30*time.Minute + 250*time.Millisecond)), end}},
		{"@2022-02-14T11:30:00+01:00", OffsetSpec{at(day.Add(10*time.Hour + 30*time.Minute)), end}},
		{"@2022-02-14T10:00:00Z:2022-02-14T11:00:00Z", OffsetSpec{at(day.Add(10 * time.Hour)), at(day.Add(11 * time.Hour))}},
		{"@2022-02-14T10:00:00Z:30m", OffsetSpec{at(day.Add(10 * time.Hour)), at(day.Add(10*time.Hour + 30*time.Minute))}},
		{"@-1h", OffsetSpec{at(now.Add(-time.Hour)), end}},
		{"@-1m:end", OffsetSpec{at(now.Add(-time.Minute)), end}},
		{"@-48h:-24h", OffsetSpec{at(now.Add(-48 * time.Hour)), at(now.Add(-24 * time.Hour))}},
		{"@-2h:1h", OffsetSpec{at(now.Add(-2 * time.Hour)), at(now.Add(time.Hour))}},
		{"@:-1h", OffsetSpec{start, at(now.Add(-time.Hour))}},
		{"@:2022-02-14", OffsetSpec{start, at(day)}},
		{"@1m30s", OffsetSpec{at(now.Add(90 * time.Second)), end}},
	} {
		got, err := ParseOffsets(tc.in, now)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !sameSpec(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func sameSpec(a, b OffsetSpec) bool {
	same := func(x, y Bound) bool { return x.Kind == y.Kind && x.N == y.N && x.Time.Equal(y.Time) }
	return same(a.Start, b.Start) && same(a.End, b.End)
}

func TestParseOffsetsErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"begin", "not an offset"},
		{"-", "not an offset"},
		{"+x", "not an offset"},
		{"--5", "not an offset"},
		{"1.5", "not an offset"},
		{"20:10", "end 10 is not after start 20"},
		{"10:10", "end 10 is not after start 10"},
		{"a:b", "not an offset"},
		{"5:x", "not an offset"},
		{"99999999999999999999", "too large"},
		{"@", "needs a time"},
		{"@:", "needs a time"},
		{"@end", `"end" can only end`},
		{"@yesterday", "want unix milliseconds"},
		{"@2022-02-30", "date"},
		{"@2022-02-14T10:00:00", "RFC 3339"},
		{"@2022-02-14:2022-02-13", "before start time"},
		{"@-1h:-2h", "before start time"},
		{"@2022-02-14:1h:2h", "want unix milliseconds"},
	} {
		_, err := ParseOffsets(tc.in, now)
		if err == nil {
			t.Errorf("%q: accepted", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q, want it to mention %q", tc.in, err, tc.want)
		}
	}
}

func TestParseTopicSels(t *testing.T) {
	id := clock.TopicID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}
	got, err := ParseTopicSels([]string{"orders", "payments/3", "a.b_c-d/0,x", "01020304-0506-0708-090A-0B0C0D0E0F10/2"})
	if err != nil {
		t.Fatal(err)
	}
	want := []TopicSel{
		{Topic: "orders", Partition: AllPartitions},
		{Topic: "payments", Partition: 3},
		{Topic: "a.b_c-d", Partition: 0},
		{Topic: "x", Partition: AllPartitions},
		{ID: id, Partition: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := want[4].String(); s != "01020304-0506-0708-090a-0b0c0d0e0f10/2" {
		t.Errorf("String: %s", s)
	}
	if s := want[0].String(); s != "orders" {
		t.Errorf("String: %s", s)
	}
	for _, bad := range []string{"", "orders/", "orders/-1", "orders/x", "or ders", "a/b/c", "..", "00000000-0000-0000-0000-000000000000", strings.Repeat("x", 250)} {
		if _, err := ParseTopicSels([]string{bad}); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
