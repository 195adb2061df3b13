package holds

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/record"
)

// chainCapture writes a capture of n channels (topics t0… of 100
// partitions) whose heads wait in one chain: channel k's one record claims
// channel k+1's, the last claims a record never written on channel n — or, with cycle,
// the first's, closing one wait cycle of n.
func chainCapture(tb testing.TB, n int, cycle bool) string {
	tb.Helper()
	ch := func(k int) (string, clock.Channel) {
		var id clock.TopicID
		id[0], id[14], id[15] = 0x7c, byte(k/100>>8), byte(k/100)
		return fmt.Sprintf("t%d", k/100), clock.Channel{Topic: id, Partition: int32(k % 100)}
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf)
	// Channel n is in scope, read from 0 and empty: what the chain's last
	// head claims of it was never written.
	name, c := ch(n)
	if err := w.Write(&record.Item{Kind: record.KindPosition, Topic: name, TopicID: c.Topic, Partition: c.Partition}); err != nil {
		tb.Fatal(err)
	}
	for k := range n {
		next := k + 1
		if cycle && k == n-1 {
			next = 0
		}
		_, nc := ch(next)
		name, c := ch(k)
		it := &record.Item{Kind: record.KindRecord, Topic: name, TopicID: c.Topic, Partition: c.Partition,
			Timestamp: 1764590000000 + int64(k), HasTimestamp: true,
			Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: nc, Position: 0}))}}}
		if err := w.Write(it); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "chain.ndjson")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// runHolds runs holds over path and returns its output's size.
func runHolds(tb testing.TB, path, format string) int {
	ios, _, out, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	f.Now = func() time.Time { return time.UnixMilli(1764600000000) }
	cmd := newCmd(f, nil)
	cmd.SetArgs([]string{"-f", path, "-o", format})
	if err := cmd.ExecuteContext(context.Background()); cmdutil.ExitCode(err) != cmdutil.ExitFound {
		tb.Fatalf("holds: %v", err)
	}
	return out.Len()
}

// BenchmarkHoldsChain runs holds over one wait chain (and one cycle) of 1 000,
// 5 000 and 20 000 channels, in text and JSON: the cost, and the output,
// must grow with the channels, not with their square.
func BenchmarkHoldsChain(b *testing.B) {
	for _, shape := range []string{"chain", "cycle"} {
		for _, n := range []int{1000, 5000, 20000} {
			path := chainCapture(b, n, shape == "cycle")
			for _, format := range []string{"text", "json"} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", shape, n, format), func(b *testing.B) {
					b.ReportAllocs()
					var size int
					for b.Loop() {
						size = runHolds(b, path, format)
					}
					b.ReportMetric(float64(size)/float64(n), "out-B/channel")
				})
			}
		}
	}
}

var headAt = regexp.MustCompile(`t\d+/\d+@0  held`)

// TestLongChainOutput: over a chain of 300 heads, the text draws one line
// a head, indented at most maxIndent levels, the deeper ones with their
// depth; the JSON names at most MaxChain channels a head with the chain's
// length; over a cycle of 300, each head names MaxChain members with the
// cycle's length, and the report's cycles list it whole.
func TestLongChainOutput(t *testing.T) {
	const n = 300
	ios, _, out, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	f.Now = func() time.Time { return time.UnixMilli(1764600000000) }
	for _, format := range []string{"text", "json"} {
		for _, cycle := range []bool{false, true} {
			out.Reset()
			cmd := newCmd(f, nil)
			cmd.SetArgs([]string{"-f", chainCapture(t, n, cycle), "-o", format})
			if err := cmd.ExecuteContext(context.Background()); cmdutil.ExitCode(err) != cmdutil.ExitFound {
				t.Fatalf("holds: %v", err)
			}
			if format == "text" {
				lines := strings.Split(out.String(), "\n")
				var heads, widest int
				for _, l := range lines {
					if at := headAt.FindStringIndex(l); at != nil {
						heads++
						widest = max(widest, utf8.RuneCountInString(l[:at[0]]))
					}
				}
				if heads != n || widest > 2+3*maxIndent+len("(depth 299) ") {
					t.Errorf("cycle %v: %d head lines, widest indent %d", cycle, heads, widest)
				}
				if !cycle && !strings.Contains(out.String(), "└─ (depth 299) t0/0@0") {
					t.Errorf("the deepest head is not drawn with its depth:\n%s", out.String()[len(out.String())-400:])
				}
				continue
			}
			var raw struct {
				Heads []struct {
					Chain       []string `json:"chain"`
					ChainLength int      `json:"chain_length"`
					Cycle       []string `json:"cycle"`
					CycleLength int      `json:"cycle_length"`
				} `json:"heads"`
				Cycles [][]string `json:"cycles"`
			}
			if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			rh := raw.Heads[0]
			switch {
			case len(raw.Heads) != n || len(rh.Chain) != inspect.MaxChain || rh.Chain[0] != "t0/0":
				t.Errorf("cycle %v: %d heads, first chain %v", cycle, len(raw.Heads), rh.Chain)
			case !cycle && (rh.ChainLength != n || rh.Chain[inspect.MaxChain-1] != "t2/99"):
				t.Errorf("chain: length %d, chain %v", rh.ChainLength, rh.Chain)
			case cycle && (len(rh.Cycle) != inspect.MaxChain || rh.CycleLength != n || len(raw.Cycles) != 1 || len(raw.Cycles[0]) != n):
				t.Errorf("cycle: head names %d of %d, cycles %d", len(rh.Cycle), rh.CycleLength, len(raw.Cycles))
			}
		}
	}
}

// BenchmarkBigCluster runs holds over every partition of a cluster of 500
// topics of 20 partitions (10 000 channels, one record each, 1 000 of
// them held beyond the log end), from the brokers, in text and JSON
// (docs/performance.md, "Big clusters").
func BenchmarkBigCluster(b *testing.B) {
	c := kafkatest.BigCluster(b, 500, 20)
	topics := strings.Join(c.Topics, ",")
	for _, format := range []string{"text", "json"} {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				ios, _, out, errOut := iostreams.Test()
				f := cmdutiltest.Factory(ios, c.ListenAddrs()[0])
				cmd := newCmd(f, nil)
				cmd.SetArgs([]string{"-t", topics, "-o", format})
				if err := cmd.ExecuteContext(context.Background()); cmdutil.ExitCode(err) != cmdutil.ExitFound {
					b.Fatalf("holds: %v (%s)", err, errOut)
				}
				if format == "json" && !strings.Contains(out.String(), `"held_heads":1000,`) {
					b.Fatalf("not 1000 held heads: %.300s", out)
				}
				size = out.Len()
			}
			b.ReportMetric(float64(size), "out-B")
		})
	}
}
