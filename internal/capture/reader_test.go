package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/testutil"
)

func mustID(t testing.TB, s string) clock.TopicID {
	t.Helper()
	id, err := clock.ParseTopicID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

const (
	idA = "0f9a0102-0304-0506-0708-090a0b0c0d0e"
	idB = "507657da-51d1-4275-b55f-8d2934ee5907"
)

func TestReaderAccepts(t *testing.T) {
	a, b := mustID(t, idA), mustID(t, idB)
	tests := []struct {
		name  string
		input string
		want  []Item
	}{
		{
			name: "SPEC example record",
			input: `{"topic":"orders","topic_id":"` + idA + `","partition":0,"offset":41,` +
				`"timestamp":1764450000123,"headers":[{"key":"parsley.causes","value":"AQEAAA=="}],"key":null,"value":"aGVsbG8="}` + "\n",
			want: []Item{{Kind: KindRecord, Line: 1, Topic: "orders", TopicID: a, Partition: 0, Offset: 41,
				Timestamp: 1764450000123, HasTimestamp: true,
				Headers: []clock.Header{{Key: "parsley.causes", Value: []byte{1, 1, 0, 0}}}, Value: []byte("hello")}},
		},
		{
			name:  "SPEC example position",
			input: `{"topic":"orders","topic_id":"` + idA + `","partition":0,"position":57}` + "\n",
			want:  []Item{{Kind: KindPosition, Line: 1, Topic: "orders", TopicID: a, Offset: 57}},
		},
		{
			name: "blank lines, whitespace-only lines and CRLF endings",
			input: "\n   \n\t\r\n" + `{"topic":"a","partition":1,"offset":2}` + "\r\n\r\n" +
				` {"topic":"a","partition":1,"position":3} ` + "\r\n \t \n",
			want: []Item{
				{Kind: KindRecord, Line: 4, Topic: "a", Partition: 1, Offset: 2},
				{Kind: KindPosition, Line: 6, Topic: "a", Partition: 1, Offset: 3},
			},
		},
		{
			name:  "last line without a newline",
			input: `{"topic":"a","partition":0,"offset":0}` + "\n" + `{"topic":"a","partition":0,"offset":1}`,
			want: []Item{
				{Kind: KindRecord, Line: 1, Topic: "a", Offset: 0},
				{Kind: KindRecord, Line: 2, Topic: "a", Offset: 1},
			},
		},
		{
			name:  "empty input",
			input: "",
		},
		{
			name:  "only blank lines, no final newline",
			input: "\n\n  ",
		},
		{
			name: "unknown fields of every kind, nested, anywhere",
			input: `{"meta":{"a":[1,-2.5e+3,true,false,null,{"b":{"c":[[],{}]}}],"s":"x\"}"},"topic":"a",` +
				`"n":-0.0E-0,"partition":0,"offset":7,"headers":[{"note":[{"key":"no"}],"key":"k","value":"AA==","x":null}],"z":[]}`,
			want: []Item{{Kind: KindRecord, Line: 1, Topic: "a", Offset: 7,
				Headers: []clock.Header{{Key: "k", Value: []byte{0}}}}},
		},
		{
			name:  "whitespace between every token",
			input: " { \"topic\" :\t\"a\" , \"partition\" : 3 , \"offset\" : 4 , \"headers\" : [ { \"key\" : \"k\" , \"value\" : null } , { \"value\" : \"\" , \"key\" : \"k\" } ] , \"key\" : \"AQI=\" } \n",
			want: []Item{{Kind: KindRecord, Line: 1, Topic: "a", Partition: 3, Offset: 4,
				Headers: []clock.Header{{Key: "k"}, {Key: "k", Value: []byte{}}}, Key: []byte{1, 2}}},
		},
		{
			name: "escapes in keys and base64",
			input: `{"\u0074opic":"\u0061","partition":0,"offset":0,"headers":[` +
				`{"key":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","value":"aGVsbG8\u003d"},` +
				`{"key":"lone \ud800 \udc00 \ud800\u0041","value":"\/w=="},` +
				`{"key":"raw é😀","value":"+/8="}]}`,
			want: []Item{{Kind: KindRecord, Line: 1, Topic: "a", Headers: []clock.Header{
				{Key: "\"\\/\b\f\n\r\t\u00e9\U0001F600", Value: []byte("hello")},
				{Key: "lone \uFFFD \uFFFD \uFFFDA", Value: []byte{0xff}},
				{Key: "raw é😀", Value: []byte{0xfb, 0xff}},
			}}},
		},
		{
			name: "topic or topic_id alone, any case; nulls are absent",
			input: `{"topic_id":"` + strings.ToUpper(idB) + `","partition":5,"offset":6,"timestamp":null,"headers":null,"key":null,"value":null}` + "\n" +
				`{"topic":"Orders.v2_x-y","topic_id":null,"partition":0,"position":0,"timestamp":null,"key":null}` + "\n" +
				`{"topic":null,"topic_id":"` + idB + `","partition":0,"offset":0}` + "\n",
			want: []Item{
				{Kind: KindRecord, Line: 1, TopicID: b, Partition: 5, Offset: 6},
				{Kind: KindPosition, Line: 2, Topic: "Orders.v2_x-y"},
				{Kind: KindRecord, Line: 3, TopicID: b},
			},
		},
		{
			name: "null versus empty values, duplicate headers kept in order",
			input: `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"h","value":null},{"key":"h","value":""},{"key":"h"},{"key":"","value":"AA=="}],"key":"","value":""}` + "\n" +
				`{"topic":"a","partition":0,"offset":1,"headers":[]}` + "\n",
			want: []Item{
				{Kind: KindRecord, Line: 1, Topic: "a", Headers: []clock.Header{
					{Key: "h"}, {Key: "h", Value: []byte{}}, {Key: "h"}, {Key: "", Value: []byte{0}},
				}, Key: []byte{}, Value: []byte{}},
				{Kind: KindRecord, Line: 2, Topic: "a", Offset: 1},
			},
		},
		{
			name: "number limits",
			input: `{"topic":"a","partition":2147483647,"offset":9223372036854775807,"timestamp":-9223372036854775808}` + "\n" +
				`{"topic":"a","partition":-0,"offset":-0,"timestamp":9223372036854775807}` + "\n" +
				`{"topic":"a","partition":0,"offset":0,"timestamp":-1}` + "\n",
			want: []Item{
				{Kind: KindRecord, Line: 1, Topic: "a", Partition: 2147483647, Offset: 9223372036854775807, Timestamp: -9223372036854775808, HasTimestamp: true},
				{Kind: KindRecord, Line: 2, Topic: "a", Timestamp: 9223372036854775807, HasTimestamp: true},
				{Kind: KindRecord, Line: 3, Topic: "a", Timestamp: -1, HasTimestamp: true},
			},
		},
		{
			name:  "nesting of 10000 levels",
			input: `{"topic":"a","partition":0,"offset":0,"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "}\n",
			want:  []Item{{Kind: KindRecord, Line: 1, Topic: "a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readItems([]byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			// The fuzz test's reference must agree, or it proves nothing.
			ref, line, cause := refRead([]byte(tt.input), DefaultMaxLineSize)
			if line != 0 || len(ref) != len(tt.want) {
				t.Fatalf("the reference read %d items and refused line %d: %v", len(ref), line, cause)
			}
			for i := range ref {
				if d := diffItems(ref[i], tt.want[i]); d != "" {
					t.Errorf("reference item %d: %s", i, d)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("read %d items, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if d := diffItems(got[i], tt.want[i]); d != "" {
					t.Errorf("item %d: %s", i, d)
				}
			}
			roundTrip(t, got)
		})
	}
}

func TestReaderErrors(t *testing.T) {
	const good = `{"topic":"a","partition":0,"offset":0}` + "\n"
	lines := func(n int) string { return strings.Repeat(good, n-1) }
	tests := []struct {
		name  string
		input string
		line  int64
		msg   string // the whole message when exact, else a part of it
		exact bool
		class error
	}{
		{"offset a string", lines(7) + `{"topic":"a","partition":0,"offset":"abc"}` + "\n", 7,
			`line 7: field "offset": want a non-negative integer, got "abc"`, true, ErrField},
		{"header value bad base64", lines(3) + `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"a","value":null},{"key":"b","value":"AAAA*AAA"}]}` + "\n", 3,
			`line 3: header 2 value: illegal base64 data at input byte 4`, true, ErrField},
		{"truncated last line", lines(9) + `{"topic":"a","partition":0,"off`, 9,
			`line 9: truncated JSON (missing newline at end of file?)`, true, ErrTruncated},
		{"truncated last line in a number", lines(2) + `{"topic":"a","partition":0,"offset":12`, 2,
			`line 2: truncated JSON (missing newline at end of file?)`, true, ErrTruncated},
		{"truncated last line in a literal", `{"topic":"a","partition":0,"offset":0,"x":nu`, 1,
			`truncated JSON (missing newline`, false, ErrTruncated},
		{"truncated last line in an escape", `{"topic":"a","partition":0,"offset":0,"x":"\u00`, 1,
			`truncated JSON (missing newline`, false, ErrTruncated},
		{"truncated line with a newline", `{"topic":"a","partition":0,` + "\n" + `"offset":0}` + "\n", 1,
			`line 1: truncated JSON: the line ends inside the object`, true, ErrTruncated},
		{"not an object", lines(12) + `[1,2,3]` + "\n", 12, `line 12: not a JSON object`, true, ErrSyntax},
		{"not JSON", `hello` + "\n", 1, `line 1: not a JSON object`, true, ErrSyntax},
		{"a string", `"{}"` + "\n", 1, `line 1: not a JSON object`, true, ErrSyntax},
		{"garbage after the object", `{"topic":"a","partition":0,"offset":0} {}` + "\n", 1,
			`line 1: invalid JSON at column 40: unexpected '{', want the end of the line after the object`, true, ErrSyntax},
		{"missing comma", `{"topic":"a" "partition":0,"offset":0}` + "\n", 1,
			`line 1: invalid JSON at column 14: unexpected '"', want ',' or '}'`, true, ErrSyntax},
		{"trailing comma", `{"topic":"a","partition":0,"offset":0,}` + "\n", 1, `want a field name`, false, ErrSyntax},
		{"single quotes", `{'topic':"a"}` + "\n", 1, `unexpected '\''`, false, ErrSyntax},
		{"bad literal", `{"topic":"a","partition":0,"offset":0,"x":nul}` + "\n", 1, `want "null"`, false, ErrSyntax},
		{"leading zero", `{"topic":"a","partition":0,"offset":01}` + "\n", 1, `unexpected '1'`, false, ErrSyntax},
		{"bare minus", `{"topic":"a","partition":0,"offset":-}` + "\n", 1, `want a digit`, false, ErrSyntax},
		{"bad fraction", `{"topic":"a","partition":0,"offset":1.}` + "\n", 1, `want a digit`, false, ErrSyntax},
		{"bad escape", `{"topic":"a\x","partition":0,"offset":0}` + "\n", 1, `want an escape`, false, ErrSyntax},
		{"bad unicode escape", `{"topic":"\u00g1","partition":0,"offset":0}` + "\n", 1, `want a hex digit`, false, ErrSyntax},
		{"control character in a string", "{\"topic\":\"a\tb\",\"partition\":0,\"offset\":0}\n", 1,
			`line 1: invalid JSON at column 12: control character 0x09 in a string (it must be escaped)`, true, ErrSyntax},
		{"invalid UTF-8 in a string", "{\"topic\":\"a\",\"partition\":0,\"offset\":0,\"x\":\"\xc3\x28\"}\n", 1,
			`line 1: invalid UTF-8 in a string at column 44`, true, ErrSyntax},
		{"invalid UTF-8 in a field name", "{\"\xff\":1,\"topic\":\"a\",\"partition\":0,\"offset\":0}\n", 1,
			`invalid UTF-8 in a string at column 3`, false, ErrSyntax},
		{"invalid UTF-8 outside strings", "{\"topic\":\"a\",\"partition\":0,\"offset\":0}\xff\n", 1,
			`unexpected byte 0xff`, false, ErrSyntax},
		{"nesting of 10001 levels", `{"topic":"a","partition":0,"offset":0,"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}\n", 1,
			`nesting deeper than 10000 levels`, false, ErrSyntax},
		{"fractional offset", `{"topic":"a","partition":0,"offset":1.5}` + "\n", 1,
			`line 1: field "offset": want a non-negative integer, got 1.5`, true, ErrField},
		{"exponent offset", `{"topic":"a","partition":0,"offset":1e3}` + "\n", 1,
			`line 1: field "offset": want a non-negative integer, got 1e3`, true, ErrField},
		{"negative offset", `{"topic":"a","partition":0,"offset":-1}` + "\n", 1,
			`line 1: field "offset": want a non-negative integer, got -1`, true, ErrField},
		{"offset overflow", `{"topic":"a","partition":0,"offset":9223372036854775808}` + "\n", 1,
			`line 1: field "offset": want a non-negative integer, got 9223372036854775808 (out of range)`, true, ErrField},
		{"offset far overflow", `{"topic":"a","partition":0,"offset":123456789012345678901234567890123456789012345678901234567890}` + "\n", 1,
			`got 1234567890123456789012345678901234567... (out of range)`, false, ErrField},
		{"null offset", `{"topic":"a","partition":0,"offset":null}` + "\n", 1,
			`line 1: field "offset": want a non-negative integer, got null`, true, ErrField},
		{"null position", `{"topic":"a","partition":0,"position":null}` + "\n", 1,
			`line 1: field "position": want a non-negative integer, got null`, true, ErrField},
		{"partition overflow", `{"topic":"a","partition":2147483648,"offset":0}` + "\n", 1,
			`line 1: field "partition": want a non-negative 32-bit integer, got 2147483648 (out of range)`, true, ErrField},
		{"negative partition", `{"topic":"a","partition":-3,"offset":0}` + "\n", 1,
			`field "partition": want a non-negative 32-bit integer, got -3`, false, ErrField},
		{"null partition", `{"topic":"a","partition":null,"offset":0}` + "\n", 1,
			`field "partition": want a non-negative 32-bit integer, got null`, false, ErrField},
		{"partition an object", `{"topic":"a","partition":{"p":[1,2]},"offset":0}` + "\n", 1,
			`field "partition": want a non-negative 32-bit integer, got {"p":[1,2]}`, false, ErrField},
		{"string timestamp", `{"topic":"a","partition":0,"offset":0,"timestamp":"2025-01-01"}` + "\n", 1,
			`field "timestamp": want an integer (milliseconds since the epoch), got "2025-01-01"`, false, ErrField},
		{"timestamp overflow", `{"topic":"a","partition":0,"offset":0,"timestamp":-9223372036854775809}` + "\n", 1,
			`(out of range)`, false, ErrField},
		{"topic a number", `{"topic":5,"partition":0,"offset":0}` + "\n", 1,
			`line 1: field "topic": want a string, got 5`, true, ErrField},
		{"topic with a slash", `{"topic":"a/b","partition":0,"offset":0}` + "\n", 1,
			`field "topic": "a/b" is not a Kafka topic name`, false, ErrField},
		{"empty topic", `{"topic":"","partition":0,"offset":0}` + "\n", 1,
			`field "topic": "" is not a Kafka topic name`, false, ErrField},
		{"topic ..", `{"topic":"..","partition":0,"offset":0}` + "\n", 1,
			`field "topic": ".." is not a Kafka topic name`, false, ErrField},
		{"topic of 250 bytes", `{"topic":"` + strings.Repeat("t", 250) + `","partition":0,"offset":0}` + "\n", 1,
			`is not a Kafka topic name`, false, ErrField},
		{"bad topic_id", `{"topic_id":"not-a-uuid","partition":0,"offset":0}` + "\n", 1,
			`line 1: field "topic_id": topic UUID "not-a-uuid": want 8-4-4-4-12 hex digits`, true, ErrField},
		{"non-hex topic_id", `{"topic_id":"0f9a0102-0304-0506-0708-090a0b0c0dzz","partition":0,"offset":0}` + "\n", 1,
			`not hexadecimal`, false, ErrField},
		{"zero topic_id", `{"topic_id":"00000000-0000-0000-0000-000000000000","partition":0,"offset":0}` + "\n", 1,
			`the zero UUID names no topic`, false, ErrField},
		{"duplicate known field", `{"topic":"a","partition":0,"offset":0,"offset":1}` + "\n", 1,
			`line 1: duplicate field "offset"`, true, ErrField},
		{"duplicate known field, escaped", `{"topic":"a","partition":0,"offset":0,"\u006fffset":1}` + "\n", 1,
			`line 1: duplicate field "offset"`, true, ErrField},
		{"duplicate null field", `{"topic":"a","topic":null,"partition":0,"offset":0}` + "\n", 1,
			`duplicate field "topic"`, false, ErrField},
		{"duplicate unknown field", `{"x":1,"topic":"a","partition":0,"offset":0,"x":[2]}` + "\n", 1,
			`line 1: duplicate field "x"`, true, ErrField},
		{"duplicate unknown field among many", `{` + manyFields(40) + `,"f7":0,"topic":"a","partition":0,"offset":0}` + "\n", 1,
			`line 1: duplicate field "f7"`, true, ErrField},
		{"offset and position", `{"topic":"a","partition":0,"offset":0,"position":1}` + "\n", 1,
			`both "offset" and "position"`, false, ErrField},
		{"neither offset nor position", `{"topic":"a","partition":0}` + "\n", 1,
			`line 1: missing "offset" (a record) or "position" (a position line)`, true, ErrField},
		{"missing partition", `{"topic":"a","offset":0}` + "\n", 1, `line 1: missing "partition"`, true, ErrField},
		{"missing topic and topic_id", `{"partition":0,"offset":0}` + "\n", 1,
			`line 1: missing "topic" or "topic_id": one of them is required`, true, ErrField},
		{"null topic and topic_id", `{"topic":null,"topic_id":null,"partition":0,"offset":0}` + "\n", 1,
			`missing "topic" or "topic_id"`, false, ErrField},
		{"empty object", `{}` + "\n", 1, `missing "offset"`, false, ErrField},
		{"position with headers", `{"topic":"a","partition":0,"position":0,"headers":[]}` + "\n", 1,
			`line 1: field "headers" is not allowed on a position line`, true, ErrField},
		{"position with timestamp", `{"topic":"a","partition":0,"position":0,"timestamp":5}` + "\n", 1,
			`field "timestamp" is not allowed on a position line`, false, ErrField},
		{"headers an object", `{"topic":"a","partition":0,"offset":0,"headers":{"key":"k"}}` + "\n", 1,
			`line 1: field "headers": want a list of headers, got {"key":"k"}`, true, ErrField},
		{"header a string", `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k"},"k=v"]}` + "\n", 1,
			`line 1: header 2: want an object, got "k=v"`, true, ErrField},
		{"header without key", `{"topic":"a","partition":0,"offset":0,"headers":[{"value":"AA=="}]}` + "\n", 1,
			`line 1: header 1: missing "key"`, true, ErrField},
		{"header key null", `{"topic":"a","partition":0,"offset":0,"headers":[{"key":null}]}` + "\n", 1,
			`line 1: header 1 key: want a string, got null`, true, ErrField},
		{"header value a number", `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","value":7}]}` + "\n", 1,
			`line 1: header 1 value: want a base64 string or null, got 7`, true, ErrField},
		{"header duplicate key", `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","key":"j"}]}` + "\n", 1,
			`line 1: header 1: duplicate field "key"`, true, ErrField},
		{"header duplicate unknown", `{"topic":"a","partition":0,"offset":0,"headers":[{"u":1,"key":"k","u":2}]}` + "\n", 1,
			`line 1: header 1: duplicate field "u"`, true, ErrField},
		{"header list not closed", `{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k"}}` + "\n", 1,
			`want ',' or ']'`, false, ErrSyntax},
		{"key bad base64", `{"topic":"a","partition":0,"offset":0,"key":"a"}` + "\n", 1,
			`line 1: field "key": illegal base64 data at input byte 0`, true, ErrField},
		{"value non-canonical padding bits", `{"topic":"a","partition":0,"offset":0,"value":"AB=="}` + "\n", 1,
			`field "value": illegal base64 data`, false, ErrField},
		{"value unpadded", `{"topic":"a","partition":0,"offset":0,"value":"AA"}` + "\n", 1,
			`field "value": illegal base64 data`, false, ErrField},
		{"value URL alphabet", `{"topic":"a","partition":0,"offset":0,"value":"-_8="}` + "\n", 1,
			`field "value": illegal base64 data at input byte 0`, false, ErrField},
		{"value with an escaped newline", `{"topic":"a","partition":0,"offset":0,"value":"AA\n=="}` + "\n", 1,
			`line 1: field "value": illegal base64 data at input byte 2`, true, ErrField},
		{"value with a raw CR", "{\"topic\":\"a\",\"partition\":0,\"offset\":0,\"value\":\"AA\r==\"}\n", 1,
			`control character 0x0d in a string`, false, ErrSyntax},
		{"value a list", `{"topic":"a","partition":0,"offset":0,"value":[1]}` + "\n", 1,
			`field "value": want a base64 string or null, got [1]`, false, ErrField},
		{"line too long", good + `{"topic":"a","partition":0,"offset":0,"x":"` + strings.Repeat("x", 100) + `"}` + "\n", 2,
			`line 2: line is longer than the limit of 100 bytes`, true, ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := DefaultMaxLineSize
			if strings.Contains(tt.name, "too long") {
				max = 100
			}
			// The fuzz test's reference must agree, or it proves nothing.
			if _, line, cause := refRead([]byte(tt.input), max); line != tt.line {
				t.Errorf("the reference refused line %d (%v), want %d", line, cause, tt.line)
			}
			r := NewReader(strings.NewReader(tt.input), MaxLineSize(max))
			var err error
			n := 0
			for err == nil {
				_, err = r.Next()
				n++
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Next() = %v after %d items, want a *LineError", err, n-1)
			}
			if le.Line != tt.line || int64(n) != tt.line {
				t.Errorf("error on line %d after %d items, want line %d: %v", le.Line, n-1, tt.line, err)
			}
			if msg := err.Error(); tt.exact && msg != tt.msg || !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q,\nwant %q", msg, tt.msg)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error %q spans lines", err)
			}
			if !errors.Is(err, tt.class) {
				t.Errorf("error %q is not %v", err, tt.class)
			}
			// The error sticks.
			if _, again := r.Next(); again != err {
				t.Errorf("Next after the error = %v, want the same error", again)
			}
		})
	}
}

