package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
)

// writeBenchCapture writes n records over 16 channels (4 topics × 4
// partitions), each with a 2-entry clock claiming earlier records of two
// other channels, so that everything delivers at once: the replay's cost
// is reading, decoding and the gate, not holding.
func writeBenchCapture(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := capture.NewWriter(f)
	const topics, parts = 4, 4
	ids := make([]clock.TopicID, topics)
	for i := range ids {
		ids[i] = clock.TopicID{0xca, 0xfe, byte(i + 1)}
	}
	next := make([]int64, topics*parts)
	value := []byte("payload-of-a-typical-size-0123456789")
	for i := range n {
		c := i % (topics * parts)
		a, b := (c+1)%(topics*parts), (c+5)%(topics*parts)
		var es []clock.Entry
		for _, d := range []int{a, b} {
			if next[d] > 0 {
				es = append(es, clock.Entry{Channel: clock.Channel{Topic: ids[d/parts], Partition: int32(d % parts)}, Position: next[d] - 1})
			}
		}
		it := &record.Item{
			Kind: record.KindRecord, Topic: fmt.Sprintf("topic-%d", c/parts), TopicID: ids[c/parts], Partition: int32(c % parts),
			Offset: next[c], Timestamp: 1764450000000 + int64(i), HasTimestamp: true,
			Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(es...))}},
			Value:   value,
		}
		next[c]++
		if err := w.Write(it); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplayFile replays a capture of 1 M records end to end — both
// passes over the file, the gate and the NDJSON events — and reports
// records/s and the peak heap.
func BenchmarkReplayFile(b *testing.B) {
	// Two sizes: the heap must not grow with the file.
	for _, n := range []int{250_000, 1_000_000} {
		path := filepath.Join(b.TempDir(), "bench.ndjson")
		writeBenchCapture(b, path, n)
		benchReplay(b, path, n)
	}
}

func benchReplay(b *testing.B, path string, n int) {
	fi, _ := os.Stat(path)
	for _, format := range []string{"ndjson", "json"} {
		b.Run(fmt.Sprintf("records=%d/output=%s", n, format), func(b *testing.B) {
			b.SetBytes(fi.Size())
			var peak uint64
			cpu0 := cpuTime()
			for b.Loop() {
				ios, _, _, _ := iostreams.Test()
				ios.Out = io.Discard
				opts := &Options{IO: ios, Final: &cmdutil.FinalOutput{}, Output: format, Now: time.Now, OpenInput: cmdutiltest.Factory(ios, "").OpenInput,
					InputFlags: cmdutil.InputFlags{Spec: input.Spec{Input: path, Names: &clock.Names{},
						MaxHeaderSize: clock.DefaultMaxSize, MaxLineSize: capture.DefaultMaxLineSize,
						Interleave: replay.Interleave{Mode: replay.File}}}}
				if err := Run(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapSys)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			// CPU time is steadier than wall time on a shared machine: it
			// counts this process's work on every thread, GC included.
			b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "records/cpu-s")
			b.ReportMetric(float64(peak)/(1<<20), "heap-sys-MiB")
		})
	}
}
