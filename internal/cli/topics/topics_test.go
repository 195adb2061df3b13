package topics

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGoldens: the table on a terminal 80 and 200 columns wide and in a
// pipe (render.Table's rule: plain columns, numbers right-aligned; at 80
// columns the topic UUID is left out and said so, nothing is wider than
// the terminal; in a pipe nothing is left out).
func TestGoldens(t *testing.T) {
	id := func(b byte) clock.TopicID {
		var u clock.TopicID
		for i := range u {
			u[i] = b + byte(i)
		}
		return u
	}
	infos := []kafka.TopicInfo{
		{Name: "notifier-__parsley.ordering-changelog", ID: id(0x10), Partitions: []kafka.PartitionInfo{
			{Partition: 0, LogStart: 0, HighWatermark: 1099, LastStable: 1099}, {Partition: 1, LogStart: 12, HighWatermark: 554, LastStable: 550}}},
		{Name: "orders", ID: id(0x60), Partitions: []kafka.PartitionInfo{
			{Partition: 0, LogStart: 0, HighWatermark: 145, LastStable: 145}, {Partition: 10, LogStart: 3, HighWatermark: 99, LastStable: 99}}},
	}
	for _, tc := range []struct {
		golden string
		width  int
	}{{"tty80.golden", 80}, {"tty200.golden", 200}, {"pipe.golden", 0}} {
		t.Run(tc.golden, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetTTY(tc.width > 0)
			ios.Width = tc.width
			if err := write(&Options{IO: ios, Output: "text"}, infos); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, *update, tc.golden, out.String())
			for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				if w := ansi.StringWidth(l); tc.width > 0 && w > tc.width {
					t.Errorf("%d columns wide at %d: %q", w, tc.width, l)
				}
				if tc.width != 80 && len(strings.Fields(l)) != 6 {
					t.Errorf("not six fields: %q", l)
				}
			}
		})
	}
}

func command(f *cmdutil.Factory, runF func(context.Context, *Options) error, args ...string) error {
	cmd := NewCmdTopics(f, runF)
	return cmdutiltest.Execute(cmd, args...)
}

func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	keep := func(_ context.Context, o *Options) error { got = o; return nil }
	if err := command(cmdutiltest.Factory(ios, ""), keep, "orders", "payments", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Names, ",") != "orders,payments" || got.Output != "json" || got.Dial == nil {
		t.Errorf("options %+v", got)
	}
	if err := command(cmdutiltest.Factory(ios, ""), keep); err != nil || got.Output != "text" || len(got.Names) != 0 {
		t.Errorf("defaults %+v %v", got, err)
	}
	err := command(cmdutiltest.Factory(ios, ""), keep, "-o", "ndjson")
	var ue *cmdutil.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("-o ndjson: %v", err)
	}
}

// TestRun lists a cluster's topics as a table (on a terminal and in a
// pipe alike) and as JSON, with each partition's offsets.
func TestRun(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(2, "orders"), kfake.SeedTopics(1, "payments"))
	kafkatest.Produce(t, c, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("a")}, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("b")},
		&kgo.Record{Topic: "payments", Partition: 0, Value: []byte("c")})
	addr := c.ListenAddrs()[0]

	for _, tty := range []bool{true, false} {
		ios, _, out, _ := iostreams.Test()
		ios.SetTTY(tty)
		ios.Width = 200
		if err := command(cmdutiltest.Factory(ios, addr), nil); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		rows := 0
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) == 6 && (f[0] == "orders" || f[0] == "payments") {
				rows++
				if f[0] == "orders" && f[2] == "1" && (f[3] != "0" || f[4] != "2" || f[5] != "2") {
					t.Errorf("orders/1 row %q: want log start 0, end 2, last stable 2", line)
				}
			}
		}
		if rows != 3 || strings.Contains(text, "\x1b[") {
			t.Errorf("tty %v: %d partition rows, want 3, and no escapes:\n%s", tty, rows, text)
		}
	}

	ios, _, out, _ := iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, addr), nil, "payments", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got []jsonTopic
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != 1 || got[0].Name != "payments" || len(got[0].TopicID) != 36 || len(got[0].Partitions) != 1 ||
		got[0].Partitions[0].HighWatermark != 1 || got[0].Partitions[0].LastStable != 1 {
		t.Errorf("json %+v", got)
	}

	// An unknown topic is an error naming it; no broker is an error too.
	ios, _, _, _ = iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, addr), nil, "nope"); !errors.Is(err, kafka.ErrUnknownTopic) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown topic: %v", err)
	}
	if err := command(cmdutiltest.Factory(ios, ""), nil); err == nil || !strings.Contains(err.Error(), "no brokers") {
		t.Errorf("no brokers: %v", err)
	}
}

func TestNoTopics(t *testing.T) {
	c := kafkatest.Cluster(t)
	ios, _, out, _ := iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, c.ListenAddrs()[0]), nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "No topics.\n" {
		t.Errorf("got %q", out)
	}
	ios, _, out, _ = iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, c.ListenAddrs()[0]), nil, "-o", "json"); err != nil || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("json: %q %v", out, err)
	}
}
