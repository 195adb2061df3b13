package capture

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestStoppedLine: the stopped line reads back as written, ends the items
// (io.EOF, under every reading mode), and nothing may follow it.
func TestStoppedLine(t *testing.T) {
	a := mustID(t, idA)
	want := &Stopped{Reason: "interrupted\x1b[2J", Records: 3, Channels: []StoppedChannel{
		{Topic: "orders", TopicID: a, Partition: 0, Reached: 42, End: 60},
		{TopicID: a, Partition: 1, Reached: -1, End: 7},
		{Topic: "orders", Partition: 2, Reached: 5, End: -1},
	}}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(&Item{Kind: KindPosition, Topic: "orders", TopicID: a, Offset: 40}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStopped(want); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	for _, opts := range [][]ReaderOption{nil, {ChannelsOnly()}, {SkipPayloads()}} {
		rd := NewReader(bytes.NewReader(buf.Bytes()), opts...)
		if it, err := rd.Next(); err != nil || it.Kind != KindPosition {
			t.Fatalf("first item %+v, %v", it, err)
		}
		if rd.Stopped() != nil {
			t.Error("stopped before the stopped line")
		}
		if _, err := rd.Next(); err != io.EOF {
			t.Fatalf("at the stopped line: %v, want io.EOF", err)
		}
		got := rd.Stopped()
		if got == nil || got.Line != 2 {
			t.Fatalf("stopped %+v, want line 2", got)
		}
		got.Line = 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back\n%+v\nwant\n%+v", got, want)
		}
	}
	if s := want.Channels[0].String() + "; " + want.Channels[1].String(); s != "orders/0 at 42 of 60; "+idA+"/1 before its first offset of 7" {
		t.Errorf("channel text %q", s)
	}

	for _, c := range []struct{ name, text, msg string }{
		{"line after it", buf.String() + `{"topic":"orders","partition":0,"position":60}` + "\n", `line 3: a line after the stopped line (line 2)`},
		{"beside a channel", `{"topic":"orders","partition":0,"stopped":{"reason":"x"}}` + "\n", `line 1: "stopped" beside other fields`},
		{"no reason", `{"stopped":{"records":1}}` + "\n", `line 1: field "stopped": missing "reason"`},
		{"reason twice", `{"stopped":{"reason":"a","reason":"b"}}` + "\n", `duplicate field "reason"`},
		{"channel without partition", `{"stopped":{"reason":"a","channels":[{"topic":"o"}]}}` + "\n", `channels[0]: missing "partition"`},
		{"channel without topic", `{"stopped":{"reason":"a","channels":[{"partition":0}]}}` + "\n", `channels[0]: missing "topic" or "topic_id"`},
		{"hostile topic", `{"stopped":{"reason":"a","channels":[{"topic":"o\u001b[2J","partition":0}]}}` + "\n", `channels[0]:`},
		{"negative records", `{"stopped":{"reason":"a","records":-1}}` + "\n", `out of range`},
	} {
		rd := NewReader(strings.NewReader(c.text))
		var err error
		for err == nil {
			_, err = rd.Next()
		}
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a line error with %q", c.name, err, c.msg)
		}
	}
}