func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"f`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":[{"k":1}]`)
	}
	return b.String()
}

// TestReaderTruncated cuts good lines at every byte: each cut is a
// truncation, at the end of the file or before a newline.
func TestReaderTruncated(t *testing.T) {
	for _, full := range []string{
		` { "topic" : "a" , "partition" : 0 , "offset" : 12 , "timestamp" : -5 }`,
		`{"topic":"a","partition":0,"offset":0,"x":[1.5e-3,-0,true,false,null,{"k":"é😀\u00e9\ud83d\ude00\n"}],` +
			`"headers":[{"key":"k","value":"AQI="},{"key":"é","value":null}],"key":"","value":"\/w=="}`,
		`{"topic_id":"` + idA + `","partition":0,"position":7}`,
	} {
		if _, err := readItems([]byte(full)); err != nil {
			t.Fatalf("the whole line: %v", err)
		}
		for n := 1; n < len(full); n++ {
			cut := full[:n]
			if strings.TrimSpace(cut) == "" {
				continue
			}
			_, err := readItems([]byte(cut))
			if !errors.Is(err, ErrTruncated) || err.Error() != "line 1: truncated JSON (missing newline at end of file?)" {
				t.Errorf("%q at the end of the file: %v", cut, err)
			}
			_, err = readItems([]byte(cut + "\n" + full + "\n"))
			if !errors.Is(err, ErrTruncated) || err.Error() != "line 1: truncated JSON: the line ends inside the object" {
				t.Errorf("%q before a newline: %v", cut, err)
			}
			if _, line, _ := refRead([]byte(cut), DefaultMaxLineSize); line != 1 {
				t.Errorf("%q: the reference accepts it", cut)
			}
		}
	}
}

// TestReaderLineLimit checks the limit at its edge, for lines that fit the
// read buffer and lines that do not.
func TestReaderLineLimit(t *testing.T) {
	line := func(n int) string {
		const frame = `{"topic":"a","partition":0,"offset":0,"x":""}`
		return frame[:len(frame)-2] + strings.Repeat("x", n-len(frame)) + `"}`
	}
	for _, max := range []int{100, readBufferSize - 1, readBufferSize, readBufferSize + 1, 3*readBufferSize + 17} {
		for _, eol := range []string{"\n", "\r\n", ""} {
			exact := line(max - len(strings.TrimSuffix(eol, "\n")))
			if got := len(exact) + len(strings.TrimSuffix(eol, "\n")); got != max {
				t.Fatalf("test line has %d bytes, want %d", got, max)
			}
			if eol != "" {
				items, err := readItems([]byte(exact+eol+exact+eol), MaxLineSize(max))
				if err != nil || len(items) != 2 {
					t.Errorf("max %d eol %q: two lines of exactly the limit: %d items, %v", max, eol, len(items), err)
				}
			} else {
				// The last line, without a newline.
				items, err := readItems([]byte(exact+"\n"+exact), MaxLineSize(max))
				if err != nil || len(items) != 2 {
					t.Errorf("max %d: a last line of exactly the limit: %d items, %v", max, len(items), err)
				}
			}
			over := line(max + 1 - len(strings.TrimSuffix(eol, "\n")))
			_, err := readItems([]byte(exact+"\n"+over+eol+exact+"\n"), MaxLineSize(max))
			var le *LineError
			if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrLineTooLong) {
				t.Errorf("max %d eol %q: a line one byte over the limit: %v, want line 2 too long", max, eol, err)
			}
			_, err = readItems([]byte(exact+"\n"+line(max+1)), MaxLineSize(max))
			if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrLineTooLong) {
				t.Errorf("max %d: a last line one byte over the limit: %v, want line 2 too long", max, err)
			}
		}
	}
}

