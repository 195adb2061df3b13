package capture

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// cloneItem returns a deep copy of it, free of the Reader's buffers.
func cloneItem(it *Item) Item {
	c := *it
	if it.Headers != nil {
		c.Headers = make([]clock.Header, len(it.Headers))
		for i, h := range it.Headers {
			c.Headers[i] = clock.Header{Key: h.Key, Value: cloneBytes(h.Value)}
		}
	}
	c.Key, c.Value = cloneBytes(it.Key), cloneBytes(it.Value)
	return c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// diffItems describes how got differs from want, or returns "". Null and
// empty byte slices differ; a nil and an empty header list do not.
func diffItems(got, want Item) string {
	var d []string
	add := func(field string, g, w any) { d = append(d, fmt.Sprintf("%s = %v, want %v", field, g, w)) }
	if got.Kind != want.Kind {
		add("Kind", got.Kind, want.Kind)
	}
	if got.Line != want.Line {
		add("Line", got.Line, want.Line)
	}
	if got.Topic != want.Topic {
		add("Topic", got.Topic, want.Topic)
	}
	if got.TopicID != want.TopicID {
		add("TopicID", got.TopicID, want.TopicID)
	}
	if got.Partition != want.Partition {
		add("Partition", got.Partition, want.Partition)
	}
	if got.Offset != want.Offset {
		add("Offset", got.Offset, want.Offset)
	}
	if got.Timestamp != want.Timestamp || got.HasTimestamp != want.HasTimestamp {
		add("Timestamp", fmt.Sprint(got.Timestamp, got.HasTimestamp), fmt.Sprint(want.Timestamp, want.HasTimestamp))
	}
	if len(got.Headers) != len(want.Headers) {
		add("len(Headers)", len(got.Headers), len(want.Headers))
	} else {
		for i := range got.Headers {
			g, w := got.Headers[i], want.Headers[i]
			if g.Key != w.Key || !sameBytes(g.Value, w.Value) {
				add(fmt.Sprintf("Headers[%d]", i), showHeader(g), showHeader(w))
			}
		}
	}
	if !sameBytes(got.Key, want.Key) {
		add("Key", showBytes(got.Key), showBytes(want.Key))
	}
	if !sameBytes(got.Value, want.Value) {
		add("Value", showBytes(got.Value), showBytes(want.Value))
	}
	return strings.Join(d, "; ")
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func showBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%q", b)
}

func showHeader(h clock.Header) string { return fmt.Sprintf("{%q %s}", h.Key, showBytes(h.Value)) }

// readItems reads data to the end with a Reader, copying each item.
func readItems(data []byte, opts ...ReaderOption) ([]Item, error) {
	return readMode(data, false, opts...)
}

// fuzzSeeds are lines and files, good and bad, to start the fuzzer from.
// (Lines nested 10000 deep are left to TestReaderErrors: they make the
// fuzzer slow to minimise.)
var fuzzSeeds = []string{
	`{"topic":"orders","topic_id":"0f9a0102-0304-0506-0708-090a0b0c0d0e","partition":0,"offset":41,"timestamp":1764450000123,"headers":[{"key":"parsley.causes","value":"AQEAAA=="}],"key":null,"value":"aGVsbG8="}` + "\n",
	`{"topic":"orders","topic_id":"0F9A0102-0304-0506-0708-090A0B0C0D0E","partition":0,"position":57}`,
	"\n  \r\n\t\n{\"topic\":\"a\",\"partition\":1,\"offset\":2}\r\n",
	`{"topic":"a","partition":1,"offset":2,"headers":[{"key":"k","value":null},{"key":"k","value":""},{"key":"\u00e9\ud83d\ude00","value":"AA=="}]}`,
	`{"x":{"y":[1,2.5e-3,true,false,null,"\"\\\/\b\f\n\r\t\u0041"]},"topic":"a","partition":0,"offset":0,"z":[]}`,
	`{"topic_id":"507657da-51d1-4275-b55f-8d2934ee5907","partition":2,"offset":9,"key":"","value":null}`,
	`{"topic":"a","partition":0,"offset":0,"value":"aGVsbG8\u003d"}`,
	`{"topic":"a","partition":0,"offset":0,"value":"a\/8="}`,
	`{"topic":"a","partition":0,"offset":-0,"timestamp":-1}`,
	`{"topic":"a","partition":2147483647,"offset":9223372036854775807,"timestamp":-9223372036854775808}`,
	`{"topic":"a","partition":2147483648,"offset":0}`,
	`{"topic":"a","partition":0,"offset":9223372036854775808}`,
	`{"topic":"a","partition":0,"offset":1.5}`,
	`{"topic":"a","partition":0,"offset":1e3}`,
	`{"topic":"a","partition":0,"offset":"1"}`,
	`{"topic":"a","partition":0,"offset":-1}`,
	`{"topic":"a","partition":0,"offset":01}`,
	`{"topic":"a","partition":null,"offset":0}`,
	`{"topic":"a","partition":0,"offset":0,"offset":1}`,
	`{"topic":"a","partition":0,"offset":0,"position":1}`,
	`{"topic":"a","partition":0}`,
	`{"partition":0,"offset":0}`,
	`{"topic":null,"topic_id":null,"partition":0,"offset":0}`,
	`{"topic":"a/b","partition":0,"offset":0}`,
	`{"topic_id":"00000000-0000-0000-0000-000000000000","partition":0,"offset":0}`,
	`{"topic_id":"0f9a0102-0304-0506-0708-090a0b0c0d0","partition":0,"offset":0}`,
	`{"topic":"a","partition":0,"offset":0,"headers":{}}`,
	`{"topic":"a","partition":0,"offset":0,"headers":[{"value":"AA=="}]}`,
	`{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","key":"k"}]}`,
	`{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","value":"A==="}]}`,
	`{"topic":"a","partition":0,"offset":0,"headers":[5]}`,
	`{"topic":"a","partition":0,"offset":0,"key":"AB=="}`,
	`{"topic":"a","partition":0,"offset":0,"key":"AA\n=="}`,
	`{"topic":"a","partition":0,"position":0,"headers":[]}`,
	`{"topic":"a","partition":0,"position":0,"timestamp":null,"key":null}`,
	`{"topic":"a","partition":0,"offset":0,"u":1,"u":2}`,
	`{"topic":"a","partition":0,"offset":0,"s":"\ud800"}`,
	"{\"topic\":\"a\",\"partition\":0,\"offset\":0,\"s\":\"\xff\"}",
	"{\"topic\":\"a\",\"partition\":0,\"offset\":0,\"s\":\"\x01\"}",
	`{"topic":"a","partition":0,"offset":0}x`,
	`[1,2]`,
	`"just a string"`,
	`{"topic":"a","partition":0,"offset":0`,
	`{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","val`,
	`{"topic":"a","partition":0,"offset":0,"t":tru`,
	`{"topic":"a","partition":0,"offset":0,"x":[[[{"y":[[{}]]}]]]}`,
	"{\"topic\":\"a\",\"partition\":0,\"offset\":0}\n\n{\"topic_id\":\"507657da-51d1-4275-b55f-8d2934ee5907\",\"partition\":1,\"position\":3}\r\n{\"topic\":\"b\",\"partition\":0,\"offset\":\"x\"}\n",
}

// FuzzReader holds Reader to the reference reader: both must accept the
// same inputs, give the same items, and refuse the same first bad line.
// Accepted items must also survive a trip through the Writer unchanged,
// and the Writer's output must be a fixed point.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, max := range []int{DefaultMaxLineSize, 64} {
			want, wantLine, cause := refRead(data, max)
			got, err := readItems(data, MaxLineSize(max))
			var le *LineError
			switch {
			case err != nil && !errors.As(err, &le):
				t.Fatalf("max %d: error %v (%T) is not a *LineError", max, err, err)
			case err != nil && strings.ContainsAny(err.Error(), "\n\r"):
				t.Fatalf("max %d: error message spans lines: %q", max, err)
			case err == nil && wantLine != 0:
				t.Fatalf("max %d: Reader accepted all; reference refused line %d: %v", max, wantLine, cause)
			case err != nil && wantLine == 0:
				t.Fatalf("max %d: Reader refused: %v; reference accepted all", max, err)
			case err != nil && le.Line != wantLine:
				t.Fatalf("max %d: Reader refused line %d (%v); reference refused line %d (%v)", max, le.Line, err, wantLine, cause)
			case err != nil && !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d: ", le.Line)):
				t.Fatalf("max %d: message %q does not start with the line", max, err)
			}
			if len(got) != len(want) {
				t.Fatalf("max %d: Reader read %d items, reference %d", max, len(got), len(want))
			}
			for i := range got {
				if d := diffItems(got[i], want[i]); d != "" {
					t.Fatalf("max %d: item %d (line %d): %s", max, i, want[i].Line, d)
				}
			}
			if max == DefaultMaxLineSize {
				roundTrip(t, got)
				checkSkipping(t, data, got, err)
			}
		}
	})
}

