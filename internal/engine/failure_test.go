package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// TestFailureOf feeds inputs that fail in each way a replay can and checks
// that FailureOf tells a gate that failed closed from everything else, and
// where: line, channel, offset and code; an error that is not the gate's
// names the line and the channel. (The text of a fail-closed error is
// checked once, by the replay command's TestFailClosedKeepsEvents.)
func TestFailureOf(t *testing.T) {
	id := clock.TopicID{1}
	ch := clock.Channel{Topic: id, Partition: 0}
	names := &clock.Names{}
	if err := names.Add("orders", id); err != nil {
		t.Fatal(err)
	}
	recordAt := func(line, off int64, hs ...clock.Header) *record.Item {
		return &record.Item{Kind: record.KindRecord, Line: line, Topic: "orders", TopicID: id, Partition: 0, Offset: off, Headers: hs}
	}
	truncated := clock.Header{Key: clock.HeaderCauses, Value: []byte{}}
	// A claim on orders/1, which never comes: the record is held.
	claim := clock.Header{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: id, Partition: 1}, Position: 10}))}

	for _, tc := range []struct {
		name  string
		items []*record.Item
		code  gate.Code // "" when the gate did not fail closed
		at    int64     // the offset it failed closed at
		text  string    // when it did not
	}{
		{"undecodable header", []*record.Item{recordAt(3, 5, truncated)},
			gate.Code(clock.CodeTruncated), 5, ""},
		{"out-of-order feed", []*record.Item{recordAt(1, 3, claim), recordAt(2, 5), recordAt(3, 4)},
			gate.CodeOutOfOrderFeed, 4, ""},
		{"unresolvable channel", []*record.Item{{Kind: record.KindRecord, Line: 7, Topic: "nameless", Partition: 2, Offset: 1}},
			"", 0, `line 7: nameless/2: topic "nameless" has no topic_id`},
		{"unknown item kind", []*record.Item{{Kind: record.Kind(99), Line: 9, Topic: "orders", TopicID: id}},
			"", 0, "line 9: orders/0: unknown item kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(Config{Scope: []clock.Channel{ch, {Topic: id, Partition: 1}}, Names: names})
			if err != nil {
				t.Fatal(err)
			}
			var ferr error
			for _, it := range tc.items {
				if ferr = r.Feed(it, func(*Event) error { return nil }); ferr != nil {
					break
				}
			}
			if ferr == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(ferr.Error(), tc.text) {
				t.Errorf("error %q, want it to contain %q", ferr, tc.text)
			}
			wrapped := fmt.Errorf("replaying capture.ndjson: %w", ferr)
			ie, ok := FailureOf(wrapped)
			if ok != (tc.code != "") {
				t.Fatalf("FailureOf(%q) = %v, want %v", ferr, ok, tc.code != "")
			}
			if ok && (ie.Code != tc.code || !ie.FailedClosed() || ie.Line != 3 || ie.Channel != "orders/0" || ie.Offset != tc.at) {
				t.Errorf("failed closed at line %d, %s offset %d (%s); want line 3, orders/0 offset %d (%s)",
					ie.Line, ie.Channel, ie.Offset, ie.Code, tc.at, tc.code)
			}
			var any *InputError
			if !errors.As(wrapped, &any) {
				t.Errorf("%q is not an *InputError", ferr)
			}
		})
	}
	for _, err := range []error{nil, ErrInterrupted, errors.New("broker gone")} {
		if _, ok := FailureOf(err); ok {
			t.Errorf("FailureOf(%v) says failed closed", err)
		}
	}
}