// endless is a reader of one line that never ends; it counts what it gives.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestReaderLineLimitStreams checks that a line over the limit is refused
// after reading about the limit, not the whole line: here the line never
// ends, so reading it would never return.
func TestReaderLineLimitStreams(t *testing.T) {
	for _, max := range []int{1000, 5 * readBufferSize} {
		src := &endless{}
		r := NewReader(io.MultiReader(strings.NewReader("\n\n"), src), MaxLineSize(max))
		_, err := r.Next()
		var le *LineError
		if !errors.As(err, &le) || le.Line != 3 || !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("max %d: Next() = %v, want line 3 too long", max, err)
		}
		if limit := int64(max + 2*readBufferSize); src.n > limit {
			t.Errorf("max %d: read %d bytes of the long line, want at most %d", max, src.n, limit)
		}
		if cap(r.long) > max {
			t.Errorf("max %d: held %d bytes of the line", max, cap(r.long))
		}
	}
}

// TestReaderDefaultLimit checks the 16 MiB default on one line just over
// it, produced as it is read.
func TestReaderDefaultLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 16 MiB")
	}
	head := `{"topic":"a","partition":0,"offset":0,"x":"`
	body := io.LimitReader(&endless{}, int64(DefaultMaxLineSize-len(head)-1))
	r := NewReader(io.MultiReader(strings.NewReader(head), body, strings.NewReader(`"}`+"\n")))
	_, err := r.Next()
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("a line of 16 MiB + 1 byte: %v, want too long", err)
	}
	if want := "line 1: line is longer than the limit of 16777216 bytes"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	body = io.LimitReader(&endless{}, int64(DefaultMaxLineSize-len(head)-2))
	r = NewReader(io.MultiReader(strings.NewReader(head), body, strings.NewReader(`"}`+"\n")))
	if _, err := r.Next(); err != nil {
		t.Fatalf("a line of exactly 16 MiB: %v", err)
	}
}