// checkSkipping holds the skipping readers to the full one: SkipPayloads
// gives the same verdict and items less their payloads; on input the full
// reader accepts, ChannelsOnly gives the same kinds, channels and offsets.
func checkSkipping(t *testing.T, data []byte, full []Item, fullErr error) {
	t.Helper()
	got, err := readItems(data, SkipPayloads())
	if (err == nil) != (fullErr == nil) || (err != nil && err.Error() != fullErr.Error()) {
		t.Fatalf("SkipPayloads: %v; full reader: %v", err, fullErr)
	}
	if len(got) != len(full) {
		t.Fatalf("SkipPayloads read %d items, full reader %d", len(got), len(full))
	}
	for i := range got {
		want := full[i]
		want.Key, want.Value = nil, nil
		if d := diffItems(got[i], want); d != "" {
			t.Fatalf("SkipPayloads item %d: %s", i, d)
		}
	}
	if fullErr != nil {
		return
	}
	chans, err := readItems(data, ChannelsOnly())
	if err != nil || len(chans) != len(full) {
		t.Fatalf("ChannelsOnly: %d items, %v; full reader %d items", len(chans), err, len(full))
	}
	for i, c := range chans {
		f := full[i]
		if c.Kind != f.Kind || c.Topic != f.Topic || c.TopicID != f.TopicID || c.Partition != f.Partition || c.Offset != f.Offset || c.Line != f.Line {
			t.Fatalf("ChannelsOnly item %d: %+v, full reader %+v", i, c, f)
		}
	}
}

// roundTrip writes items, reads them back and compares, then checks that
// writing what was read gives the same bytes.
func roundTrip(t *testing.T, items []Item) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range items {
		if err := w.Write(&items[i]); err != nil {
			t.Fatalf("Write(item %d, line %d): %v", i, items[i].Line, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	back, err := readItems(buf.Bytes())
	if err != nil {
		t.Fatalf("reading the Writer's output: %v\n%s", err, buf.Bytes())
	}
	if len(back) != len(items) {
		t.Fatalf("wrote %d items, read back %d", len(items), len(back))
	}
	var again bytes.Buffer
	w2 := NewWriter(&again)
	for i := range back {
		want := items[i]
		want.Line = int64(i + 1)
		if d := diffItems(back[i], want); d != "" {
			t.Fatalf("item %d after a round trip: %s\n%s", i, d, buf.Bytes())
		}
		if err := w2.Write(&back[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w2.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatalf("writing twice differs:\n%s\n%s", buf.Bytes(), again.Bytes())
	}
}
