package decode

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// TestFlags checks that flags land in Options, without running the command.
func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	var got *Options
	cmd := NewCmdDecode(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--base64", "AQA=", "--header-format", "clock", "--max-header-size", "99", "--topic-id", "a=01020304-0506-0708-090a-0b0c0d0e0f10", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Base64 != "AQA=" || got.HeaderFormat != "clock" || got.MaxHeaderSize != 99 || got.Output != "json" || got.Names.Len() != 1 {
		t.Errorf("options %+v", got)
	}
	cmd = NewCmdDecode(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--hex", "0100"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Output != "text" || got.HeaderFormat != "causes" || got.MaxHeaderSize != 256<<10 {
		t.Errorf("defaults %+v", got)
	}
}

// TestRunTTYAndPipe decodes one value through the command: a table on a
// terminal, one line of text form in a pipe (which encode reads back).
func TestRunTTYAndPipe(t *testing.T) {
	const uuid = "01020304-0506-0708-090a-0b0c0d0e0f10"
	id, _ := clock.ParseTopicID(uuid)
	value := hex.EncodeToString(clock.Encode(clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: id, Partition: 2}, Position: 41})))
	for _, tc := range []struct {
		tty  bool
		want []string
	}{
		{true, []string{"parsley.causes, 28 bytes, 1 entry", "orders  " + uuid + "          2        41\n"}},
		{false, []string{"orders/2=41\n"}},
	} {
		ios, _, out, _ := iostreams.Test()
		ios.SetTTY(tc.tty)
		cmd := NewCmdDecode(cmdutiltest.Factory(ios, ""), nil)
		cmd.SetArgs([]string{"--hex", value, "--topic-id", "orders=" + uuid})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("tty %v: %v", tc.tty, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("tty %v: output lacks %q:\n%s", tc.tty, w, out)
			}
		}
		if !tc.tty && out.String() != "orders/2=41\n" {
			t.Errorf("pipe: %q, want exactly the text form", out)
		}
	}
}

// TestRecordLinesGoThroughFinalOutput: the line per record is streamed in
// whole lines under the FinalOutput (cmdutil.LineWriter): once the process
// is exiting after an interrupt's grace, no more are written, so the exit
// cannot cut one.
func TestRecordLinesGoThroughFinalOutput(t *testing.T) {
	var capture strings.Builder
	capture.WriteString(`{"topic":"orders","topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"position":0}` + "\n")
	for i := range 2000 {
		fmt.Fprintf(&capture, `{"topic":"orders","topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"offset":%d,"timestamp":1000,"headers":[]}`+"\n", i)
	}
	for _, output := range []string{"text", "json"} {
		ios, in, out, _ := iostreams.Test()
		in.WriteString(capture.String())
		f := cmdutiltest.Factory(ios, "")
		f.Final.Stop()
		cmd := cmdutiltest.AsRoot(NewCmdDecode(f, nil))
		cmd.SetArgs([]string{"--input", "-", "-o", output})
		err := cmd.ExecuteContext(context.Background())
		if err == nil || out.Len() != 0 {
			t.Errorf("-o %s: error %v, %d bytes on stdout: want an error and nothing written", output, err, out.Len())
		}
	}
}