type failingReader struct{ data io.Reader }

var errDisk = errors.New("disk on fire")

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if err == io.EOF {
		return n, errDisk
	}
	return n, err
}

func TestReaderReadError(t *testing.T) {
	r := NewReader(&failingReader{strings.NewReader(`{"topic":"a","partition":0,"offset":0}` + "\n" + `{"topic":"a",`)})
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := r.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, errDisk) {
		t.Fatalf("Next() = %v, want line 2 wrapping the read error", err)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("the error does not stick: %v", again)
	}
}

func TestReaderEOFSticks(t *testing.T) {
	r := NewReader(strings.NewReader(`{"topic":"a","partition":0,"offset":0}`))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if it, err := r.Next(); it != nil || err != io.EOF {
			t.Fatalf("Next() = %v, %v; want nil, io.EOF", it, err)
		}
	}
}

// TestReaderReuse documents that an item is overwritten by the next call,
// and that strings stay valid.
func TestReaderReuse(t *testing.T) {
	r := NewReader(strings.NewReader(
		`{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","value":"AQ=="}],"value":"Ag=="}` + "\n" +
			`{"topic":"b","partition":0,"offset":1,"headers":[{"key":"j","value":"Aw=="}],"value":"BA=="}` + "\n"))
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	topic, key := first.Topic, first.Headers[0].Key
	second, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("Next returned a new *Item; the documentation says it is reused")
	}
	if topic != "a" || key != "k" {
		t.Errorf("strings changed: %q %q", topic, key)
	}
	if second.Topic != "b" || second.Value[0] != 4 || second.Headers[0].Value[0] != 3 {
		t.Errorf("second item wrong: %+v", second)
	}
}

