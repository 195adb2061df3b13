package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate/gatetest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// shardAndMerge runs replay --tasks --shard K/N -o json for every K
// (in-process, one after another: the N processes of a split run), merges
// their summaries with --merge and returns the merged output and error.
func shardAndMerge(t *testing.T, dir string, n int, args []string) (string, error) {
	t.Helper()
	var files []string
	for k := range n {
		err, out, stderr := exec(t, context.Background(), false, "", append(args, "--tasks", "--shard", fmt.Sprintf("%d/%d", k, n), "-o", "json")...)
		if err != nil && out == "" {
			t.Fatalf("shard %d/%d: %v: %s", k, n, err, stderr)
		}
		path := filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d.json", k, n))
		if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	// The files in another order than K's: the merge orders the tasks.
	rand.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	err, out, _ := exec(t, context.Background(), false, "", append([]string{"--merge"}, files...)...)
	return out, err
}

// TestShardMergeIsTheSingleRun: over the captures of testdata and random
// captures of many tasks (holds, cycles, skipped channels, undecodable
// stamps), in every interleaving, the N shards' summaries merged are the
// single replay --tasks -o json, byte for byte, for N from 1 to more than
// the tasks. Where the single run failed closed, the merge fails too and
// (in file order, where a line is the input's order) names its failure.
func TestShardMergeIsTheSingleRun(t *testing.T) {
	dir := t.TempDir()
	type input struct {
		name string
		args []string
	}
	var inputs []input
	for _, c := range []string{"basic.ndjson", "faults.ndjson"} {
		inputs = append(inputs, input{c, []string{"-f", testutil.Testdata("captures", c)}})
	}
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := 1; seed <= seeds; seed++ {
		path := filepath.Join(dir, fmt.Sprintf("random-%d.ndjson", seed))
		args := append([]string{"-f", path}, writeRandomTasks(t, uint64(seed), path)...)
		inputs = append(inputs, input{fmt.Sprintf("random-%d", seed), args})
	}
	for seed := 1; seed <= seeds/3; seed++ { // the oracle's simulated worlds
		w := gatetest.Simulate(gatetest.Config{Seed: uint64(seed), Corrupt: seed%2 == 0, Steps: 150})
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		path := filepath.Join(dir, fmt.Sprintf("world-%d.ndjson", seed))
		writeWorld(t, w, w.FullPlan(), false, rng, path)
		inputs = append(inputs, input{fmt.Sprintf("world-%d", seed), []string{"-f", path}})
	}

	var compared, failed, events int
	for _, in := range inputs {
		for _, mode := range []string{"file", "timestamp", "channel", "round-robin", "random:3"} {
			args := append(append([]string{}, in.args...), "--interleave", mode)
			errSingle, single, stderr := exec(t, context.Background(), false, "", append(args, "--tasks", "-o", "json")...)
			if errSingle != nil && single == "" {
				t.Fatalf("%s %s: %v: %s", in.name, mode, errSingle, stderr)
			}
			events += sameEvents(t, in.name+" "+mode, 3, args)
			for _, n := range []int{1, 2, 3, 5, 17} {
				merged, err := shardAndMerge(t, dir, n, args)
				if errSingle != nil {
					failed++
					if err == nil || !strings.Contains(merged, `"failed":`) {
						t.Errorf("%s %s N=%d: the single run failed closed (%v), the merge did not: %v\n%s", in.name, mode, n, errSingle, err, merged)
					}
					if mode == "file" && failure(single) != failure(merged) {
						t.Errorf("%s N=%d: the merge failed at\n%s\nthe single run at\n%s", in.name, n, failure(merged), failure(single))
					}
					continue
				}
				compared++
				if err != nil {
					t.Errorf("%s %s N=%d: merge: %v", in.name, mode, n, err)
				}
				if merged != single {
					t.Errorf("%s %s N=%d: merged\n%s\nsingle\n%s", in.name, mode, n, merged, single)
				}
			}
		}
	}
	t.Logf("%d merges equal to their single run, %d failed closed as it did; events of %d shards equal to the single run's", compared, failed, events)
	if compared < 100 || failed == 0 {
		t.Errorf("too few cases to prove anything: %d compared, %d failed closed", compared, failed)
	}
}

// sameEvents checks that each of n shards' -o ndjson events are the
// single run's events of its tasks, in the same order: each task's gate
// sees what it would in the single run (the interleaving of its channels
// kept), which the summaries alone cannot show, as a gate's end state
// hardly depends on the order. It returns the number of shards checked.
func sameEvents(t *testing.T, name string, n int, args []string) int {
	t.Helper()
	err, single, _ := exec(t, context.Background(), false, "", append(args, "--tasks", "-o", "ndjson")...)
	if err != nil { // failed closed: it stopped every task there, a shard only its own
		return 0
	}
	want := make([][]string, n)
	for _, line := range strings.Split(strings.TrimSpace(single), "\n") {
		if task, ok := eventTask(t, line); ok {
			want[task%n] = append(want[task%n], line)
		}
	}
	for k := range n {
		_, out, _ := exec(t, context.Background(), false, "", append(args, "--tasks", "--shard", fmt.Sprintf("%d/%d", k, n), "-o", "ndjson")...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if _, ok := eventTask(t, line); ok {
				got = append(got, line)
			}
		}
		if !slices.Equal(got, want[k]) {
			t.Errorf("%s: shard %d/%d's events\n%s\nthe single run's of its tasks\n%s", name, k, n, strings.Join(got, "\n"), strings.Join(want[k], "\n"))
		}
	}
	return n
}

// eventTask is the task of an ndjson event line; false for the summary.
func eventTask(t *testing.T, line string) (int, bool) {
	t.Helper()
	var ev struct {
		Type string
		Task *int
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("bad event %q: %v", line, err)
	}
	if ev.Type == "summary" {
		return 0, false
	}
	if ev.Task == nil {
		t.Fatalf("event without a task: %s", line)
	}
	return *ev.Task, true
}

// failure is the "failed" object of a JSON summary, as text.
func failure(summary string) string {
	_, f, _ := strings.Cut(summary, `"failed":`)
	f, _, _ = strings.Cut(f, "}")
	return f
}

// writeRandomTasks writes a random capture of 2 to 4 topics of 1 to 7
// partitions: records whose clocks claim records of their own partition
// and others (claims beyond what is written stay held, two records that
// claim each other make a cycle), some undecodable, in a random order of
// the channels. It returns a random --scope (none for every channel) that
// may leave a topic out, whose records are then skipped, and --start
// positions, below which records are dropped.
func writeRandomTasks(t *testing.T, seed uint64, path string) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 36))
	type channel struct {
		name string
		ch   clock.Channel
		next int64
	}
	var chans []*channel
	var topics []string
	for i := range 2 + rng.IntN(3) {
		name := fmt.Sprintf("t%d", i)
		topics = append(topics, name)
		var id clock.TopicID
		id[0], id[15] = 0x36, byte(i+1)
		for p := range 1 + rng.IntN(7) {
			chans = append(chans, &channel{name: name, ch: clock.Channel{Topic: id, Partition: int32(p)}})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cw := capture.NewWriter(f)
	corrupt := seed%3 == 0
	for i := range 40 + rng.IntN(200) {
		c := chans[rng.IntN(len(chans))]
		var entries []clock.Entry
		for range rng.IntN(3) {
			o := chans[rng.IntN(len(chans))]
			if rng.IntN(3) > 0 { // mostly a claim its task reads
				o = chans[rng.IntN(len(chans))]
				for _, d := range chans {
					if d.ch.Partition == c.ch.Partition && rng.IntN(2) == 0 {
						o = d
					}
				}
			}
			if o == c {
				continue
			}
			entries = append(entries, clock.Entry{Channel: o.ch, Position: max(0, o.next-2+rng.Int64N(5))})
		}
		value := clock.Encode(clock.MustNew(entries...))
		if corrupt && rng.IntN(30) == 0 {
			value = value[:1] // the version alone: truncated
		}
		it := &record.Item{Kind: record.KindRecord, Topic: c.name, TopicID: c.ch.Topic, Partition: c.ch.Partition,
			Offset: c.next, Timestamp: int64(1000 + i + rng.IntN(20)), HasTimestamp: true,
			Headers: []clock.Header{{Key: clock.HeaderCauses, Value: value}}}
		c.next += 1 + int64(rng.IntN(8)/7) // a gap now and then
		if err := cw.Write(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	var args []string
	if seed%3 == 1 {
		args = append(args, "--scope", strings.Join(topics[1:], ","))
	}
	for _, c := range chans { // starts: the records below are replays, dropped
		if c.ch.Partition > 0 && rng.IntN(3) == 0 && (seed%3 != 1 || c.name != topics[0]) {
			args = append(args, "--start", fmt.Sprintf("%s/%d=%d", c.name, c.ch.Partition, rng.Int64N(c.next+1)))
		}
	}
	return args
}

// TestMergeRefusesWhatIsNotTheSingleRun: summaries that are not every
// shard of one split run, once each, are refused (exit 1) rather than
// merged into a wrong answer.
func TestMergeRefusesWhatIsNotTheSingleRun(t *testing.T) {
	dir := t.TempDir()
	c := filepath.Join(dir, "random.ndjson")
	writeRandomTasks(t, 1, c)
	write := func(name string, args ...string) string {
		t.Helper()
		_, out, stderr := exec(t, context.Background(), false, "", append([]string{"-f", c, "-o", "json"}, args...)...)
		if out == "" {
			t.Fatalf("%v: %s", args, stderr)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s0, s1 := write("s0", "--tasks", "--shard", "0/2"), write("s1", "--tasks", "--shard", "1/2")
	r1 := write("r1", "--tasks", "--shard", "1/2", "--interleave", "channel")
	of3 := write("of3", "--tasks", "--shard", "1/3")
	single := write("single", "--tasks")
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte(`{"received":1,"extra":2}`), 0o600)
	cut := filepath.Join(dir, "cut")
	os.WriteFile(cut, []byte(`{"type":"deliver","seq":1,"channel":"orders/0","offset":0}`+"\n"), 0o600)
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{s0}, "missing shard 1/2"},
		{[]string{s0, s0}, "shard 0/2 given twice"},
		{[]string{s0, of3}, "of shard 1/3"},
		{[]string{s0, r1}, "interleaving"},
		{[]string{s0, single}, "of no shard"},
		{[]string{s0, bad}, "not a replay summary"},
		{[]string{s0, cut}, "not the summary"},
		{[]string{s0, filepath.Join(dir, "none")}, "no such file"},
	} {
		err, out, _ := exec(t, context.Background(), false, "", append([]string{"--merge"}, tc.files...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || out != "" {
			t.Errorf("--merge %v: %v, output %q; want an error saying %q", tc.files, err, out, tc.want)
		}
		var ue *cmdutil.UsageError
		if errors.As(err, &ue) {
			t.Errorf("--merge %v: a usage error; a bad file is bad input (exit 1)", tc.files)
		}
	}
	err, want, _ := exec(t, context.Background(), false, "", "-f", c, "--tasks", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	// The last line of -o ndjson, the summary event, is a summary too.
	_, events, _ := exec(t, context.Background(), false, "", "-f", c, "--tasks", "--shard", "0/2", "-o", "ndjson")
	n0 := filepath.Join(dir, "n0")
	os.WriteFile(n0, []byte(events), 0o600)
	for _, files := range [][]string{{s1, s0}, {n0, s1}} {
		if err, got, _ := exec(t, context.Background(), false, "", append([]string{"--merge"}, files...)...); err != nil || got != want {
			t.Errorf("--merge %v: %v\n%s\nwant\n%s", files, err, got, want)
		}
	}
}

// TestShardUsage: a bad K/N, --shard without --tasks or with --app, and
// replay flags beside --merge are usage errors (exit 2).
func TestShardUsage(t *testing.T) {
	c := testutil.Testdata("captures", "basic.ndjson")
	for _, args := range [][]string{
		{"-f", c, "--tasks", "--shard", "1"},
		{"-f", c, "--tasks", "--shard", "a/b"},
		{"-f", c, "--tasks", "--shard", "2/2"},
		{"-f", c, "--tasks", "--shard", "-1/2"},
		{"-f", c, "--tasks", "--shard", "0/0"},
		{"-f", c, "--tasks", "--shard", "0/-3"},
		{"-f", c, "--tasks", "--shard", ""},
		{"-f", c, "--shard", "0/2"},
		{"--app", "notifier", "--shard", "0/2"},
		{"--merge"},
		{"--merge", c, "-f", c},
		{"--merge", c, "--tasks"},
		{"--merge", c, "--shard", "0/1"},
		{"--merge", c, "-o", "text"},
		{"--merge", c, "-o", "ndjson"},
	} {
		err, _, _ := exec(t, context.Background(), false, "", args...)
		var ue *cmdutil.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestShardBrokerRange: over a broker range each shard fetches only its
// own tasks' partitions, and the merge is the single run, for N up to
// more than the partitions (a shard with none reads nothing).
func TestShardBrokerRange(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(5, "orders"), kfake.SeedTopics(3, "payments"))
	var recs []*kgo.Record
	for i := range 60 {
		topic := "orders"
		if i%3 == 0 {
			topic = "payments"
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i*7) % 3, Value: []byte("v")})
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: int32(i % 5), Value: []byte("w")})
	}
	kafkatest.Produce(t, c, recs...)
	addr := c.ListenAddrs()[0]
	run := func(args ...string) (error, string) {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		cmd := cmdutiltest.AsRoot(NewCmdReplay(cmdutiltest.Factory(ios, addr), nil))
		cmd.SetArgs(append([]string{"-t", "orders", "-t", "payments", "--tasks", "-o", "json"}, args...))
		err := cmd.ExecuteContext(context.Background())
		if err != nil {
			t.Logf("%v: %s", args, errOut)
		}
		return err, out.String()
	}
	err, single := run()
	if err != nil || !strings.Contains(single, `"received":120`) {
		t.Fatalf("single run: %v\n%s", err, single)
	}
	dir := t.TempDir()
	for _, n := range []int{2, 3, 7} {
		var files []string
		for k := range n {
			err, out := run("--shard", fmt.Sprintf("%d/%d", k, n))
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range regexp.MustCompile(`"channel":"[a-z]+/(\d+)"`).FindAllStringSubmatch(out, -1) {
				if p, _ := strconv.Atoi(ch[1]); p%n != k {
					t.Errorf("shard %d/%d read partition %d", k, n, p)
				}
			}
			path := filepath.Join(dir, fmt.Sprintf("%d-%d.json", k, n))
			os.WriteFile(path, []byte(out), 0o600)
			files = append(files, path)
		}
		err, merged, _ := exec(t, context.Background(), false, "", append([]string{"--merge"}, files...)...)
		if err != nil || merged != single {
			t.Errorf("N=%d: %v: merged\n%s\nsingle\n%s", n, err, merged, single)
		}
	}
}

// TestMergeFailOnHeld: --merge --fail-on-held exits 3 when the merged
// summary holds records, as the single run does, after writing it.
func TestMergeFailOnHeld(t *testing.T) {
	c := testutil.Testdata("captures", "basic.ndjson") // 3 records held at the end
	dir := t.TempDir()
	var files []string
	for k := range 2 {
		_, out, _ := exec(t, context.Background(), false, "", "-f", c, "--tasks", "--shard", fmt.Sprintf("%d/2", k), "-o", "json")
		path := filepath.Join(dir, fmt.Sprint(k))
		os.WriteFile(path, []byte(out), 0o600)
		files = append(files, path)
	}
	err, out, _ := exec(t, context.Background(), false, "", append([]string{"--merge", "--fail-on-held"}, files...)...)
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitHeld || !strings.Contains(out, `"held":3`) {
		t.Errorf("--merge --fail-on-held: %v, output %s; want exit %d after the summary", err, out, cmdutil.ExitHeld)
	}
}
