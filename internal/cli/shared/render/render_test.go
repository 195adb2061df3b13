package render

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/inspect"
)

func p(v int64) *int64 { return &v }

func summary() *inspect.Summary {
	return &inspect.Summary{
		Received: 9, Delivered: 5, Dropped: 1, Held: 3, Skipped: 2,
		Channels: []inspect.ChannelSummary{
			{Channel: "orders/0", Settled: p(4), ReceivedUpTo: p(4)},
			{Channel: "payments/0", ReceivedUpTo: p(7), Held: 3, Head: &inspect.HeadSummary{Offset: 5, Root: "orders/0",
				Blockers: []inspect.BlockerSummary{{Channel: "orders/0", Required: 9, Settled: p(4), Kind: "not-received"}, {Channel: "orders/1", Required: 1, Kind: "not-received"}}}},
		},
		Cycles: [][]string{{"a/0", "b/0"}},
		Failed: &inspect.Failure{Channel: "payments/0", Offset: 8, Line: 12, Code: "truncated", Error: "truncated"},
	}
}

func TestSummaryText(t *testing.T) {
	var b bytes.Buffer
	if err := Summary(&b, "text", summary()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Replay FAILED CLOSED: 9 received, 5 delivered, 1 dropped, 3 held (2 outside the scope skipped).",
		"The gate failed closed at payments/0 offset 8 (line 12): truncated.",
		"▲ payments/0",
		"orders/0 ≥ 9, settled 4 (+1)", // the first blocker and how many more
		"Blocked heads:",
		"payments/0@5",
		"orders/1", // the second blocker's row, settled unknown
		"a/0 → b/0 → a/0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	s := summary()
	s.Failed, s.Interrupted = nil, true
	b.Reset()
	if err := Summary(&b, "text", s); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.HasPrefix(out, "Replay interrupted:") || strings.Contains(out, "failed closed") {
		t.Errorf("interrupted:\n%s", out)
	}
	// The demo, which runs until stopped, says stopped (q or Ctrl-C).
	b.Reset()
	if err := StoppedSummary(&b, "text", s); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.HasPrefix(out, "Replay stopped:") {
		t.Errorf("stopped:\n%s", out)
	}
}

func TestSummaryJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Summary(&b, "json", summary()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 || !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("want one line, got %d newlines", n)
	}
	var back inspect.Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, summary()) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", back, *summary())
	}
	if err := Summary(&b, "yaml", summary()); err == nil {
		t.Error("yaml accepted")
	}
}

func TestJSONLineLeavesHTML(t *testing.T) {
	b, err := JSONLine(map[string]string{"k": "a<b>&c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"k":"a<b>&c"}`+"\n" {
		t.Errorf("got %q", got)
	}
}
