package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// readMode reads data in each skip mode, with the fast path on or off,
// returning the items (copied) and the error that ended the reading.
func readMode(data []byte, noFast bool, opts ...ReaderOption) ([]Item, error) {
	r := NewReader(bytes.NewReader(data), opts...)
	r.noFast = noFast
	var items []Item
	for {
		it, err := r.Next()
		if err == io.EOF {
			return items, nil
		}
		if err != nil {
			return items, err
		}
		items = append(items, cloneItem(it))
	}
}

var skipModes = []struct {
	name string
	opts []ReaderOption
}{{"full", nil}, {"payloads", []ReaderOption{SkipPayloads()}}, {"channels", []ReaderOption{ChannelsOnly()}}}

// sameReading fails t unless the fast path and the scanner alone read data
// alike in every skip mode: the same items, the same error, word for word.
func sameReading(t *testing.T, data []byte) {
	t.Helper()
	for _, m := range skipModes {
		want, wantErr := readMode(data, true, m.opts...)
		got, err := readMode(data, false, m.opts...)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: fast path: %v; scanner: %v\ninput %q", m.name, err, wantErr, data)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: fast path read %d items, scanner %d\ninput %q", m.name, len(got), len(want), data)
		}
		for i := range got {
			if d := diffItems(got[i], want[i]); d != "" {
				t.Fatalf("%s: item %d: %s\ninput %q", m.name, i, d, data)
			}
		}
	}
}

