package parsley

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/testutil"
)

// vectorsPath is the shared ordering-state vectors: ../shared beside the
// checkout.
func vectorsPath(tb testing.TB) string {
	return testutil.Shared(tb, "vectors", "ordering-state.txt")
}

type vector struct {
	line                  int
	kind, label, expected string
	raw                   []byte
}

func readVectors(t *testing.T) []vector {
	t.Helper()
	path := vectorsPath(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 {
			t.Fatalf("%s:%d: want KIND LABEL HEX EXPECTED", path, n)
		}
		raw, err := hex.DecodeString(fields[2])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		vs = append(vs, vector{n, fields[0], fields[1], fields[3], raw})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// describe writes a held record in the vectors' EXPECTED form.
func describe(r *HeldRecord) string {
	b := func(x []byte) string {
		if x == nil {
			return "null"
		}
		return hex.EncodeToString(x)
	}
	hs := "-"
	if len(r.Headers) > 0 {
		parts := make([]string, len(r.Headers))
		for i, h := range r.Headers {
			parts[i] = h.Key + ":" + b(h.Value)
		}
		hs = strings.Join(parts, ";")
	}
	cs := "{}"
	if len(r.Causes) > 0 {
		parts := make([]string, len(r.Causes))
		for i, e := range r.Causes {
			parts[i] = fmt.Sprintf("%s=%d", e.Channel, e.Position)
		}
		cs = strings.Join(parts, ",")
	}
	return fmt.Sprintf("ts=%d key=%s value=%s headers=%s causes=%s", r.Timestamp, b(r.Key), b(r.Value), hs, cs)
}

func describeKey(k Key) string {
	s := "tag=" + string(rune(k.Tag))
	switch k.Tag {
	case TagFedUpTo, TagFrontier, TagDeliveredPast:
		s += " channel=" + k.Channel.String()
	case TagHeld:
		s += fmt.Sprintf(" channel=%s position=%d", k.Channel, k.Position)
	case TagName:
		s += " name=" + k.Name
	}
	return s
}

func TestVectors(t *testing.T) {
	vs := readVectors(t)
	kinds := map[string]int{}
	for _, v := range vs {
		kinds[v.kind]++
		t.Run(v.kind+"/"+v.label, func(t *testing.T) {
			switch v.kind {
			case "blob":
				rec, err := ParseHeldRecord(v.raw)
				if err != nil {
					t.Fatalf("line %d: %v", v.line, err)
				}
				if got := describe(&rec); got != v.expected {
					t.Errorf("line %d:\n got %s\nwant %s", v.line, got, v.expected)
				}
				if back := AppendHeldRecord(nil, &rec); !bytes.Equal(back, v.raw) {
					t.Errorf("line %d: re-encoded\n got %x\nwant %x", v.line, back, v.raw)
				}
			case "corrupt":
				rec, err := ParseHeldRecord(v.raw)
				if err == nil {
					t.Fatalf("line %d: accepted as %s; want refused: %s", v.line, describe(&rec), v.expected)
				}
				t.Logf("%s: %v", v.expected, err)
			case "key":
				k, err := ParseKey(v.raw)
				if err != nil {
					t.Fatalf("line %d: %v", v.line, err)
				}
				if got := describeKey(k); got != v.expected {
					t.Errorf("line %d: got %s, want %s", v.line, got, v.expected)
				}
				if back := AppendKey(nil, k); !bytes.Equal(back, v.raw) {
					t.Errorf("line %d: re-encoded %x, want %x", v.line, back, v.raw)
				}
			default:
				t.Fatalf("line %d: unknown kind %q", v.line, v.kind)
			}
		})
	}
	if kinds["blob"] < 4 || kinds["corrupt"] < 10 || kinds["key"] < 6 {
		t.Errorf("vectors by kind %v: the file lost some", kinds)
	}
}

// The corrupt vectors must be refused for the reason they name, not for an
// earlier accident of the reader.
func TestCorruptReasons(t *testing.T) {
	want := map[string]string{
		"version-2":                "unknown held-record version 2",
		"trailing-byte":            "1 bytes after the last cause",
		"cut-in-cause":             "cause count 1 beyond",
		"key-length-minus-2":       "negative key length -2",
		"key-length-past-end":      "key length 1000 runs past the end",
		"header-value-length-1000": "header 0: header value length 1000 runs past the end",
		"header-count-huge":        "header count 2147483647 beyond",
		"cause-count-2-of-1":       "cause count 2 beyond",
		"cause-negative-position":  "cause 0: negative position -5",
		"cause-max-position":       "cause 0: reserved position",
		"cause-negative-partition": "cause 0: negative partition -1",
	}
	seen := 0
	for _, v := range readVectors(t) {
		if v.kind != "corrupt" {
			continue
		}
		seen++
		_, err := ParseHeldRecord(v.raw)
		w, ok := want[v.label]
		if !ok {
			t.Errorf("corrupt vector %s has no expected reason here", v.label)
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), w) {
			t.Errorf("%s: got %v, want %q…", v.label, err, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d corrupt vectors, want %d", seen, len(want))
	}
}

func TestParseKeyRefuses(t *testing.T) {
	id := clock.TopicID{1, 2, 3}
	ch := clock.Channel{Topic: id, Partition: 2}
	good := AppendKey(nil, Key{Tag: TagHeld, Channel: ch, Position: 41})
	cases := map[string][]byte{
		"empty":              {},
		"unknown tag":        {'x'},
		"version with bytes": {'v', 1},
		"short channel":      AppendKey(nil, Key{Tag: TagFedUpTo, Channel: ch})[:20],
		"long held":          append(bytes.Clone(good), 0),
		"zero topic":         AppendKey(nil, Key{Tag: TagFrontier}),
		"negative partition": AppendKey(nil, Key{Tag: TagFrontier, Channel: clock.Channel{Topic: id, Partition: -1}}),
		"negative position":  AppendKey(nil, Key{Tag: TagHeld, Channel: ch, Position: -1}),
		"reserved position":  AppendKey(nil, Key{Tag: TagHeld, Channel: ch, Position: DeletedPosition}),
		"empty name":         {'n'},
		"name not UTF-8":     {'n', 0xff},
	}
	for name, b := range cases {
		if k, err := ParseKey(b); err == nil {
			t.Errorf("%s (%x): accepted as %v", name, b, k)
		}
	}
	if _, err := ParseKey(good); err != nil {
		t.Errorf("a good held key refused: %v", err)
	}
}

func TestAppOf(t *testing.T) {
	for topic, want := range map[string]string{
		"shop-shipper-__parsley.ordering-changelog": "shop-shipper",
		"notifier-__parsley.ordering-changelog":     "notifier",
		"-__parsley.ordering-changelog":             "",
		"orders":                                    "",
		"notifier-__parsley.ordering-changelog-x":   "",
	} {
		got, ok := AppOf(topic)
		if got != want || ok != (want != "") {
			t.Errorf("AppOf(%q) = %q, %v; want %q", topic, got, ok, want)
		}
		if ok && ChangelogTopic(got) != topic {
			t.Errorf("ChangelogTopic(%q) = %q", got, ChangelogTopic(got))
		}
	}
}
