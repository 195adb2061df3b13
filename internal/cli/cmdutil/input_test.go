package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
)

// inputCmd is a command with the input flags of spec, parsed from args.
func inputCmd(t *testing.T, f *Factory, spec InputSpec, args ...string) (*cobra.Command, *InputFlags, error) {
	t.Helper()
	in := &InputFlags{}
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	AddInputFlags(cmd, f, in, spec)
	return cmd, in, cmd.ParseFlags(args)
}

// TestInputFlags registers what the spec names, no more, and checks the
// combinations: one source, --app alone, --interleave's default by source.
func TestInputFlags(t *testing.T) {
	f, _ := cluster(t)
	full := InputSpec{InputUsage: "in", ScopeUsage: "scope", StartUsage: "start", Interleave: true, Tasks: true, App: true}
	cmd, _, _ := inputCmd(t, f, InputSpec{InputUsage: "in"})
	for name, want := range map[string]bool{"input": true, "topic": true, "offsets": true, "from-group": true, "allow-gaps": true,
		"max-header-size": true, "max-line-size": true, "topic-id": true,
		"scope": false, "start": false, "interleave": false, "tasks": false, "app": false} {
		if got := cmd.Flags().Lookup(name) != nil; got != want {
			t.Errorf("a minimal spec: --%s registered %v, want %v", name, got, want)
		}
	}
	cmd, _, _ = inputCmd(t, f, full)
	for _, name := range []string{"scope", "start", "interleave", "tasks", "app", "txn-wait"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("the full spec: --%s not registered", name)
		}
	}

	for _, tc := range []struct {
		spec       InputSpec
		args       []string
		usage      string // "" for none
		interleave replay.Mode
	}{
		{full, []string{"-f", "c.ndjson"}, "", replay.File},
		{full, []string{"-t", "a"}, "", replay.Timestamp},
		{full, []string{"-t", "a", "--interleave", "file"}, "", replay.File},
		{full, []string{"-f", "c.ndjson", "--interleave", "channel"}, "", replay.ByChannel},
		{full, []string{"-f", "c.ndjson", "--interleave", "sideways"}, "--interleave", 0},
		{full, nil, "give one source", 0},
		{full, []string{"-f", "c.ndjson", "-t", "a"}, "give one source", 0},
		{full, []string{"-f", "c.ndjson", "--offsets", "end"}, "--offsets reads from the brokers", 0},
		{full, []string{"--app", "notifier"}, "", replay.File},
		{full, []string{"--app", "notifier", "--scope", "a"}, "drop --scope", 0},
		// --from-group may name a Parsley process, read as --app: the wait
		// for its changelog is given as --app's.
		{full, []string{"-t", "a", "--from-group", "g", "--txn-wait", "1s"}, "", replay.Timestamp},
		{full, []string{"-t", "a", "--txn-wait", "1s"}, "give --app", 0},
		{full, []string{"-t", "a", "--from-group", "g", "--txn-wait", "-1s"}, "must not be negative", 0},
		{InputSpec{Optional: true}, nil, "", 0},
		{InputSpec{Optional: true}, []string{"--from-group", "g"}, "--from-group reads from the brokers", 0},
	} {
		cmd, in, err := inputCmd(t, f, tc.spec, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		err = in.Check(cmd.Flags())
		var ue *UsageError
		switch {
		case tc.usage == "" && err != nil:
			t.Errorf("%v: %v, want no error", tc.args, err)
		case tc.usage != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage)):
			t.Errorf("%v: %v, want a usage error naming %q", tc.args, err, tc.usage)
		case tc.usage == "" && in.Interleave.Mode != tc.interleave:
			t.Errorf("%v: interleave %v, want %v", tc.args, in.Interleave, tc.interleave)
		}
	}
	// --topic-id fills the names the input is opened with.
	cmd, in, err := inputCmd(t, f, full, "--topic-id", "a="+idA.String())
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := in.Names.ID("a"); !ok || id != idA || cmd.Flags().Lookup("topic-id").Value.String() == "" {
		t.Errorf("--topic-id a=%s: names have %v %v", idA, id, ok)
	}
}

