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
		if got := text(jsonReport{Changelog: "c", HeldHeads: tc.heads, HeldRecords: tc.records}); !strings.Contains(got, tc.want) {
			t.Errorf("%d heads, %d records: %q lacks %q", tc.heads, tc.records, got, tc.want)
		}
	}
}
