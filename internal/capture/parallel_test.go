package capture_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
)

// randomCapture returns a capture of random lines: records and positions
// naming their topic by name and UUID, by UUID only or by name only (bound
// by an earlier line, a later one or none), log-facts lines, blank lines, a
// byte order mark, long values that span several parts, and at times one
// bad line (broken JSON, a name bound to a second UUID, a duplicate field).
func randomCapture(rng *rand.Rand) []byte {
	type topic struct {
		name string
		id   clock.TopicID
	}
	var topics []topic
	for i := range 1 + rng.IntN(4) {
		var id clock.TopicID
		id[0], id[15] = 0xab, byte(i+1)
		topics = append(topics, topic{fmt.Sprintf("t%d", i), id})
	}
	var b bytes.Buffer
	if rng.IntN(8) == 0 {
		b.WriteString("\ufeff")
	}
	next := map[string]int64{}
	lines := 1 + rng.IntN(120)
	bad := -1
	if rng.IntN(3) == 0 {
		bad = rng.IntN(lines)
	}
	for l := range lines {
		t := topics[rng.IntN(len(topics))]
		p := rng.IntN(3)
		ch := fmt.Sprintf("%s/%d", t.name, p)
		var name string
		switch rng.IntN(6) {
		case 0:
			name = fmt.Sprintf(`"topic_id":%q`, t.id.String())
		case 1:
			name = fmt.Sprintf(`"topic":%q`, t.name)
		default:
			name = fmt.Sprintf(`"topic":%q,"topic_id":%q`, t.name, t.id.String())
		}
		if l == bad {
			switch rng.IntN(4) {
			case 0:
				b.WriteString(`{"topic":` + "\n")
				continue
			case 1:
				var other clock.TopicID
				other[0], other[15] = 0xcd, byte(rng.IntN(4))
				name = fmt.Sprintf(`"topic":%q,"topic_id":%q`, t.name, other.String())
			case 2:
				name += `,"partition":1`
			case 3:
				b.WriteString(`{"topic":"x","partition":0,"offset":1,"position":2}` + "\n")
				continue
			}
		}
		switch k := rng.IntN(20); {
		case k == 0:
			b.WriteString(strings.Repeat(" ", rng.IntN(3)) + "\n")
		case k == 1:
			fmt.Fprintf(&b, `{%s,"partition":%d,"log_facts":{"log_start":0,"last_stable":%d,"high_watermark":%d,"at":1}}`+"\n", name, p, next[ch], next[ch])
		case k < 5:
			next[ch] += int64(rng.IntN(3))
			fmt.Fprintf(&b, `{%s,"partition":%d,"position":%d}`+"\n", name, p, next[ch])
		default:
			value := make([]byte, rng.IntN(8))
			if rng.IntN(10) == 0 {
				value = make([]byte, 100+rng.IntN(600)) // longer than a part
			}
			c := clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: topics[0].id, Partition: int32(rng.IntN(3))}, Position: rng.Int64N(50)})
			fmt.Fprintf(&b, `{%s,"partition":%d,"offset":%d,"timestamp":%d,"headers":[{"key":"parsley.causes","value":%q}],"value":%q}`+"\n",
				name, p, next[ch], rng.Int64N(1000), base64.StdEncoding.EncodeToString(clock.Encode(c)), base64.StdEncoding.EncodeToString(value))
			next[ch]++
		}
	}
	out := b.Bytes()
	if rng.IntN(4) == 0 {
		out = bytes.TrimSuffix(out, []byte("\n")) // the last line without its newline
	}
	return out
}

// readAll reads src to its end: copies of its items and its error.
func readAll(src engine.Source) ([]capture.Item, error) {
	var out []capture.Item
	for {
		it, err := src.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, *it.Clone())
	}
}

// discovered is what a first pass learns: the channels, the names bound,
// the error.
type discovered struct {
	channels []clock.Channel
	names    []string
	err      string
}

func discover(src engine.Source) discovered {
	names := &clock.Names{}
	chans, err := engine.Discover(src, names)
	d := discovered{channels: chans}
	for _, n := range names.All() {
		id, _ := names.ID(n)
		d.names = append(d.names, n+"="+id.String())
	}
	if err != nil {
		d.err = err.Error()
	}
	return d
}