// drain reads src to its end, naming each item CHANNEL@OFFSET/KIND.
func drain(t *testing.T, src replay.Source, n *clock.Names) []string {
	t.Helper()
	var got []string
	for {
		it, err := src.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s@%d/%d", n.Channel(clock.Channel{Topic: it.TopicID, Partition: it.Partition}), it.Offset, it.Kind))
	}
}

// TestOpenInputCapture opens a capture as one source: its name and
// channels from the first reading, its items streamed, or — read again —
// no stream and a Capture to open as often as needed.
func TestOpenInputCapture(t *testing.T) {
	f, _ := cluster(t)
	path := filepath.Join(t.TempDir(), "c.ndjson")
	if err := os.WriteFile(path, []byte(twoTopics), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := &InputFlags{Spec: input.Spec{Input: path, MaxLineSize: 1 << 20, Names: &clock.Names{}}}
	var observed int
	src, err := f.OpenInput(ctx, in, input.Read{Observe: func(*record.Item) error { observed++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	want := []clock.Channel{{Topic: idA, Partition: 1}, {Topic: idB, Partition: 0}}
	if src.Name != path || !slices.Equal(src.Channels, want) || src.Interleaved || src.Range != nil || src.Capture == nil {
		t.Errorf("source %q %v interleaved %v range %v capture %v", src.Name, src.Channels, src.Interleaved, src.Range, src.Capture)
	}
	if id, ok := src.Names.ID("b"); !ok || id != idB {
		t.Errorf("the source's names lack the capture's b: %v %v", id, ok)
	}
	if observed != 3 {
		t.Errorf("the first reading showed %d items to Observe, want 3", observed)
	}
	if got := fmt.Sprint(drain(t, src, in.Names)); got != "[a/1@0/2 a/1@0/1 b/0@4/1]" {
		t.Errorf("items %v", got)
	}
	src.Close()

	src, err = f.OpenInput(ctx, in, input.Read{Reread: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Next(); err == nil || !strings.Contains(err.Error(), "Reread") {
		t.Errorf("Next on a source opened to be read again: %v", err)
	}
	for range 2 {
		rd, err := src.Capture.Open()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(drain(t, rd, in.Names)); got != 3 {
			t.Errorf("a reading gave %d items, want 3", got)
		}
	}
}

// TestOpenInputRange opens a broker range as one source: streamed (with
// log facts when asked, merged by timestamp when --interleave says), or
// spooled once for a command that reads it again — the spool unlinked as
// soon as it is created, so that the temporary directory holds no
// causalctl-range-* file while the command reads it (a kill -9 leaves
// none), the range told to OnRange before any of it is read.
func TestOpenInputRange(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f, _ := cluster(t)
	ctx := context.Background()
	in := &InputFlags{Spec: input.Spec{Range: input.Selection{Topics: []string{"a/1", "b"}, Offsets: "start"}, Start: []string{"b/0=2"},
		MaxLineSize: 1 << 20, Names: &clock.Names{}, Interleave: replay.Interleave{Mode: replay.Timestamp}}}
	src, err := f.OpenInput(ctx, in, input.Read{LogFacts: true})
	if err != nil {
		t.Fatal(err)
	}
	if src.Name != "broker range" || len(src.Channels) != 2 || !src.Interleaved || src.Range == nil || src.Capture != nil {
		t.Errorf("source %q %v interleaved %v range %v capture %v", src.Name, src.Channels, src.Interleaved, src.Range, src.Capture)
	}
	if _, ok := src.Names.ID("a"); !ok {
		t.Error("the source's names lack the cluster's a")
	}
	got := drain(t, src, in.Names)
	src.Close()
	kinds := map[record.Kind]int{}
	for _, g := range got {
		kinds[record.Kind(g[len(g)-1]-'0')]++
	}
	// a/1 from 0, b/0 from --start 2: four records, and a log-facts item
	// per channel.
	if kinds[record.KindRecord] != 4 || kinds[record.KindLogFacts] != 2 {
		t.Errorf("items %v: want 4 records and 2 log facts", got)
	}

	var told *input.Range
	in.Interleave = replay.Interleave{}
	src, err = f.OpenInput(ctx, in, input.Read{Reread: true, OnRange: func(_ context.Context, r *input.Range) error { told = r; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if told == nil || src.Name != "broker range" || src.Range != nil || src.Capture == nil || len(src.Channels) != 2 {
		t.Fatalf("spooled: told %v, source %q range %v capture %v channels %v", told, src.Name, src.Range, src.Capture, src.Channels)
	}
	for range 2 {
		rd, err := src.Capture.Open()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(drain(t, rd, in.Names)); n != 8 { // 4 records, 2 start and 2 end positions: no facts asked
			t.Errorf("a reading of the spool gave %d items, want 8", n)
		}
		if runtime.GOOS != "windows" { // Close removes it there
			emptyDir(t, tmp, "while the spool is read")
		}
	}
	spooled := src.Capture
	src.Close()
	if rd, err := spooled.Open(); err == nil {
		if _, err := rd.Next(); err == nil {
			t.Error("the spool still reads after Close")
		}
	}
	emptyDir(t, tmp, "after Close")

	refused := errors.New("refused")
	if _, err := f.OpenInput(ctx, in, input.Read{OnRange: func(context.Context, *input.Range) error { return refused }}); !errors.Is(err, refused) {
		t.Errorf("an OnRange error: %v", err)
	}
}

// TestWhenInterrupted: an interruption, however wrapped, is exit 130 with
// the command's account; any other error passes unchanged.
func TestWhenInterrupted(t *testing.T) {
	for _, err := range []error{fmt.Errorf("c.ndjson: %w", replay.ErrInterrupted), fmt.Errorf("dial: %w", context.Canceled)} {
		got := WhenInterrupted(err, "interrupted before the audit ended")
		if ExitCode(got) != ExitInterrupted || got.Error() != "interrupted before the audit ended" {
			t.Errorf("%v: %v (exit %d)", err, got, ExitCode(got))
		}
	}
	other := errors.New("line 3: bad")
	if got := WhenInterrupted(other, "x"); got != other {
		t.Errorf("a plain error became %v", got)
	}
	if got := Interrupted("interrupted after 4 records"); ExitCode(got) != ExitInterrupted || got.Error() != "interrupted after 4 records" {
		t.Errorf("Interrupted: %v (exit %d)", got, ExitCode(got))
	}
}

// ObserveClocks shows Observe every record's headers; without it the first
// reading follows them without decoding.
func TestOpenInputObserveClocks(t *testing.T) {
	f, _ := cluster(t)
	var b strings.Builder
	w := capture.NewWriter(&b)
	hdr := []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: idB}, Position: 3}))}}
	if err := w.Write(&record.Item{Kind: record.KindRecord, Topic: "a", TopicID: idA, Headers: hdr, Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.ndjson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, clocks := range []bool{false, true} {
		in := &InputFlags{Spec: input.Spec{Input: path, MaxLineSize: 1 << 20, Names: &clock.Names{}}}
		var got []clock.Header
		var value []byte
		src, err := f.OpenInput(context.Background(), in, input.Read{Reread: true, ObserveClocks: clocks, Observe: func(it *record.Item) error {
			got, value = slices.Clone(it.Headers), it.Value
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		src.Close()
		if want := clocks; (len(got) == 1 && bytes.Equal(got[0].Value, hdr[0].Value)) != want || value != nil {
			t.Errorf("ObserveClocks %v: Observe saw headers %v, value %q; want headers %v, no value", clocks, got, value, want)
		}
	}
}
