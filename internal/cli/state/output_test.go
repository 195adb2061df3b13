package state

import (
	"strings"
	"testing"
)

// TestHeadingCounts: the report's first line counts heads and records in
// the singular when there is one.
func TestHeadingCounts(t *testing.T) {
	for _, tc := range []struct {
		heads, records int
		want           string
	}{
		{1, 1, ": 1 held head, 1 record held.\n"},
		{1, 3, ": 1 held head, 3 records held.\n"},
		{0, 0, ": 0 held heads, 0 records held.\n"},
	} {
		if got := text(jsonReport{Changelog: "c", HeldHeads: tc.heads, HeldRecords: tc.records}, 0); !strings.Contains(got, tc.want) {
			t.Errorf("%d heads, %d records: %q lacks %q", tc.heads, tc.records, got, tc.want)
		}
	}
}

// TestChannelTable: a task's channels are a table by render.Table's rule,
// indented under the task: titles, numbers right-aligned, "-" for what is
// unknown; at 40 columns the delivered past and the frontier are left out.
func TestChannelTable(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	chs := []jsonChannel{
		{Channel: "orders/0", FedUpTo: n(126), Settled: n(126), Frontier: n(145), DeliveredPast: n(125), Committed: n(127), Lag: n(20)},
		{Channel: "shipments/10", FedUpTo: n(7), Held: 25},
	}
	got := channelTable(chs, 0)
	want := "" +
		"  CHANNEL       FED  SETTLED  FRONTIER  PAST  HELD  COMMITTED  LAG\n" +
		"  orders/0      126      126       145   125     0        127   20\n" +
		"  shipments/10    7        -         -     -    25          -    -\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	narrow := channelTable(chs, 52)
	header, _, _ := strings.Cut(narrow, "\n")
	if strings.Contains(header, "PAST") || strings.Contains(header, "FRONTIER") || !strings.Contains(header, "COMMITTED") {
		t.Errorf("at 52 columns:\n%s", narrow)
	}
}