// TestParallelReaderMatchesReader: over hundreds of random captures, each
// read in random parts on 1 to 4 workers, a ParallelReader yields exactly
// the items (line numbers included) and the first error of a Reader, in
// every reading mode, and a first pass (engine.Discover) over it learns the
// same channels and names and fails on the same line. A merge broken on
// purpose — parts handed over out of order, or line numbers not rebased —
// must be caught by the same comparison.
func TestParallelReaderMatchesReader(t *testing.T) {
	modes := []struct {
		name string
		opts []capture.ReaderOption
	}{{"full", nil}, {"skip-payloads", []capture.ReaderOption{capture.SkipPayloads()}}, {"channels-only", []capture.ReaderOption{capture.ChannelsOnly()}}}
	caught := map[int]int{}
	const seeds = 400
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 27))
		data := randomCapture(rng)
		workers, part := 1+rng.IntN(4), 16+rng.IntN(400)
		for _, m := range modes {
			want, wantErr := readAll(capture.NewReader(bytes.NewReader(data), m.opts...))
			par := capture.NewParallelForTest(bytes.NewReader(data), int64(len(data)), workers, part, 0, m.opts...)
			got, gotErr := readAll(par)
			par.Close()
			if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("seed %d, %s, %d workers, parts of %d bytes: %d items, error %v; want %d items, error %v\n%s",
					seed, m.name, workers, part, len(got), gotErr, len(want), wantErr, data)
			}
		}
		opts := []capture.ReaderOption{capture.ChannelsOnly()}
		want := discover(capture.NewReader(bytes.NewReader(data), opts...))
		par := capture.NewParallelForTest(bytes.NewReader(data), int64(len(data)), workers, part, 0, opts...)
		got := discover(par)
		par.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: the parallel first pass found %+v, the serial one %+v\n%s", seed, got, want, data)
		}
		for broken := 1; broken <= 2; broken++ {
			par := capture.NewParallelForTest(bytes.NewReader(data), int64(len(data)), workers, part, broken, opts...)
			items, err := readAll(par)
			par.Close()
			serial, serialErr := readAll(capture.NewReader(bytes.NewReader(data), opts...))
			if !reflect.DeepEqual(items, serial) || fmt.Sprint(err) != fmt.Sprint(serialErr) {
				caught[broken]++
			}
		}
	}
	for broken := 1; broken <= 2; broken++ {
		// Captures of one part cannot show a broken merge; most have several.
		if caught[broken] < seeds/2 {
			t.Errorf("merge fault %d changed the reading of only %d of %d captures", broken, caught[broken], seeds)
		}
	}
}

// TestParallelFirstPassBindsLater: a name bound on line 10 resolves a
// name-only line 5 in the parallel first pass too, however the file is cut.
func TestParallelFirstPassBindsLater(t *testing.T) {
	id := "ab000000-0000-0000-0000-000000000001"
	var b strings.Builder
	for i := range 12 {
		switch i {
		case 4:
			fmt.Fprintf(&b, `{"topic":"late","partition":2,"offset":%d}`+"\n", i)
		case 9:
			fmt.Fprintf(&b, `{"topic":"late","topic_id":%q,"partition":0,"offset":%d}`+"\n", id, i)
		default:
			fmt.Fprintf(&b, `{"topic_id":%q,"partition":1,"offset":%d}`+"\n", id, i)
		}
	}
	data := []byte(b.String())
	for part := 8; part < len(data); part += 13 {
		par := capture.NewParallelForTest(bytes.NewReader(data), int64(len(data)), 3, part, 0, capture.ChannelsOnly())
		d := discover(par)
		par.Close()
		if d.err != "" || len(d.channels) != 3 || !slices.Equal(d.names, []string{"late=" + id}) {
			t.Fatalf("parts of %d bytes: %+v; want 3 channels of late, bound to %s", part, d, id)
		}
	}
}

// TestReaderParallel: a Reader of a regular file from its start has a
// ParallelReader; one of anything else, or one that has read, has none.
func TestReaderParallel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.ndjson")
	data := `{"topic":"a","topic_id":"ab000000-0000-0000-0000-000000000001","partition":0,"offset":1}` + "\n"
	if err := os.WriteFile(path, []byte(data+data), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	par := capture.NewReader(open()).Parallel()
	if par == nil {
		t.Fatal("no ParallelReader for a regular file")
	}
	items, err := readAll(par)
	par.Close()
	if err == nil {
		err = fmt.Errorf("%d items", len(items))
	}
	// The second line repeats the first's offset: the reader does not
	// judge offsets, so both are read.
	if len(items) != 2 || items[1].Line != 2 {
		t.Fatalf("read %v; want 2 items, the second on line 2", err)
	}
	if capture.NewReader(bytes.NewReader([]byte(data))).Parallel() != nil {
		t.Error("a ParallelReader for a reader that is no file")
	}
	r := capture.NewReader(open())
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if r.Parallel() != nil {
		t.Error("a ParallelReader for a reader that has read a line")
	}
}

// TestParallelReaderStoppedLine: a capture ending in a stopped line (a
// partial capture) reads the same in parallel parts as serially, however
// the file is cut: the same items, the stopped line reported with its file
// line, and a line after it refused at the same line.
func TestParallelReaderStoppedLine(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, `{"topic":"orders","topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","partition":0,"offset":%d}`+"\n", i)
	}
	stopped := `{"stopped":{"reason":"interrupted","records":30,"channels":[]}}` + "\n"
	for _, tail := range []string{"", "\n\n", `{"topic":"orders","partition":0,"offset":30}` + "\n"} {
		data := []byte(b.String() + stopped + tail)
		for part := 16; part < 400; part += 37 {
			for workers := 1; workers <= 3; workers++ {
				serial := capture.NewReader(bytes.NewReader(data))
				want, wantErr := readAll(serial)
				par := capture.NewParallelForTest(bytes.NewReader(data), int64(len(data)), workers, part, 0)
				got, gotErr := readAll(par)
				par.Close()
				if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("tail %q, parts of %d, %d workers: %d items, %v; want %d, %v", tail, part, workers, len(got), gotErr, len(want), wantErr)
				}
				if !reflect.DeepEqual(par.Stopped(), serial.Stopped()) {
					t.Fatalf("tail %q, parts of %d: stopped %+v, want %+v", tail, part, par.Stopped(), serial.Stopped())
				}
			}
		}
	}
}
