package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
)

// benchLines is the size of the synthetic capture the benchmarks read.
const benchLines = 100_000

// benchTopics are the channels of the synthetic capture.
var benchTopics = []struct {
	name string
	id   clock.TopicID
}{
	{"orders", clock.TopicID{0x0f, 0x9a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}},
	{"payments", clock.TopicID{0x31, 0xb1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15}},
	{"shipments", clock.TopicID{0x50, 0x76, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16}},
}

// benchItems returns n typical records: topic and topic_id, partition,
// offset, timestamp, one parsley.causes header holding a 2-entry clock, a
// null key and a short value.
func benchItems(n int) []Item {
	items := make([]Item, n)
	offsets := make(map[[2]int]int64)
	for i := range items {
		t := i % len(benchTopics)
		p := (i / len(benchTopics)) % 4
		off := offsets[[2]int{t, p}]
		offsets[[2]int{t, p}] = off + 1
		u := benchTopics[(t+1)%len(benchTopics)]
		v := benchTopics[(t+2)%len(benchTopics)]
		c := clock.MustNew(
			clock.Entry{Channel: clock.Channel{Topic: u.id, Partition: int32(p)}, Position: int64(i) * 3},
			clock.Entry{Channel: clock.Channel{Topic: v.id, Partition: int32(p + 1)}, Position: int64(i) * 7},
		)
		items[i] = Item{
			Kind:         KindRecord,
			Topic:        benchTopics[t].name,
			TopicID:      benchTopics[t].id,
			Partition:    int32(p),
			Offset:       off,
			Timestamp:    1764450000123 + int64(i),
			HasTimestamp: true,
			Headers:      []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(c)}},
			Value:        []byte("hello world!"),
		}
	}
	return items
}

var benchData struct {
	sync.Mutex
	files map[int][]byte
}

// benchCapture returns the capture file of benchItems(n), built once.
func benchCapture(tb testing.TB, n int) []byte {
	benchData.Lock()
	defer benchData.Unlock()
	if data, ok := benchData.files[n]; ok {
		return data
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, it := range benchItems(n) {
		if err := w.Write(&it); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if benchData.files == nil {
		benchData.files = make(map[int][]byte)
	}
	benchData.files[n] = buf.Bytes()
	runtime.GC() // so that building it does not cost the benchmark
	return buf.Bytes()
}

// loopReader reads data over and over, so that one benchmark op can be one
// line however large b.N grows.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	if l.off == len(l.data) {
		l.off = 0
	}
	n := copy(p, l.data[l.off:])
	l.off += n
	return n, nil
}

func reportLines(b *testing.B, start time.Time) {
	ns := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/line")
	b.ReportMetric(1e9/ns, "records/s")
}

// BenchmarkReader reads typical record lines; one op is one line.
func BenchmarkReader(b *testing.B) { benchRead(b, benchCapture(b, benchLines), false) }

// benchRead reads the lines of data over and over, one op a line.
func benchRead(b *testing.B, data []byte, noFast bool, opts ...ReaderOption) {
	b.SetBytes(int64(len(data) / benchLines))
	r := NewReader(&loopReader{data: data}, opts...)
	r.noFast = noFast
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
	reportLines(b, start)
}

// jsonLine is what encoding/json needs to decode a capture line; it is
// the baseline BenchmarkReader is measured against.
type jsonLine struct {
	Topic     *string `json:"topic"`
	TopicID   *string `json:"topic_id"`
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	Position  *int64  `json:"position"`
	Timestamp *int64  `json:"timestamp"`
	Headers   []struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	} `json:"headers"`
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// BenchmarkEncodingJSON is the baseline: the same lines split by a
// bufio.Scanner and decoded by encoding/json into a struct (no checks
// beyond what encoding/json does; topic_id left unparsed).
func BenchmarkEncodingJSON(b *testing.B) {
	data := benchCapture(b, benchLines)
	b.SetBytes(int64(len(data) / benchLines))
	sc := bufio.NewScanner(&loopReader{data: data})
	sc.Buffer(make([]byte, readBufferSize), DefaultMaxLineSize)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if !sc.Scan() {
			b.Fatal(sc.Err())
		}
		var l jsonLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			b.Fatal(err)
		}
	}
	reportLines(b, start)
}

// BenchmarkWriter writes typical record lines; one op is one line.
func BenchmarkWriter(b *testing.B) {
	items := benchItems(1000)
	w := NewWriter(io.Discard)
	line, _ := AppendItem(nil, &items[0])
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := w.Write(&items[i%len(items)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	reportLines(b, start)
}

// BenchmarkReaderPaths reads typical record lines in each skip mode, with
// the fast path of Writer lines and with the scanner alone; one op is one
// line.
func BenchmarkReaderPaths(b *testing.B) {
	data := benchCapture(b, benchLines)
	for _, m := range skipModes {
		for _, path := range []struct {
			name   string
			noFast bool
		}{{"fast", false}, {"scanner", true}} {
			b.Run(m.name+"/"+path.name, func(b *testing.B) { benchRead(b, data, path.noFast, m.opts...) })
		}
	}
}
