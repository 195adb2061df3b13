package watch

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/testutil"
)

// BenchmarkBigCluster runs watch over every partition of a cluster of 500
// topics of 20 partitions (10 000 channels, one record each, 1 000 held
// beyond the log end) from the start, until its status line shows every
// record received and the 1 000 held: the time to the first complete
// snapshot of a big scope, and the heap in use then (docs/performance.md,
// "Big clusters").
func BenchmarkBigCluster(b *testing.B) {
	c := kafkatest.BigCluster(b, 500, 20)
	ios0, _, _, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios0, c.ListenAddrs()[0])
	const want = "scope=10000 received=10000 delivered=9000 dropped=0 held=1000 held_channels=1000 "
	var heap uint64
	for b.Loop() {
		ios, _, _, _ := iostreams.Test()
		out := &testutil.SyncBuffer{}
		ios.Out = out
		opts := &Options{IO: ios, InputFlags: cmdutil.InputFlags{Spec: input.Spec{Range: input.Selection{Topics: c.Topics, Offsets: "start"}, Names: &clock.Names{}}},
			Interval: 50 * time.Millisecond, OpenFollow: f.OpenFollow, Now: time.Now}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, opts) }()
		out.Wait(b, 2*time.Minute, "every record and the 1000 held", func(s string) bool { return strings.Contains(s, want) })
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = ms.HeapInuse
		cancel()
		if err := <-done; cmdutil.ExitCode(err) != cmdutil.ExitOK {
			b.Fatalf("watch: %v", err)
		}
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}
