package parsley

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
)

// changelogEntries builds n changelog entries as a busy task writes them:
// held records on 16 channels, 30 % of them tombstoned later, fed-up-to
// rewritten as it goes.
func changelogEntries(n int) (keys, values [][]byte) {
	chans := make([]clock.Channel, 16)
	for i := range chans {
		chans[i] = clock.Channel{Topic: clock.TopicID{byte(1 + i/4), 1}, Partition: int32(i % 4)}
	}
	var pos [16]int64
	for i := 0; len(keys) < n; i++ {
		c := i % 16
		ch := chans[c]
		switch {
		case i%10 < 6:
			keys = append(keys, heldKey(ch, pos[c]))
			values = append(values, heldValue(1764450000000+int64(i), clock.Entry{Channel: chans[(c+1)%16], Position: pos[c]}))
			pos[c]++
		case i%10 < 9:
			keys = append(keys, heldKey(ch, max(0, pos[c]-3)))
			values = append(values, nil)
		default:
			keys = append(keys, key(Key{Tag: TagFedUpTo, Channel: ch}))
			values = append(values, AppendPosition(nil, pos[c]))
		}
	}
	return keys, values
}

// BenchmarkStore applies a million-entry changelog (30 % tombstones) and
// decodes the live store: entries/s is the figure of issue 27's target,
// entries/cpu-s the same per CPU-second of the process (garbage collection
// on the other core included), which other load on the machine moves less.
// store-MiB is the heap the store keeps after a collection, task-MiB what
// its decoded task adds (the held records alias the store's bytes): the
// live store's size, not the changelog's.
func BenchmarkStore(b *testing.B) {
	const n = 1_000_000
	keys, values := changelogEntries(n)
	var s *Store
	var t *Task
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		s = NewStore(0)
		s.Apply(-1, []byte{'v'}, []byte{StoreVersion})
		for i := range keys {
			s.Apply(int64(i), keys[i], values[i])
		}
		if t = s.Decode(); len(t.Corrupt) != 0 {
			b.Fatal(t.Corrupt[0])
		}
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "entries/cpu-s")
	live := s.Len()
	keys, values = nil, nil
	b.ReportMetric(retained(func() { t = nil })/(1<<20), "task-MiB")
	b.ReportMetric(retained(func() { s = nil })/(1<<20), "store-MiB")
	b.ReportMetric(float64(live), "live-keys")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// retained returns the heap bytes that drop() frees: what the dropped
// values kept alive.
func retained(drop func()) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	drop()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(before.HeapAlloc) - float64(after.HeapAlloc)
}
