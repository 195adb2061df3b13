package capture

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestGapLine: a position line past deleted offsets carries them as
// "gap", and reads back as it was written.
func TestGapLine(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	gapped := &Item{Kind: KindPosition, Topic: "orders", Partition: 1, Offset: 10, Gap: &Gap{From: 3, To: 10}}
	if err := w.Write(gapped); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	const want = `{"topic":"orders","partition":1,"position":10,"gap":{"from":3,"to":10}}` + "\n"
	if buf.String() != want {
		t.Fatalf("gap line %q, want %q", buf.String(), want)
	}
	it, err := NewReader(&buf).Next()
	if err != nil {
		t.Fatal(err)
	}
	if it.Kind != KindPosition || it.Offset != 10 || it.Gap == nil || *it.Gap != (Gap{From: 3, To: 10}) {
		t.Errorf("read back %+v (gap %+v)", it, it.Gap)
	}
}

func TestGapLineErrors(t *testing.T) {
	for _, c := range []struct{ line, msg string }{
		{`{"topic":"a","partition":0,"offset":3,"gap":{"from":1,"to":3},"headers":[],"key":null,"value":null}`, `"gap" on a line that is no position line`},
		{`{"topic":"a","partition":0,"position":3,"gap":{"from":1,"to":4}}`, "a gap ends at the position"},
		{`{"topic":"a","partition":0,"position":3,"gap":{"from":3,"to":3}}`, "is empty"},
		{`{"topic":"a","partition":0,"position":3,"gap":{"from":1}}`, `want {"from": OFFSET, "to": OFFSET}`},
		{`{"topic":"a","partition":0,"position":3,"gap":{"from":1,"to":3,"why":"x"}}`, "unknown field"},
	} {
		_, err := NewReader(strings.NewReader(c.line)).Next()
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: error %v, want one naming line 1 and saying %q", c.line, err, c.msg)
		}
	}
	for _, it := range []*Item{
		{Kind: KindRecord, Topic: "a", Offset: 3, Gap: &Gap{From: 1, To: 3}},
		{Kind: KindPosition, Topic: "a", Offset: 3, Gap: &Gap{From: 1, To: 2}},
	} {
		if _, err := AppendItem(nil, it); !errors.Is(err, ErrUnwritable) {
			t.Errorf("%+v: write error %v, want ErrUnwritable", it, err)
		}
	}
}
