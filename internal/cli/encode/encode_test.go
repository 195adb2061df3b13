package encode

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
)

const uuid = "01020304-0506-0708-090a-0b0c0d0e0f10"

// command runs encode with args, through runF when it is given.
func command(t *testing.T, tty bool, runF func(context.Context, *Options) error, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	ios.SetTTY(tty)
	cmd := NewCmdEncode(cmdutiltest.Factory(ios, ""), runF)
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err
}

// TestFlags checks that flags land in Options, without running the command.
func TestFlags(t *testing.T) {
	var got *Options
	keep := func(_ context.Context, o *Options) error { got = o; return nil }
	if _, err := command(t, false, keep, "orders/0=41", "--topic-id", "orders="+uuid, "--header-format", "clock", "-o", "base64"); err != nil {
		t.Fatal(err)
	}
	if got.Text != "orders/0=41" || got.HeaderFormat != "clock" || got.Output != "base64" || got.Names.Len() != 1 {
		t.Errorf("options %+v", got)
	}
	if _, err := command(t, false, keep, "{}"); err != nil {
		t.Fatal(err)
	}
	if got.Output != "hex" || got.HeaderFormat != "causes" {
		t.Errorf("defaults %+v", got)
	}
	for _, tc := range []struct {
		tty  bool
		args []string
		want string
	}{
		{false, []string{"{}", "--header-format", "json"}, "--header-format json"},
		{false, []string{"{}", "-o", "yaml"}, "--output yaml"},
		{true, []string{"{}", "-o", "raw"}, "refusing to write raw bytes to a terminal"},
	} {
		_, err := command(t, tc.tty, keep, tc.args...)
		var ue *cmdutil.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestRun encodes through Run, as a terminal and in a pipe, and checks
// each output against the clock package's own encoding and decoding.
func TestRun(t *testing.T) {
	id, err := clock.ParseTopicID(uuid)
	if err != nil {
		t.Fatal(err)
	}
	want := clock.Encode(clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: id, Partition: 2}, Position: 41}))
	for _, tty := range []bool{true, false} {
		out, err := command(t, tty, nil, uuid+"/2=41")
		if err != nil {
			t.Fatal(err)
		}
		if out != hex.EncodeToString(want)+"\n" {
			t.Errorf("tty %v hex: %q", tty, out)
		}
		out, err = command(t, tty, nil, "orders/2=41", "--topic-id", "orders="+uuid, "-o", "base64")
		if err != nil {
			t.Fatal(err)
		}
		if out != base64.StdEncoding.EncodeToString(want)+"\n" {
			t.Errorf("tty %v base64: %q", tty, out)
		}
	}
	out, err := command(t, false, nil, uuid+"/2=41", "-o", "raw")
	if err != nil || out != string(want) {
		t.Errorf("raw in a pipe: %q %v", out, err)
	}
	// The legacy layout round-trips through its decoder.
	out, err = command(t, false, nil, uuid+"/2=41", "--header-format", "clock", "-o", "raw")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := clock.DecodeLegacy([]byte(out))
	if err != nil || len(entries) != 1 || entries[0].Position != 41 || entries[0].Channel.Partition != 2 {
		t.Errorf("legacy: %v %v", entries, err)
	}
	// The empty clock is the two bytes of version 1 with no topic.
	if out, err := command(t, false, nil, "{}"); err != nil || out != "0100\n" {
		t.Errorf("empty clock: %q %v", out, err)
	}
	// A clock naming a topic nobody named is a usage error.
	_, err = command(t, false, nil, "orders/0=1")
	var ue *cmdutil.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "orders") {
		t.Errorf("unknown topic: %v", err)
	}
}