// randomItem is a record or position line's item with fields drawn from
// values that stress the fast path's edges.
func randomItem(rng *rand.Rand) Item {
	it := Item{Kind: KindRecord, Partition: int32(rng.IntN(3))}
	switch rng.IntN(3) {
	case 0:
		it.Topic = []string{"orders", "a", "payments.v2", "x_y-z"}[rng.IntN(4)]
	case 1:
		it.TopicID = clock.TopicID{0x0f, byte(rng.IntN(3)), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	default:
		it.Topic = "orders"
		it.TopicID = clock.TopicID{0x0f, 0x9a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	}
	offsets := []int64{0, 1, 9, 41, 1 << 31, 999999999999999999, 1<<63 - 1}
	it.Offset = offsets[rng.IntN(len(offsets))]
	if rng.IntN(4) == 0 {
		it.Kind = KindPosition
		return it
	}
	if rng.IntN(3) > 0 {
		it.Timestamp, it.HasTimestamp = []int64{0, 1764450000123, -1, 1<<63 - 1}[rng.IntN(4)], true
	}
	payload := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	for range rng.IntN(3) {
		it.Headers = append(it.Headers, clock.Header{Key: []string{clock.HeaderCauses, "k", "é", "a\"b", ""}[rng.IntN(5)], Value: payload()})
	}
	it.Key, it.Value = payload(), payload()
	return it
}

// mutate damages line a little: a byte changed, removed or doubled, the
// line cut short, or a piece of JSON the Writer never writes put in.
func mutate(rng *rand.Rand, line []byte) []byte {
	l := append([]byte(nil), line...)
	if len(l) == 0 {
		return l
	}
	i := rng.IntN(len(l))
	switch rng.IntN(6) {
	case 0:
		const bytes = "\"\\{}[],:0123456789-.eE ntfu\x00\x7f\xff\r="
		l[i] = bytes[rng.IntN(len(bytes))]
	case 1:
		l = append(l[:i], l[i+1:]...)
	case 2:
		l = append(l[:i+1], l[i:]...)
	case 3:
		l = l[:i]
	case 4:
		bit := []string{" ", `\u0041`, `\"`, "\xc3\xa9", `"x":1,`, `,"x":1`, `null`, "\t", "\r"}[rng.IntN(9)]
		l = append(l[:i], append([]byte(bit), l[i:]...)...)
	default:
		l[i] ^= 1 << rng.IntN(8)
	}
	return l
}

// TestFastLineMatchesScanner holds the fast path to the scanner over
// hundreds of lines as the Writer writes them and as many damaged ones,
// one at a time and in files, in every skip mode: a line the fast path
// takes reads as the scanner reads it, and a bad line is refused with the
// same message and line number.
func TestFastLineMatchesScanner(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	var file []byte
	for n := range 600 {
		it := randomItem(rng)
		line, err := AppendItem(nil, &it)
		if err != nil {
			t.Fatal(err)
		}
		sameReading(t, line)
		bad := mutate(rng, line[:len(line)-1])
		sameReading(t, bad)
		file = append(file, line...)
		if n%50 == 49 {
			// A file whose damaged line comes after good ones: the error
			// names that line.
			sameReading(t, append(append([]byte(nil), file...), bad...))
		}
	}
	sameReading(t, file)
}

// TestFastLineTakesWriterLines checks that the lines the Writer writes do
// take the fast path, in every skip mode, and give what the scanner gives.
func TestFastLineTakesWriterLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	for range 200 {
		it := randomItem(rng)
		for i, h := range it.Headers {
			if h.Key == "é" || h.Key == `a"b` {
				it.Headers[i].Key = "k" // written escaped or not in ASCII: the scanner's
			}
		}
		line, err := AppendItem(nil, &it)
		if err != nil {
			t.Fatal(err)
		}
		line = line[:len(line)-1]
		for _, m := range skipModes {
			r := NewReader(bytes.NewReader(nil), m.opts...)
			r.line = 7
			if !r.fastLine(line) {
				t.Fatalf("%s: the fast path refused a Writer line: %s", m.name, line)
			}
			if r.item.Line != 7 {
				t.Fatalf("%s: line %d, want 7", m.name, r.item.Line)
			}
		}
	}
	// And the lines it must leave to the scanner, though they are good.
	for _, l := range []string{
		`{"topic": "a","partition":0,"offset":0}`,
		`{"partition":0,"topic":"a","offset":0}`,
		`{"topic":"a","partition":0,"offset":0,"timestamp":-0}`,
		`{"topic":"a","partition":0,"offset":0,"headers":[{"key":"\u00e9","value":null}]}`,
		`{"topic":"a","partition":0,"offset":0}` + "\r",
	} {
		r := NewReader(bytes.NewReader(nil))
		if r.fastLine([]byte(l)) {
			t.Errorf("the fast path took %s", l)
		}
		if _, err := readMode([]byte(l), false); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}

// TestFastLineRefusesLikeScanner: a bad line after good ones is refused
// with its line number, whichever path read the good ones.
func TestFastLineRefusesLikeScanner(t *testing.T) {
	good := `{"topic":"a","partition":0,"offset":0,"headers":[],"key":null,"value":"AA=="}` + "\n"
	for _, bad := range []string{
		`{"topic":"a","partition":0,"offset":1,"headers":[],"key":null,"value":"AB=="}`,
		`{"topic":"a","partition":0,"offset":1,"headers":[{"key":"k","value":"A"}],"key":null,"value":null}`,
		`{"topic":"a","partition":0,"offset":01}`,
		`{"topic":"a","partition":2147483648,"offset":1}`,
		`{"topic":"a/b","partition":0,"offset":1}`,
		`{"topic_id":"00000000-0000-0000-0000-000000000000","partition":0,"offset":1}`,
		`{"topic":"a","partition":0,"offset":1,"value":"AA=="`,
		"{\"topic\":\"a\",\"partition\":0,\"offset\":1,\"value\":\"\xff\"}",
	} {
		data := []byte(good + good + bad + "\n")
		sameReading(t, data)
		for _, m := range skipModes {
			_, err := readMode(data, false, m.opts...)
			var le *LineError
			if m.name != "channels" && (!errors.As(err, &le) || le.Line != 3) {
				t.Errorf("%s: %q: %v, want an error at line 3", m.name, bad, err)
			}
		}
	}
}

// FuzzFastLine holds the fast path to the scanner on any input: the same
// items and the same first error in every skip mode.
func FuzzFastLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	rng := rand.New(rand.NewPCG(27, 3))
	for range 40 {
		it := randomItem(rng)
		line, _ := AppendItem(nil, &it)
		f.Add(line)
		f.Add(mutate(rng, line))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameReading(t, data) })
}

// TestBase64Only holds the eight-at-a-time alphabet check to the table, on
// every byte value at every position of a word and on random strings.
func TestBase64Only(t *testing.T) {
	table := func(s []byte) bool {
		for _, c := range s {
			if !base64Alphabet[c] {
				return false
			}
		}
		return true
	}
	for c := range 256 {
		for at := range 11 {
			s := []byte("QUJDREVGR0hJSktM")[:11]
			s[at] = byte(c)
			if got, want := base64Only(s), table(s); got != want {
				t.Fatalf("byte 0x%02x at %d: %v, want %v", c, at, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(27, 4))
	for range 2000 {
		s := make([]byte, rng.IntN(40))
		for i := range s {
			s[i] = b64chars[rng.IntN(len(b64chars))]
			if rng.IntN(30) == 0 {
				s[i] = byte(rng.IntN(256))
			}
		}
		if got, want := base64Only(s), table(s); got != want {
			t.Fatalf("%q: %v, want %v", s, got, want)
		}
	}
}
