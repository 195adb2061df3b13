package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

func writeItems(t *testing.T, items ...Item) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range items {
		if err := w.Write(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriterCanonical(t *testing.T) {
	a := mustID(t, strings.ToUpper(idA))
	tests := []struct {
		name string
		item Item
		want string
	}{
		{
			name: "full record, as in SPEC §4",
			item: Item{Kind: KindRecord, Line: 99, Topic: "orders", TopicID: a, Partition: 0, Offset: 41,
				Timestamp: 1764450000123, HasTimestamp: true,
				Headers: []clock.Header{{Key: "parsley.causes", Value: []byte{1, 1, 0, 0}}}, Value: []byte("hello")},
			want: `{"topic":"orders","topic_id":"` + idA + `","partition":0,"offset":41,"timestamp":1764450000123,` +
				`"headers":[{"key":"parsley.causes","value":"AQEAAA=="}],"key":null,"value":"aGVsbG8="}` + "\n",
		},
		{
			name: "position",
			item: Item{Kind: KindPosition, Topic: "orders", TopicID: a, Partition: 3, Offset: 57},
			want: `{"topic":"orders","topic_id":"` + idA + `","partition":3,"position":57}` + "\n",
		},
		{
			name: "bare record: headers always a list, key and value null",
			item: Item{Kind: KindRecord, Topic: "a", Partition: 1, Offset: 2},
			want: `{"topic":"a","partition":1,"offset":2,"headers":[],"key":null,"value":null}` + "\n",
		},
		{
			name: "topic UUID alone; empty versus null values; duplicate headers",
			item: Item{
				Kind: KindRecord, TopicID: a, Offset: 9223372036854775807, Timestamp: -1, HasTimestamp: true,
				Headers: []clock.Header{{Key: "h"}, {Key: "h", Value: []byte{}}, {Key: "", Value: []byte{0xfb, 0xff}}},
				Key:     []byte{}, Value: []byte{0},
			},
			want: `{"topic_id":"` + idA + `","partition":0,"offset":9223372036854775807,"timestamp":-1,` +
				`"headers":[{"key":"h","value":null},{"key":"h","value":""},{"key":"","value":"+/8="}],"key":"","value":"AA=="}` + "\n",
		},
		{
			name: "no HTML escaping; JSON escapes where needed",
			item: Item{Kind: KindRecord, Topic: "a", Headers: []clock.Header{
				{Key: "<a href=\"x\">&amp;</a>"},
				{Key: "\\ \x00\x01\x1f\b\f\n\r\t\x7f é 😀 \u2028\u2029"},
			}},
			want: `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"<a href=\"x\">&amp;</a>","value":null},` +
				`{"key":"\\ \u0000\u0001\u001f\b\f\n\r\t` + "\x7f é 😀 " + `\u2028\u2029","value":null}],"key":null,"value":null}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := writeItems(t, tt.item)
			if got != tt.want {
				t.Errorf("wrote\n%s\nwant\n%s", got, tt.want)
			}
			back, err := readItems([]byte(got))
			if err != nil || len(back) != 1 {
				t.Fatalf("reading it back: %d items, %v", len(back), err)
			}
			want := tt.item
			want.Line = 1
			if d := diffItems(back[0], want); d != "" {
				t.Errorf("read back: %s", d)
			}
		})
	}
}

// TestWriterStringsLikeEncodingJSON checks the string escaping against
// encoding/json without HTML escaping.
func TestWriterStringsLikeEncodingJSON(t *testing.T) {
	var all strings.Builder
	for c := rune(0); c < 0x80; c++ {
		all.WriteRune(c)
	}
	for _, s := range []string{"", "plain", all.String(), "é😀\u2028\u2029\ufffd\U0010ffff", `"\/`} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := string(appendJSONString(nil, s)) + "\n"
		if got != want.String() {
			t.Errorf("appendJSONString(%q) = %s, encoding/json gives %s", s, got, want.String())
		}
	}
}

func TestAppendTopicID(t *testing.T) {
	for _, s := range []string{idA, idB, "00000000-0000-0000-0000-000000000001", "ffffffff-ffff-ffff-ffff-ffffffffffff"} {
		id := mustID(t, strings.ToUpper(s))
		if got := string(appendTopicID(nil, id)); got != id.String() || got != s {
			t.Errorf("appendTopicID(%s) = %s", s, got)
		}
	}
}

func TestWriterRefuses(t *testing.T) {
	a := mustID(t, idA)
	tests := []struct {
		name string
		item Item
		want string
	}{
		{"no kind", Item{Topic: "a"}, "kind 0 is neither a record, a position nor log facts"},
		{"no channel", Item{Kind: KindRecord, Partition: 1}, "neither a topic name nor a topic UUID"},
		{"bad topic name", Item{Kind: KindRecord, Topic: "a b", TopicID: a}, `"a b" is not a Kafka topic name`},
		{"negative partition", Item{Kind: KindRecord, Topic: "a", Partition: -1}, "negative partition -1"},
		{"negative offset", Item{Kind: KindPosition, Topic: "a", Offset: -1}, "negative offset -1"},
		{"position with a value", Item{Kind: KindPosition, Topic: "a", Value: []byte{}}, "a position line with a timestamp, headers, key or value"},
		{"position with headers", Item{Kind: KindPosition, Topic: "a", Headers: []clock.Header{{Key: "k"}}}, "a position line with"},
		{"header key not UTF-8", Item{Kind: KindRecord, Topic: "a", Headers: []clock.Header{{Key: "ok"}, {Key: "\xff"}}}, `header 2: key "\xff" is not UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			err := w.Write(&tt.item)
			if !errors.Is(err, ErrUnwritable) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write() = %v, want ErrUnwritable: %s", err, tt.want)
			}
			if err := w.Flush(); err != nil || buf.Len() != 0 {
				t.Errorf("wrote %q (%v), want nothing", buf.Bytes(), err)
			}
			if b, err := AppendItem([]byte("x"), &tt.item); err == nil || string(b) != "x" {
				t.Errorf("AppendItem = %q, %v; want dst unchanged and an error", b, err)
			}
		})
	}
}

func TestWriterRoundTrip(t *testing.T) {
	items := benchItems(2000)
	a := mustID(t, idB)
	items = append(items,
		Item{Kind: KindPosition, Topic: "orders", TopicID: a, Partition: 7, Offset: 0},
		Item{Kind: KindPosition, TopicID: a, Offset: 12},
		Item{Kind: KindRecord, Topic: "x", Headers: []clock.Header{{Key: "k", Value: []byte{}}, {Key: "k"}}, Key: []byte{}, Value: nil},
	)
	for i := range items {
		items[i].Line = int64(i + 1)
	}
	roundTrip(t, items)
}