// TestReaderInterns checks that a name seen before is not allocated again.
func TestReaderInterns(t *testing.T) {
	data := benchCapture(t, 1000)
	r := NewReader(bytes.NewReader(data))
	for range 10 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(500, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations per line in steady state, want 0", allocs)
	}
}

// conformanceDir holds the captures of a Parsley cluster run, in
// ../shared beside the checkout.
func conformanceDir(t testing.TB) string {
	return testutil.Shared(t, "conformance", "parsley-cluster")
}

func TestReaderConformanceCaptures(t *testing.T) {
	want := map[string]int{
		"cycler.t0": 56, "cycler.t1": 48, "cycler.t2": 46,
		"joiner.t0": 58, "joiner.t1": 55, "joiner.t2": 45,
		"selfer.t0": 84, "selfer.t1": 85, "selfer.t2": 87,
		"splitter.t0": 8, "splitter.t1": 7, "splitter.t2": 15,
	}
	dir := conformanceDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no captures in %s", dir)
	}
	if len(files) != len(want) {
		t.Errorf("found %d captures, want %d", len(files), len(want))
	}
	total := 0
	for _, f := range files {
		unit := strings.TrimSuffix(filepath.Base(f), ".ndjson")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		items, err := readItems(data)
		if err != nil {
			t.Errorf("%s: %v", unit, err)
			continue
		}
		if n, ok := want[unit]; !ok || len(items) != n {
			t.Errorf("%s: %d items, want %d", unit, len(items), n)
		}
		for i, it := range items {
			if it.Kind != KindRecord || it.Line != int64(i+1) || it.Topic == "" || it.TopicID.IsZero() {
				t.Errorf("%s line %d: unexpected item %+v", unit, i+1, it)
			}
			if _, _, err := clock.FromHeaders(it.Headers); err != nil {
				t.Errorf("%s line %d: clock: %v", unit, i+1, err)
			}
		}
		total += len(items)
		roundTrip(t, items)
	}
	if total != 594 {
		t.Errorf("%d records in all, want 594", total)
	}
}
