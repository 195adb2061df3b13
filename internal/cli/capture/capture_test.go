package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
)

func command(f *cmdutil.Factory, runF func(context.Context, *Options) error, args ...string) error {
	return cmdutiltest.Execute(NewCmdCapture(f, runF), args...)
}

func TestFlags(t *testing.T) {
	var got *Options
	keep := func(_ context.Context, o *Options) error { got = o; return nil }
	ios, _, _, _ := iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, ""), keep, "-t", "orders", "-t", "payments/1", "--offsets", "-5", "--from-group", "g", "--start", "orders/0=3", "-f", "x.ndjson"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Range.Topics, " ") != "orders payments/1" || got.Range.Offsets != "-5" || got.Range.FromGroup != "g" ||
		strings.Join(got.Start, ",") != "orders/0=3" || got.File != "x.ndjson" || got.OpenInput == nil {
		t.Errorf("options %+v", got)
	}
	for _, tc := range []struct {
		tty  bool
		args []string
		want string
	}{
		{false, nil, "--topic"},
		{true, []string{"-t", "orders"}, "refusing to write a capture to a terminal"},
	} {
		ios, _, _, _ := iostreams.Test()
		ios.SetTTY(tc.tty)
		err := command(cmdutiltest.Factory(ios, ""), keep, tc.args...)
		var ue *cmdutil.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	// On a terminal with -f the capture goes to the file.
	ios, _, _, _ = iostreams.Test()
	ios.SetTTY(true)
	if err := command(cmdutiltest.Factory(ios, ""), keep, "-t", "orders", "-f", "x.ndjson"); err != nil {
		t.Error(err)
	}
}

// lines reads a capture back: one "kind topic/partition@offset" per item.
func lines(t *testing.T, data []byte) []string {
	t.Helper()
	rd := capture.NewReader(bytes.NewReader(data))
	var out []string
	for {
		it, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("the capture does not read back: %v", err)
			}
			return out
		}
		out = append(out, fmt.Sprintf("%s %s/%d@%d", it.Kind, it.Topic, it.Partition, it.Offset))
	}
}

// TestRun captures a range in a pipe (stdout) and on a terminal (-f FILE,
// progress on stderr) and reads both captures back.
func TestRun(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders"))
	for i := range 4 {
		kafkatest.Produce(t, c, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}})
	}
	addr := c.ListenAddrs()[0]
	want := "log-facts orders/0@0 position orders/0@1 record orders/0@1 record orders/0@2 record orders/0@3 position orders/0@4"

	ios, _, out, errOut := iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, addr), nil, "-t", "orders", "--offsets", "start", "--start", "orders/0=1"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines(t, out.Bytes()), " "); got != want {
		t.Errorf("pipe capture:\n%s\nwant\n%s", got, want)
	}
	if errOut.Len() != 0 {
		t.Errorf("progress in a pipe: %q", errOut)
	}

	path := filepath.Join(t.TempDir(), "c.ndjson")
	ios, _, out, errOut = iostreams.Test()
	ios.SetTTY(true)
	if err := command(cmdutiltest.Factory(ios, addr), nil, "-t", "orders", "--start", "orders/0=1", "-f", path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines(t, data), " "); got != want || out.Len() != 0 {
		t.Errorf("file capture:\n%s\nwant\n%s (stdout %q)", got, want, out)
	}
	if !strings.Contains(errOut.String(), "captured 3 records from 1 partition to "+path+"\n") {
		t.Errorf("no summary line on the terminal: %q", errOut)
	}
	if _, stop := readStopped(t, path); stop != nil {
		t.Errorf("a whole capture says it stopped: %+v", stop)
	}
	onlyFile(t, filepath.Dir(path), "c.ndjson")

	// Without a terminal too, -f FILE says in one line what it wrote.
	ios, _, _, errOut = iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, addr), nil, "-t", "orders", "--start", "orders/0=1", "-f", path); err != nil {
		t.Fatal(err)
	}
	if got, want := errOut.String(), "captured 3 records from 1 partition to "+path+"\n"; got != want {
		t.Errorf("-f FILE in a pipe: stderr %q, want %q", got, want)
	}

	// A topic the cluster lacks fails before anything is written.
	ios, _, out, _ = iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, addr), nil, "-t", "nope"); err == nil || !strings.Contains(err.Error(), "nope") || out.Len() != 0 {
		t.Errorf("unknown topic: %v, wrote %q", err, out)
	}
}

// TestStdoutGoesThroughFinalOutput: a capture on stdout is written in
// whole lines under the FinalOutput (cmdutil.LineWriter): once the process
// is exiting after an interrupt's grace, no more of it is written, so the
// exit cannot cut a line.
func TestStdoutGoesThroughFinalOutput(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders"))
	for i := range 4 {
		kafkatest.Produce(t, c, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}})
	}
	ios, _, out, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, c.ListenAddrs()[0])
	f.Final.Stop()
	err := command(f, nil, "-t", "orders", "--offsets", "start")
	if err == nil || out.Len() != 0 {
		t.Errorf("error %v, %d bytes on stdout: want an error and nothing written", err, out.Len())
	}
}
