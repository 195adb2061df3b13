package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/testutil"
)

// TestReplayTasksCountIdentity: replay --tasks loses no record from its
// counts, whatever the scope and shard. Per task, the records the capture
// holds on the task's channels in scope (counted from the file, not from
// the replay) are delivered, dropped or still held; and every record of
// the file is received by a task or skipped. Over the cluster run's
// processes, each with every topic alone in scope, all of them, and the
// two shards of 2.
func TestReplayTasksCountIdentity(t *testing.T) {
	dir := testutil.Shared(t, "conformance", "parsley-cluster")
	for _, process := range []string{"cycler", "joiner", "selfer", "splitter"} {
		parts, _ := filepath.Glob(filepath.Join(dir, process+".t*.ndjson"))
		var joined []byte
		for _, p := range parts {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			joined = append(joined, b...)
		}
		path := filepath.Join(t.TempDir(), process+".ndjson")
		if err := os.WriteFile(path, joined, 0o600); err != nil {
			t.Fatal(err)
		}
		// The oracle: the file's records by topic and partition.
		type ch struct {
			topic     string
			partition int
		}
		records := map[ch]int64{}
		var total int64
		for _, line := range strings.Split(strings.TrimSpace(string(joined)), "\n") {
			var it struct {
				Topic     string
				Partition int
				Offset    *int64
				Position  *int64
			}
			if err := json.Unmarshal([]byte(line), &it); err != nil {
				t.Fatal(err)
			}
			if it.Offset != nil {
				records[ch{it.Topic, it.Partition}]++
				total++
			}
		}
		var topics []string
		for c := range records {
			if !slices.Contains(topics, c.topic) {
				topics = append(topics, c.topic)
			}
		}
		slices.Sort(topics)
		runs := [][]string{nil, {"--shard", "0/2"}, {"--shard", "1/2"}}
		for _, topic := range topics {
			runs = append(runs, []string{"--scope", topic})
		}
		for _, extra := range runs {
			name := fmt.Sprintf("%s %v", process, extra)
			args := append([]string{"-f", path, "--tasks", "-o", "ndjson", "--undecodable", "hold"}, extra...)
			err, out, stderr := exec(t, context.Background(), false, "", args...)
			if err != nil && !strings.Contains(err.Error(), "held") {
				t.Fatalf("%s: %v: %s", name, err, stderr)
			}
			fed := map[int]int64{} // delivered + dropped, by task
			var sum struct {
				Received, Delivered, Dropped, Held, Skipped int64
				Shard                                       *struct{ Unfed int64 }
				Channels                                    []struct {
					Channel string
					Held    int64
					Task    int
				}
			}
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var ev struct {
					Type string
					Task int
				}
				json.Unmarshal(sc.Bytes(), &ev)
				switch ev.Type {
				case "deliver", "drop":
					fed[ev.Task]++
				case "summary":
					if err := json.Unmarshal(sc.Bytes(), &sum); err != nil {
						t.Fatal(err)
					}
				}
			}
			held := map[int]int64{}
			for _, c := range sum.Channels {
				held[c.Task] += c.Held
			}
			// What the file holds for each task the run keeps, in scope.
			want := map[int]int64{}
			var inScope int64
			for c, n := range records {
				if len(extra) == 2 && extra[0] == "--scope" && c.topic != extra[1] {
					continue
				}
				if len(extra) == 2 && extra[0] == "--shard" && fmt.Sprintf("%d/2", c.partition%2) != extra[1] {
					continue
				}
				want[c.partition] += n
				inScope += n
			}
			for task, n := range want {
				if got := fed[task] + held[task]; got != n {
					t.Errorf("%s: task %d: %d delivered or dropped + %d held = %d; the file holds %d of its records", name, task, fed[task], held[task], got, n)
				}
			}
			var unfed int64
			if sum.Shard != nil {
				unfed = sum.Shard.Unfed
			}
			if sum.Received != inScope || sum.Received+sum.Skipped+unfed != total ||
				sum.Received != sum.Delivered+sum.Dropped+sum.Held {
				t.Errorf("%s: received %d (file: %d in scope), skipped %d, left to other shards %d (file: %d records), delivered %d + dropped %d + held %d",
					name, sum.Received, inScope, sum.Skipped, unfed, total, sum.Delivered, sum.Dropped, sum.Held)
			}
		}
	}
}
