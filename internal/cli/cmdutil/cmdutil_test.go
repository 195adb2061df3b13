package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/record"
)

var (
	idA = clock.TopicID{0xa}
	idB = clock.TopicID{0xb}
	idC = clock.TopicID{0xc} // in the input, with no name
)

func names(t *testing.T) *clock.Names {
	t.Helper()
	n := &clock.Names{}
	if err := n.Add("a", idA); err != nil {
		t.Fatal(err)
	}
	if err := n.Add("b", idB); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestResolveScope(t *testing.T) {
	chans := []clock.Channel{{Topic: idA, Partition: 0}, {Topic: idA, Partition: 1}, {Topic: idB, Partition: 0}, {Topic: idC, Partition: 2}}
	for _, tc := range []struct {
		name         string
		scope, start []string
		want         string // channels, then starts
		usage        string // a usage error containing this
	}{
		{name: "default is every input channel", want: "a/0 a/1 b/0 " + idC.String() + "/2 |"},
		{name: "bare topic is its input partitions", scope: []string{"a"}, want: "a/0 a/1 |"},
		{name: "a partition absent from the input", scope: []string{"b/3", "a/1"}, want: "b/3 a/1 |"},
		{name: "duplicates once", scope: []string{"a/1", "a", "a/1"}, want: "a/1 a/0 |"},
		{name: "starts", scope: []string{"a"}, start: []string{"a/1=7", "a/0=0"}, want: "a/0 a/1 | a/0=0 a/1=7"},
		{name: "start outside the scope", scope: []string{"a"}, start: []string{"b/0=3"}, usage: "--start: channel b/0 is not in the scope"},
		{name: "unknown topic", scope: []string{"nope"}, usage: "--scope"},
		{name: "topic absent from the input", scope: []string{"b/0", "c"}, usage: "--scope"},
		{name: "a named UUID absent from the input", scope: []string{idB.String() + "/4"}, want: "b/4 |"},
		{name: "a UUID of the input without a name", scope: []string{idC.String() + "/2"}, want: idC.String() + "/2 |"},
		{name: "mistyped UUID", scope: []string{"0d000000-0000-0000-0000-000000000000/0"}, usage: "topic UUID 0d000000-0000-0000-0000-000000000000 is not in the input and has no name"},
		{name: "mistyped bare UUID", scope: []string{"0d000000-0000-0000-0000-000000000000"}, usage: "has no partition in the input"},
		{name: "malformed UUID", scope: []string{"0a00000-0000-0000-0000-000000000000/0"}, usage: "unknown topic"},
		{name: "bad start", start: []string{"a/0"}, usage: "want CHANNEL=OFFSET"},
		{name: "negative start", start: []string{"a/0=-1"}, usage: "non-negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := names(t)
			got, err := input.ResolveScope(tc.scope, tc.start, chans, n)
			if tc.usage != "" {
				if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("error %v, want a usage error with %q", err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, ch := range got.Channels {
				parts = append(parts, n.Channel(ch))
			}
			parts = append(parts, "|")
			var starts []string
			for ch, off := range got.Starts {
				starts = append(starts, fmt.Sprintf("%s=%d", n.Channel(ch), off))
			}
			slices.Sort(starts)
			if s := strings.Join(append(parts, starts...), " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

const twoTopics = `{"topic":"a","topic_id":"0a000000-0000-0000-0000-000000000000","partition":1,"position":0}
{"topic":"a","topic_id":"0a000000-0000-0000-0000-000000000000","partition":1,"offset":0,"headers":[]}
{"topic":"b","topic_id":"0b000000-0000-0000-0000-000000000000","partition":0,"offset":4,"headers":[]}
`

// TestOpenCapture reads a capture from a file and from stdin: the first
// reading learns its channels and names, and every Open reads it again
// from the start.
func TestOpenCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.ndjson")
	if err := os.WriteFile(path, []byte(twoTopics), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, wantName string }{
		{"file", path, path},
		{"stdin", "-", "stdin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, in, _, _ := iostreams.Test()
			in.WriteString(twoTopics)
			n := &clock.Names{}
			c, err := input.OpenCapture(context.Background(), ios, tc.path, capture.DefaultMaxLineSize, n)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Name != tc.wantName {
				t.Errorf("name %q, want %q", c.Name, tc.wantName)
			}
			want := []clock.Channel{{Topic: idA, Partition: 1}, {Topic: idB, Partition: 0}}
			if !slices.Equal(c.Channels, want) {
				t.Errorf("channels %v, want %v", c.Channels, want)
			}
			if id, ok := n.ID("b"); !ok || id != idB {
				t.Errorf("the name of b was not learnt: %v %v", id, ok)
			}
			for range 2 {
				rd, err := c.Open()
				if err != nil {
					t.Fatal(err)
				}
				var offsets []int64
				for {
					it, err := rd.Next()
					if err != nil {
						break
					}
					offsets = append(offsets, it.Offset)
				}
				if fmt.Sprint(offsets) != "[0 0 4]" {
					t.Errorf("a reading gave offsets %v, want [0 0 4]", offsets)
				}
			}
		})
	}
}

func TestOpenCaptureErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.ndjson")
	if err := os.WriteFile(bad, []byte(twoTopics+"{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	_, err := input.OpenCapture(context.Background(), ios, bad, capture.DefaultMaxLineSize, &clock.Names{})
	if err == nil || !strings.HasPrefix(err.Error(), bad+": ") || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("malformed line: %v, want it named with the file and line 4", err)
	}
	if _, err := input.OpenCapture(context.Background(), ios, filepath.Join(dir, "missing"), capture.DefaultMaxLineSize, &clock.Names{}); err == nil {
		t.Error("a missing file opened")
	}
	// A name the capture contradicts (--topic-id a=UUID of b) is an error.
	n := &clock.Names{}
	if err := n.Add("a", idB); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.ndjson")
	if err := os.WriteFile(good, []byte(twoTopics), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := input.OpenCapture(context.Background(), ios, good, capture.DefaultMaxLineSize, n); err == nil {
		t.Error("a contradicted name was accepted")
	}
	// A cancelled context stops the first reading of stdin.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ios.In = blocking{}
	if _, err := input.OpenCapture(ctx, ios, "-", capture.DefaultMaxLineSize, &clock.Names{}); !errors.Is(err, engine.ErrInterrupted) && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// blocking is a stdin whose writer never writes.
type blocking struct{}

func (blocking) Read([]byte) (int, error) { select {} }

// cluster is a kfake cluster with topics a (2 partitions) and b (1), 3
// records on each partition, and group g committed at a/0=2.
func cluster(t *testing.T) (*Factory, *kfake.Cluster) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a"), kfake.SeedTopics(1, "b"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	for _, tp := range []struct {
		topic string
		part  int32
	}{{"a", 0}, {"a", 1}, {"b", 0}} {
		for i := range 3 {
			if err := w.ProduceSync(ctx, &kgo.Record{Topic: tp.topic, Partition: tp.part, Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "a", Partition: 0, At: 2})
	if _, err := kadm.NewClient(w).CommitOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{conn.EnvBrokers: c.ListenAddrs()[0]}
	ios, _, _, _ := iostreams.Test()
	return &Factory{IOStreams: ios, Conn: &conn.Options{}, Getenv: func(k string) string { return env[k] }, Now: time.Now}, c
}

// TestOpenRange opens broker ranges the way commands do: the broker's
// names join the command's, --from-group and then --start set the starts,
// and bad flags are usage errors.
func TestOpenRange(t *testing.T) {
	f, _ := cluster(t)
	ctx := context.Background()
	n := &clock.Names{}
	r, err := f.OpenRange(ctx, input.BrokerRead{
		Selection: input.Selection{Topics: []string{"a"}, Offsets: "start", FromGroup: "g"},
		Start:     []string{"a/1=1"},
		Names:     n,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ida, ok := n.ID("a")
	if !ok {
		t.Fatal("the broker's name of a was not learnt")
	}
	if _, ok := n.ID("b"); !ok {
		t.Error("the name of b, outside the range, was not learnt: clocks may name it")
	}
	a0, a1 := clock.Channel{Topic: ida, Partition: 0}, clock.Channel{Topic: ida, Partition: 1}
	if !slices.Equal(r.Channels, []clock.Channel{a0, a1}) || r.Ends[a0] != 3 || r.Ends[a1] != 3 {
		t.Fatalf("channels %v ends %v", r.Channels, r.Ends)
	}
	var got []string
	for {
		it, err := r.Next()
		if err != nil {
			break
		}
		got = append(got, fmt.Sprintf("%s@%d/%v", n.Channel(clock.Channel{Topic: it.TopicID, Partition: it.Partition}), it.Offset, it.Kind == record.KindRecord))
	}
	slices.Sort(got)
	// a/0 from the group's offset 2, a/1 from --start 1.
	want := "[a/0@2/false a/0@2/true a/0@3/false a/1@1/false a/1@1/true a/1@2/true a/1@3/false]"
	if fmt.Sprint(got) != want {
		t.Errorf("items %v\nwant  %v", got, want)
	}

	for _, tc := range []struct {
		read  input.BrokerRead
		usage bool
		text  string
	}{
		{input.BrokerRead{Selection: input.Selection{Topics: []string{"a/x"}, Offsets: "start"}}, true, "--topic"},
		{input.BrokerRead{Selection: input.Selection{Topics: []string{"a"}, Offsets: "sideways"}}, true, "--offsets"},
		{input.BrokerRead{Selection: input.Selection{Topics: []string{"a"}, Offsets: "start"}, Start: []string{"zz/0=1"}}, true, "--start"},
		{input.BrokerRead{Selection: input.Selection{Topics: []string{"a"}, Offsets: "start", FromGroup: "nobody"}}, false, "nobody"},
		{input.BrokerRead{Selection: input.Selection{Topics: []string{"nope"}, Offsets: "start"}}, false, "nope"},
	} {
		_, err := f.OpenRange(ctx, tc.read)
		if err == nil || (ExitCode(err) == ExitUsage) != tc.usage || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%+v: error %v, want usage %v naming %q", tc.read, err, tc.usage, tc.text)
		}
	}
	// --topic-id naming a topic with another UUID than the broker's.
	wrong := &clock.Names{}
	if err := wrong.Add("a", clock.TopicID{0xee}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.OpenRange(ctx, input.BrokerRead{Selection: input.Selection{Topics: []string{"a"}, Offsets: "start"}, Names: wrong}); err == nil || !strings.Contains(err.Error(), "--topic-id disagrees") {
		t.Errorf("wrong --topic-id: %v", err)
	}
}

// TestOpenFollow follows from --start and sees a record written later;
// an end in --offsets is a usage error.
func TestOpenFollow(t *testing.T) {
	f, c := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := &clock.Names{}
	fol, err := f.OpenFollow(ctx, input.BrokerRead{Selection: input.Selection{Topics: []string{"b"}, Offsets: "end"}, Start: []string{"b/0=2"}, Names: n,
		Options: []kafka.ReadOption{kafka.FetchWait(50 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	defer fol.Close()
	idb, _ := n.ID("b")
	if !slices.Equal(fol.Channels, []clock.Channel{{Topic: idb, Partition: 0}}) {
		t.Fatalf("channels %v", fol.Channels)
	}
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.ProduceSync(ctx, &kgo.Record{Topic: "b", Value: []byte("new")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		it, err := fol.Follower.Next(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%d/%v", it.Offset, it.Kind == record.KindRecord))
	}
	if fmt.Sprint(got) != "[2/false 2/true 3/true]" {
		t.Errorf("items %v, want the start at 2, record 2, then the new record 3", got)
	}

	_, err = f.OpenFollow(ctx, input.BrokerRead{Selection: input.Selection{Topics: []string{"b"}, Offsets: "1:2"}})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "without end") {
		t.Errorf("follow with an end: %v", err)
	}
}

// TestByteSizeBounds: a size is a whole positive number of bytes below
// 2^62; NaN, a fraction of a byte and an overflow are refused rather
// than converted to whatever the platform makes of them.
func TestByteSizeBounds(t *testing.T) {
	for s, want := range map[string]int64{"1": 1, "512MiB": 512 << 20, "1.5KiB": 1536, "2GB": 2e9} {
		var b ByteSize
		if err := b.Set(s); err != nil || int64(b) != want {
			t.Errorf("%q: %d, %v; want %d", s, b, err, want)
		}
	}
	for _, s := range []string{"0", "-1", "0.5", "0.1B", "NaN", "nanMiB", "Inf", "4194304TiB", "1e300"} {
		var b ByteSize
		if err := b.Set(s); err == nil {
			t.Errorf("%q accepted as %d", s, b)
		}
	}
}

// TestBashScriptMatchesListElements: the bash script keeps a candidate
// whose plain form starts with the word typed (orders,payments for
// orders,pay, which printf %q writes orders\,payments), and a cobra whose
// script lacks the line it fixes is an error, not a silent regression.
func TestBashScriptMatchesListElements(t *testing.T) {
	var b strings.Builder
	if err := WriteCompletion(&cobra.Command{Use: "x"}, "bash", &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), bashListMatchFixed) || strings.Contains(b.String(), bashListMatch) {
		t.Errorf("the bash script does not match candidates by their plain form")
	}
	if _, err := fixBashListMatch("#!/bin/bash\n"); err == nil {
		t.Error("a script without the candidate match was accepted")
	}
}
