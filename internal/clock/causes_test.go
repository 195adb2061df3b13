package clock

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/testutil"
)

type vector struct {
	line     int
	kind     string // valid or reject
	label    string
	value    []byte
	expected string
}

func readVectors(tb testing.TB) []vector {
	tb.Helper()
	// The shared codec vectors, in ../shared beside the checkout.
	vectorsPath := testutil.Shared(tb, "vectors", "parsley-causes.txt")
	f, err := os.Open(vectorsPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 {
			tb.Fatalf("%s:%d: want KIND LABEL HEX EXPECTED, got %d fields", vectorsPath, n, len(fields))
		}
		value, err := hex.DecodeString(fields[2])
		if err != nil {
			tb.Fatalf("%s:%d: %v", vectorsPath, n, err)
		}
		vs = append(vs, vector{n, fields[0], fields[1], value, fields[3]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(vs) == 0 {
		tb.Fatalf("%s holds no vectors", vectorsPath)
	}
	return vs
}

// wireText renders entries the way the vector file does: wire order,
// UUID/partition=position joined by commas, {} when empty.
func wireText(es []Entry) string {
	if len(es) == 0 {
		return "{}"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = (*Names)(nil).Format(Clock{entries: []Entry{e}})
	}
	return strings.Join(parts, ",")
}

func TestVectors(t *testing.T) {
	for _, v := range readVectors(t) {
		t.Run(v.label, func(t *testing.T) {
			c, err := Decode(v.value)
			switch v.kind {
			case "valid":
				if err != nil {
					t.Fatalf("line %d: Decode: %v", v.line, err)
				}
				if got := wireText(c.Entries()); got != v.expected {
					t.Errorf("line %d: entries\n got %s\nwant %s", v.line, got, v.expected)
				}
				if got := Encode(c); !bytes.Equal(got, v.value) {
					t.Errorf("line %d: re-encoded\n got %x\nwant %x", v.line, got, v.value)
				}
			case "reject":
				if !slices.Contains(Codes(), Code(v.expected)) {
					t.Fatalf("line %d: vector expects unknown code %q", v.line, v.expected)
				}
				code, ok := CodeOf(err)
				if !ok {
					t.Fatalf("line %d: Decode accepted it as %v, want %s", v.line, c, v.expected)
				}
				if code != Code(v.expected) {
					t.Errorf("line %d: code %s (%v), want %s", v.line, code, err, v.expected)
				}
			default:
				t.Fatalf("line %d: unknown kind %q", v.line, v.kind)
			}
		})
	}
}

// hexv builds a value from hex pieces separated by spaces.
func hexv(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	topicA = "00000000000000010000000000000001"
	topicB = "00000000000000010000000000000002"
)

// TestDecodeRules covers each rejection rule and its reading order beyond the
// public vectors.
func TestDecodeRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		code  Code // "" = accepted
	}{
		{"zero-length", "", CodeTruncated},
		{"version only", "01", CodeTruncated},
		{"version zero", "0000", CodeUnknownVersion},
		{"count promises a group", "01 01", CodeTruncated},
		{"short topic id", "01 01 0000000000000001", CodeTruncated},
		{"no partition count", "01 01 " + topicA, CodeTruncated},
		{"count promises a pair", "01 01 " + topicA + " 01", CodeTruncated},
		{"short position", "01 01 " + topicA + " 01 00 00000000", CodeTruncated},
		{"huge counts, few bytes", "01 ffffffff07 " + topicA + " ffffffff07 00 0000000000000001", CodeTruncated},
		{"non-minimal count", "01 8000", CodeNonMinimalVarint},
		{"non-minimal 5 bytes", "01 8080808000", CodeNonMinimalVarint},
		{"max varint", "01 ffffffff07", CodeTruncated},
		{"overflow 5th byte 08", "01 ffffffff08", CodeVarintOverflow},
		{"overflow 6 bytes", "01 ffffffff8f01", CodeVarintOverflow},
		{"duplicate topics", "01 02 " + topicA + " 01 00 0000000000000001 " + topicA + " 01 00 0000000000000001", CodeTopicsNotAscending},
		{"duplicate partitions", "01 01 " + topicA + " 02 03 0000000000000001 03 0000000000000002", CodePartitionsNotAscending},
		{"descending partitions", "01 01 " + topicA + " 02 03 0000000000000001 02 0000000000000002", CodePartitionsNotAscending},
		{"zero partitions in 2nd group", "01 02 " + topicA + " 01 00 0000000000000001 " + topicB + " 00", CodeZeroPartitions},
		{"first rule wins: zero topic before order", "01 02 " + topicB + " 01 00 0000000000000001 00000000000000000000000000000000 01 00 0000000000000001", CodeZeroTopicID},
		{"first rule wins: negative before trailing", "01 01 " + topicA + " 01 00 8000000000000000 00", CodeNegativePosition},
		{"trailing after empty", "0100 00", CodeTrailingBytes},
		{"largest position", "01 01 " + topicA + " 01 00 7ffffffffffffffe", ""},
		{"two topics", "01 02 " + topicA + " 01 00 0000000000000001 " + topicB + " 02 00 0000000000000002 7f 0000000000000003", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := hexv(t, tc.value)
			c, err := Decode(v)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if got := Encode(c); !bytes.Equal(got, v) {
					t.Fatalf("re-encoded %x, want %x", got, v)
				}
				return
			}
			if code, _ := CodeOf(err); code != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
}

func TestDecodeNullAndBudget(t *testing.T) {
	if code, _ := CodeOf(func() error { _, err := Decode(nil); return err }()); code != CodeNullValue {
		t.Errorf("nil value: got %s, want %s", code, CodeNullValue)
	}
	big := make([]byte, DefaultMaxSize+1)
	big[0] = 0x02 // would be unknown-version, but the budget is checked first
	if _, err := Decode(big); !hasCode(err, CodeTooLarge) {
		t.Errorf("over the default budget: got %v", err)
	}
	v := hexv(t, "01 01 "+topicA+" 01 00 0000000000000001")
	if _, err := Decode(v, MaxSize(len(v)-1)); !hasCode(err, CodeTooLarge) {
		t.Errorf("over a set budget: got %v", err)
	}
	if _, err := Decode(v, MaxSize(len(v))); err != nil {
		t.Errorf("at the budget: %v", err)
	}
	var de *DecodeError
	_, err := Decode(hexv(t, "0200"))
	if !errors.As(err, &de) || de.Offset != 0 || !strings.Contains(de.Error(), "unknown-version") {
		t.Errorf("DecodeError fields: %#v", err)
	}
}

func hasCode(err error, want Code) bool {
	got, ok := CodeOf(err)
	return ok && got == want
}

// TestDecodeAllocationBound checks that counts claiming far more than the
// value holds cost nothing: the allocation is sized by the bytes present.
func TestDecodeAllocationBound(t *testing.T) {
	v := hexv(t, "01 ffffffff07 "+topicA+" ffffffff07 00 0000000000000001")
	// Only the error itself is allocated: a few hundred bytes at most.
	if n := bytesPerRun(func() { _, _ = Decode(v) }); n > 512 {
		t.Errorf("a refused value with huge counts allocated %d bytes", n)
	}
	good := hexv(t, "01 01 "+topicA+" 02 00 0000000000000001 01 0000000000000002")
	allocs := testing.AllocsPerRun(100, func() { _, _ = Decode(good) })
	if allocs != 1 {
		t.Errorf("a 2-entry clock took %v allocations, want 1", allocs)
	}
}

// bytesPerRun returns the heap bytes one call of fn allocates, on average.
func bytesPerRun(fn func()) uint64 {
	const runs = 1000
	fn()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

func TestLegacy(t *testing.T) {
	entry := func(topic string, part int32, off int64) string {
		var b bytes.Buffer
		b.WriteString(topic)
		b.WriteString(hex.EncodeToString([]byte{byte(part >> 24), byte(part >> 16), byte(part >> 8), byte(part)}))
		var o [8]byte
		for i := range o {
			o[i] = byte(off >> (56 - 8*i))
		}
		b.WriteString(hex.EncodeToString(o[:]))
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		value string
		code  Code
		want  string // wire-order text when accepted
	}{
		{"empty", "01 00000000", "", "{}"},
		{"unsorted kept in wire order", "01 00000002 " + entry(topicB, 0, 5) + entry(topicA, 3, 9), "",
			"00000000-0000-0001-0000-000000000002/0=5,00000000-0000-0001-0000-000000000001/3=9"},
		{"zero-length", "", CodeTruncated, ""},
		{"version 2", "02 00000000", CodeUnknownVersion, ""},
		{"short count", "01 0000", CodeTruncated, ""},
		{"negative count", "01 ffffffff", CodeNegativeCount, ""},
		{"too short for count", "01 00000001 " + topicA, CodeTruncated, ""},
		{"too long for count", "01 00000000 00", CodeTrailingBytes, ""},
		{"huge count", "01 7fffffff", CodeTruncated, ""},
		{"negative partition", "01 00000001 " + entry(topicA, -1, 5), CodeNegativePartition, ""},
		{"negative offset", "01 00000001 " + entry(topicA, 1, -5), CodeNegativePosition, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := hexv(t, tc.value)
			es, err := DecodeLegacy(v)
			if tc.code != "" {
				if !hasCode(err, tc.code) {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := wireText(es); got != tc.want {
				t.Errorf("entries %s, want %s", got, tc.want)
			}
			if got := EncodeLegacy(es); !bytes.Equal(got, v) {
				t.Errorf("re-encoded %x, want %x", got, v)
			}
		})
	}
	if _, err := DecodeLegacy(nil); !hasCode(err, CodeNullValue) {
		t.Errorf("nil: %v", err)
	}
	// Duplicate channels fold to their maximum in the clock.
	c := FromLegacy([]Entry{{Channel{mustID(t, topicA), 1}, 4}, {Channel{mustID(t, topicA), 1}, 9}})
	if p, _ := c.Get(Channel{mustID(t, topicA), 1}); c.Len() != 1 || p != 9 {
		t.Errorf("FromLegacy folded to %v", c)
	}
}

func mustID(t testing.TB, h string) TopicID {
	t.Helper()
	var id TopicID
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestFromHeaders(t *testing.T) {
	good := hexv(t, "01 01 "+topicA+" 01 02 0000000000000007")
	legacy := EncodeLegacy([]Entry{{Channel{mustID(t, topicB), 1}, 3}})
	for _, tc := range []struct {
		name    string
		headers []Header
		key     string
		code    Code
		want    string
	}{
		{"absent is empty", []Header{{Key: "other", Value: []byte("x")}}, "", "", "{}"},
		{"no headers", nil, "", "", "{}"},
		{"causes", []Header{{Key: "trace", Value: nil}, {Key: HeaderCauses, Value: good}}, HeaderCauses, "", "00000000-0000-0001-0000-000000000001/2=7"},
		{"duplicate", []Header{{Key: HeaderCauses, Value: good}, {Key: HeaderCauses, Value: good}}, HeaderCauses, CodeDuplicateHeader, ""},
		{"null", []Header{{Key: HeaderCauses, Value: nil}}, HeaderCauses, CodeNullValue, ""},
		{"zero-length", []Header{{Key: HeaderCauses, Value: []byte{}}}, HeaderCauses, CodeTruncated, ""},
		{"legacy autodetected", []Header{{Key: HeaderLegacy, Value: legacy}}, HeaderLegacy, "", "00000000-0000-0001-0000-000000000002/1=3"},
		{"causes preferred over legacy", []Header{{Key: HeaderLegacy, Value: []byte{9}}, {Key: HeaderCauses, Value: good}}, HeaderCauses, "", "00000000-0000-0001-0000-000000000001/2=7"},
		{"duplicate legacy", []Header{{Key: HeaderLegacy, Value: legacy}, {Key: HeaderLegacy, Value: legacy}}, HeaderLegacy, CodeDuplicateHeader, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, key, err := FromHeaders(tc.headers)
			if key != tc.key {
				t.Errorf("key %q, want %q", key, tc.key)
			}
			if tc.code != "" {
				if !hasCode(err, tc.code) {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != tc.want {
				t.Errorf("clock %s, want %s", got, tc.want)
			}
		})
	}
}

// checkRefusal fails t unless err carries one of the package's codes.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	if code, ok := CodeOf(err); !ok || !slices.Contains(Codes(), code) {
		t.Fatalf("refused with unknown error %v", err)
	}
}

// FuzzDecode: never panics; accepted values re-encode to the same bytes;
// refused values carry a known code.
func FuzzDecode(f *testing.F) {
	for _, v := range readVectors(f) {
		f.Add(v.value)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		c, err := Decode(v, MaxSize(4096))
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if got := Encode(c); !bytes.Equal(got, v) {
			t.Fatalf("accepted %x but re-encodes to %x", v, got)
		}
		if !slices.IsSortedFunc(c.Entries(), func(a, b Entry) int { return a.Channel.Compare(b.Channel) }) {
			t.Fatalf("entries of %x not sorted", v)
		}
	})
}

// FuzzDecodeLegacy: the same properties for the legacy layout.
func FuzzDecodeLegacy(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Add(EncodeLegacy([]Entry{{Channel{TopicID{1}, 2}, 3}, {Channel{TopicID{0, 1}, 0}, 0}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff})
	for _, v := range readVectors(f) {
		f.Add(v.value)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		es, err := DecodeLegacy(v, MaxSize(4096))
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if got := EncodeLegacy(es); !bytes.Equal(got, v) {
			t.Fatalf("accepted %x but re-encodes to %x", v, got)
		}
	})
}
