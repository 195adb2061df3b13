package view

import (
	"reflect"
	"testing"
	"time"
)

// TestCollapseRepeats: runs of one event (kind and text) become one, its
// count in Repeats and the last time kept; events apart stay apart.
func TestCollapseRepeats(t *testing.T) {
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	err := func(s int64) RecentEvent { return RecentEvent{Kind: "error", Text: "error: broker gone", At: at(s)} }
	got := CollapseRepeats([]RecentEvent{
		{Kind: "deliver", Text: "deliver #1 a/0@1", At: at(1)},
		err(2), err(3), err(4),
		{Kind: "hold", Text: "error: broker gone", At: at(5)}, // same text, another kind
		err(6),
	})
	want := []RecentEvent{
		{Kind: "deliver", Text: "deliver #1 a/0@1", At: at(1), Repeats: 1},
		{Kind: "error", Text: "error: broker gone", At: at(4), Repeats: 3},
		{Kind: "hold", Text: "error: broker gone", At: at(5), Repeats: 1},
		{Kind: "error", Text: "error: broker gone", At: at(6), Repeats: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
