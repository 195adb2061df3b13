package record

import (
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// TestItemClone: a clone shares no storage with the item, and keeps null
// apart from empty.
func TestItemClone(t *testing.T) {
	it := &Item{Kind: KindRecord, Topic: "t", Offset: 3, Key: nil, Value: []byte("v"),
		Headers: []clock.Header{{Key: "a", Value: []byte("x")}, {Key: "b", Value: nil}, {Key: "c", Value: []byte{}}}}
	c := it.Clone()
	it.Value[0], it.Headers[0].Value[0] = 'w', 'y'
	it.Headers[1].Key = "changed"
	if string(c.Value) != "v" || string(c.Headers[0].Value) != "x" || c.Headers[1].Key != "b" {
		t.Errorf("the clone changed with the item: %+v", c)
	}
	if c.Key != nil || c.Headers[1].Value != nil || c.Headers[2].Value == nil {
		t.Errorf("null and empty not kept apart: key %v, header values %v %v", c.Key, c.Headers[1].Value, c.Headers[2].Value)
	}
	if (&Item{}).Clone().Headers != nil {
		t.Error("a clone of an item without headers has headers")
	}
}

func TestRetentionDeletes(t *testing.T) {
	for policy, want := range map[string]bool{"delete": true, "compact": false, "compact,delete": true, "compact, delete": true, "": false} {
		if got := (Retention{CleanupPolicy: policy}).Deletes(); got != want {
			t.Errorf("Deletes(%q) = %v", policy, got)
		}
	}
}
