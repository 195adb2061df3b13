package capture

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/record"
)

// readStopped reads a capture file to its end: its items as "kind
// channel@offset" and its stopped line (nil when it has none).
func readStopped(t *testing.T, path string) ([]string, *capture.Stopped) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd := capture.NewReader(strings.NewReader(string(data)))
	for {
		if _, err := rd.Next(); err != nil {
			if err != io.EOF {
				t.Fatalf("%s does not read back: %v", path, err)
			}
			return lines(t, data), rd.Stopped()
		}
	}
}

// onlyFile fails unless dir holds exactly the file name: no temporary
// file stays beside a capture.
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != name {
		t.Errorf("%s holds %q, want only %q", dir, got, name)
	}
}

// source yields items, then calls at's function for its error.
type source struct {
	items []*record.Item
	end   func() error
}

func (s *source) Next() (*record.Item, error) {
	if len(s.items) == 0 {
		return nil, s.end()
	}
	it := s.items[0]
	s.items = s.items[1:]
	return it, nil
}

// TestCaptureInterruptedMidRead: a capture whose context is cancelled
// after some records keeps them, in FILE itself, with a last line saying
// it was interrupted and where each unfinished channel stood; it exits
// 130, and nothing else is left in the directory. An existing FILE is
// replaced only then, never half-written.
func TestCaptureInterruptedMidRead(t *testing.T) {
	id := clock.TopicID{15: 1}
	names := &clock.Names{}
	names.Add("orders", id)
	a, b := clock.Channel{Topic: id, Partition: 0}, clock.Channel{Topic: id, Partition: 1}
	at := func(k record.Kind, p int32, o int64) *record.Item {
		return &record.Item{Kind: k, Topic: "orders", TopicID: id, Partition: p, Offset: o}
	}
	ctx, cancel := context.WithCancel(context.Background())
	src := &source{
		items: []*record.Item{at(record.KindPosition, 0, 0), at(record.KindRecord, 0, 0), at(record.KindRecord, 0, 1),
			at(record.KindPosition, 0, 2), at(record.KindPosition, 1, 5), at(record.KindRecord, 1, 5)},
		end: func() error { cancel(); <-ctx.Done(); return ctx.Err() }, // Ctrl-C while a fetch is out
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "c.ndjson")
	os.WriteFile(path, []byte("an older capture\n"), 0o644)
	ios, _, _, _ := iostreams.Test()
	opts := &Options{IO: ios, InputFlags: cmdutil.InputFlags{Spec: input.Spec{Names: names}}, Now: time.Now}
	err := toFile(path, func(w io.Writer) error {
		_, err := write(ctx, opts, w, src, []clock.Channel{a, b}, map[clock.Channel]int64{a: 2, b: 9})
		return err
	})
	if cmdutil.ExitCode(err) != cmdutil.ExitInterrupted || !strings.Contains(err.Error(), "interrupted: capture stopped after 3 records") {
		t.Fatalf("error %v (exit %d), want interrupted after 3 records", err, cmdutil.ExitCode(err))
	}
	items, stop := readStopped(t, path)
	if len(items) != 6 || stop == nil {
		t.Fatalf("items %q, stopped %+v: want the 6 items and a stopped line", items, stop)
	}
	if stop.Reason != "interrupted" || stop.Records != 3 || len(stop.Channels) != 1 || stop.Channels[0].String() != "orders/1 at 6 of 9" {
		t.Errorf("stopped line %+v, want interrupted, 3 records, orders/1 at 6 of 9 (orders/0 finished)", stop)
	}
	onlyFile(t, dir, "c.ndjson")
}

// TestCaptureWriteFailureKeepsNothing: when the capture cannot be written
// (a full disk), neither FILE nor a temporary file is left, and an older
// FILE stays as it was.
func TestCaptureWriteFailureKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.ndjson")
	os.WriteFile(path, []byte("older\n"), 0o644)
	full := errors.New("no space left on device")
	if err := toFile(path, func(io.Writer) error { return full }); !errors.Is(err, full) {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "older\n" {
		t.Errorf("the older file became %q", b)
	}
	onlyFile(t, dir, "c.ndjson")
	os.Remove(path)
	toFile(path, func(io.Writer) error { return full })
	onlyFile(t, dir, "")
}

// TestCaptureBrokerGone: a partition whose broker stops answering it fails
// the capture (exit 1) after the request timeout, naming the channel; the
// file keeps what was read, the finished partition whole, and ends in a
// stopped line naming the one that was not finished.
func TestCaptureBrokerGone(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(2, "orders"))
	for i := range 6 {
		kafkatest.Produce(t, c, &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte{byte(i)}})
	}
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "orders", Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1})
	dir := t.TempDir()
	path := filepath.Join(dir, "c.ndjson")
	ios, _, _, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, c.ListenAddrs()[0])
	f.Getenv = func(k string) string {
		switch k {
		case conn.EnvBrokers:
			return c.ListenAddrs()[0]
		case conn.EnvRequestTimeout:
			return "1s"
		}
		return ""
	}
	err := command(f, nil, "-t", "orders", "--offsets", "start", "-f", path)
	if cmdutil.ExitCode(err) != 1 || !strings.Contains(err.Error(), "orders/1") || !strings.Contains(err.Error(), "a last line says where it stopped") {
		t.Fatalf("error %v (exit %d)", err, cmdutil.ExitCode(err))
	}
	items, stop := readStopped(t, path)
	if stop == nil || len(stop.Channels) != 1 || !strings.HasPrefix(stop.Channels[0].String(), "orders/1 ") || !strings.Contains(stop.Reason, "NOT_LEADER_FOR_PARTITION") {
		t.Fatalf("stopped line %+v (items %q)", stop, items)
	}
	if strings.Count(strings.Join(items, " "), "record orders/0@") != 3 {
		t.Errorf("orders/0 not kept whole: %q", items)
	}
	onlyFile(t, dir, "c.ndjson")
}
