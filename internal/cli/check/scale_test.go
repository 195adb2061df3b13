package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// writeCapture writes n channels of topics of width partitions (named
// prefix and a number) to a capture file and returns its path: records(k,
// ch) gives channel k's records, and may name any channel through ch.
func writeCapture(tb testing.TB, n, width int, prefix string, records func(k int, ch func(int) clock.Channel) []*record.Item) string {
	tb.Helper()
	ch := func(k int) clock.Channel {
		var id clock.TopicID
		id[0], id[14], id[15] = prefix[0], byte(k/width>>8), byte(k/width)
		return clock.Channel{Topic: id, Partition: int32(k % width)}
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf)
	for k := range n {
		for _, it := range records(k, ch) {
			c := ch(k)
			it.Kind, it.Topic, it.TopicID, it.Partition = record.KindRecord, fmt.Sprintf("%s%d", prefix, k/width), c.Topic, c.Partition
			if err := w.Write(it); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), prefix+".ndjson")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// stamp is a parsley.causes header of the entries.
func stamp(entries ...clock.Entry) []clock.Header {
	return []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(entries...))}}
}

// manyChannelsCapture writes a capture of n channels (topics of 100
// partitions) of two records each, the second claiming the first records
// of two other channels.
func manyChannelsCapture(tb testing.TB, n int) string {
	return writeCapture(tb, n, 100, "t", func(k int, ch func(int) clock.Channel) []*record.Item {
		return []*record.Item{{}, {Offset: 1, Headers: stamp(
			clock.Entry{Channel: ch((k + 1) % n), Position: 0}, clock.Entry{Channel: ch((k + 7) % n), Position: 0})}}
	})
}

// chainCapture writes a chain of n channels (topics of 20 partitions) of
// two records each, the first record of channel k claiming the last of
// channel k−1: every record has every earlier channel among its causes,
// the input one claim a channel.
func chainCapture(tb testing.TB, n int) string {
	return writeCapture(tb, n, 20, "c", func(k int, ch func(int) clock.Channel) []*record.Item {
		first := &record.Item{}
		if k > 0 {
			first.Headers = stamp(clock.Entry{Channel: ch(k - 1), Position: 1})
		}
		return []*record.Item{first, {Offset: 1}}
	})
}

// benchCheck runs check -f over the capture of each size that capture
// writes, end to end; peak-heap-MiB is the most heap in use seen during a
// run.
func benchCheck(b *testing.B, sizes []int, capture func(testing.TB, int) string) {
	for _, n := range sizes {
		path := capture(b, n)
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			peak := testutil.PeakHeap(b)
			for b.Loop() {
				ios, _, _, _ := iostreams.Test()
				cmd := cmdutiltest.AsRoot(NewCmdCheck(cmdutiltest.Factory(ios, ""), nil))
				cmd.SetArgs([]string{"-f", path})
				if err := cmd.ExecuteContext(context.Background()); cmdutil.ExitCode(err) != 0 {
					b.Fatalf("check: %v", err)
				}
			}
			peak()
		})
	}
}

// BenchmarkCheckChannels runs check -f over 1 000, 5 000 and 20 000
// channels with claims, end to end.
func BenchmarkCheckChannels(b *testing.B) {
	benchCheck(b, []int{1000, 5000, 20000}, manyChannelsCapture)
}

// BenchmarkCheckChain runs check -f over chains of 5 000, 10 000 and
// 20 000 channels, end to end (issue 36: 12.7 s and 1.86 GiB at 20 000).
func BenchmarkCheckChain(b *testing.B) {
	benchCheck(b, []int{5000, 10000, 20000}, chainCapture)
}
