package testutil

import (
	"runtime/metrics"
	"testing"
	"time"
)

// PeakHeap samples the heap's live objects every millisecond until the
// returned function is called, which reports the most seen as the
// benchmark's peak-heap-MiB. Benchmarks of memory-bound code use it beside
// B/op, which counts what was allocated, not what was held at once.
func PeakHeap(b *testing.B) (stop func()) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		b.ReportMetric(float64(<-result)/(1<<20), "peak-heap-MiB")
	}
}
