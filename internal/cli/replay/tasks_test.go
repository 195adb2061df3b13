package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/testutil"
)

// TestReplayTasksConformance: the captures of each Parsley process of the
// cluster run (one per task) joined into one file, replayed with --tasks,
// give each task exactly the deliveries Parsley's task made, in its
// order; without --tasks the single gate reports no tasks.
func TestReplayTasksConformance(t *testing.T) {
	dir := testutil.Shared(t, "conformance", "parsley-cluster")
	for _, process := range []string{"cycler", "joiner", "selfer", "splitter"} {
		t.Run(process, func(t *testing.T) {
			units, _ := filepath.Glob(filepath.Join(dir, process+".t*.json"))
			if len(units) == 0 {
				t.Fatalf("no units of %s", process)
			}
			var joined []byte
			want := map[int]string{}
			for i, path := range units {
				b, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".ndjson")
				if err != nil {
					t.Fatal(err)
				}
				joined = append(joined, b...)
				var u struct {
					Delivered [][2]any `json:"delivered_by_parsley"`
				}
				b, err = os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &u); err != nil {
					t.Fatal(err)
				}
				var seq []string
				for _, d := range u.Delivered {
					seq = append(seq, fmt.Sprintf("%s@%v", d[0], d[1]))
				}
				want[i] = strings.Join(seq, " ")
			}
			path := filepath.Join(t.TempDir(), process+".ndjson")
			if err := os.WriteFile(path, joined, 0o600); err != nil {
				t.Fatal(err)
			}
			err, out, stderr := exec(t, context.Background(), false, "", "-f", path, "--tasks", "-o", "ndjson")
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			got := map[int][]string{}
			var sum struct {
				Held     int64
				Channels []struct {
					Channel string
					Task    *int
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var ev struct {
					Type    string
					Task    *int
					Channel string
					Offset  int64
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatal(err)
				}
				switch ev.Type {
				case "deliver":
					got[*ev.Task] = append(got[*ev.Task], fmt.Sprintf("%s@%d", ev.Channel, ev.Offset))
				case "summary":
					if err := json.Unmarshal([]byte(line), &sum); err != nil {
						t.Fatal(err)
					}
				}
			}
			for task, seq := range want {
				if g := strings.Join(got[task], " "); g != seq {
					t.Errorf("task %d delivered\n%s\nParsley's task\n%s", task, g, seq)
				}
			}
			if sum.Held != 0 || len(sum.Channels) == 0 {
				t.Errorf("summary %+v", sum)
			}
			for _, c := range sum.Channels {
				if c.Task == nil || !strings.HasSuffix(c.Channel, fmt.Sprintf("/%d", *c.Task)) {
					t.Errorf("channel %s in task %v", c.Channel, c.Task)
				}
			}
			_, text, _ := exec(t, context.Background(), false, "", "-f", path, "--tasks", "-o", "text")
			for task := range want {
				if !strings.Contains(text, fmt.Sprintf("task %d (", task)) {
					t.Errorf("text has no block of task %d:\n%s", task, text)
				}
			}
		})
	}
}
