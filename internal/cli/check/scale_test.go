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
)

// manyChannelsCapture writes a capture of n channels (topics of 100
// partitions) of two records each, the second claiming the first records
// of two other channels.
func manyChannelsCapture(tb testing.TB, n int) string {
	tb.Helper()
	ch := func(k int) (string, clock.Channel) {
		var id clock.TopicID
		id[0], id[14], id[15] = 0x6d, byte(k/100>>8), byte(k/100)
		return fmt.Sprintf("t%d", k/100), clock.Channel{Topic: id, Partition: int32(k % 100)}
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf)
	for k := range n {
		name, c := ch(k)
		_, x := ch((k + 1) % n)
		_, y := ch((k + 7) % n)
		for _, it := range []*record.Item{
			{Kind: record.KindRecord, Topic: name, TopicID: c.Topic, Partition: c.Partition},
			{Kind: record.KindRecord, Topic: name, TopicID: c.Topic, Partition: c.Partition, Offset: 1,
				Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(
					clock.Entry{Channel: x, Position: 0}, clock.Entry{Channel: y, Position: 0}))}}},
		} {
			if err := w.Write(it); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "many.ndjson")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkCheckChannels runs check -f over 1 000, 5 000 and 20 000
// channels with claims, end to end.
func BenchmarkCheckChannels(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		path := manyChannelsCapture(b, n)
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ios, _, _, _ := iostreams.Test()
				cmd := cmdutiltest.AsRoot(NewCmdCheck(cmdutiltest.Factory(ios, ""), nil))
				cmd.SetArgs([]string{"-f", path})
				if err := cmd.ExecuteContext(context.Background()); cmdutil.ExitCode(err) != 0 {
					b.Fatalf("check: %v", err)
				}
			}
		})
	}
}
