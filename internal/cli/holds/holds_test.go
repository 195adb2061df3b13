package holds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/spf13/cobra"
)

// newCmd returns holds as root would wire it, with --output.
func newCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	return cmdutiltest.AsRoot(NewCmdHolds(f, runF))
}

// TestFlags: the flags reach the options; what cannot be resolved on the
// command line is a usage error before any work.
func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	var got *Options
	cmd := newCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"-f", "x.ndjson", "--scope", "orders,payments/1", "--start", "orders/0=3",
		"--older-than", "10m", "--retention-warn", "2h", "--position-advance=false", "--undecodable", "hold",
		"--max-header-size", "99", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Input != "x.ndjson" || !slices.Equal(got.Scope, []string{"orders", "payments/1"}) ||
		!slices.Equal(got.Start, []string{"orders/0=3"}) || got.OlderThan != 10*time.Minute || got.RetentionWarn != 2*time.Hour ||
		!got.ReceiptOnly || got.Undecodable != gate.HoldUndecodable || got.MaxHeaderSize != 99 || got.Output != "json" {
		t.Fatalf("options %+v", got)
	}

	for _, args := range [][]string{
		{},                                        // no source
		{"-f", "x", "--older-than", "-1m"},        // negative age
		{"-f", "x", "-o", "ndjson"},               // not a format of holds
		{"-f", "x", "--offsets", "start"},         // a range without a topic
		{"-f", "x", "--retention-warn", "-1h"},    // negative headroom
		{"-f", "x", "--position-advance=perhaps"}, // not a bool
	} {
		ran := false
		cmd := newCmd(f, func(context.Context, *Options) error { ran = true; return nil })
		cmd.SetArgs(args)
		err := cmd.Execute()
		if code := cmdutil.ExitCode(err); code != cmdutil.ExitUsage || ran {
			t.Errorf("%q: exit %d (ran %v), err %v; want a usage error before any work", args, code, ran, err)
		}
	}
}

// TestRunTerminalAndPipe: Run over a capture with a held chain reports the
// same heads on a terminal and in a pipe, in text and JSON, and exits 4.
func TestRunTerminalAndPipe(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	run := func(tty bool, format string) (string, error) {
		ios, _, out, errOut := iostreams.Test()
		ios.SetTTY(tty)
		f := cmdutiltest.Factory(ios, "")
		f.Now = func() time.Time { return now }
		cmd := newCmd(f, nil)
		cmd.SetArgs([]string{"-f", testutil.Testdata("captures", "basic.ndjson"), "-o", format})
		err := cmd.ExecuteContext(context.Background())
		if errOut.Len() != 0 {
			t.Errorf("tty %v %s: stderr %q", tty, format, errOut)
		}
		return out.String(), err
	}
	for _, format := range []string{"text", "json"} {
		var outs []string
		for _, tty := range []bool{true, false} {
			out, err := run(tty, format)
			var ee *cmdutil.ExitError
			if !errors.As(err, &ee) || cmdutil.ExitCode(err) != cmdutil.ExitFound {
				t.Errorf("tty %v %s: %v (exit %d), want exit %d for holds found", tty, format, err, cmdutil.ExitCode(err), cmdutil.ExitFound)
			}
			outs = append(outs, out)
		}
		if outs[0] != outs[1] {
			t.Errorf("%s differs between a terminal and a pipe:\n%s\n---\n%s", format, outs[0], outs[1])
		}
		switch format {
		case "text":
			// payments/0@2 waits beyond the capture; shipments/0@0 waits on it.
			for _, want := range []string{"2 held heads (3 records held)", "beyond-input at payments/0@2", "└─ shipments/0@0", "next step: "} {
				if !strings.Contains(outs[0], want) {
					t.Errorf("text lacks %q:\n%s", want, outs[0])
				}
			}
		case "json":
			var rep struct {
				HeldHeads   int `json:"held_heads"`
				HeldRecords int `json:"held_records"`
				Roots       []struct {
					Channel string   `json:"channel"`
					Offset  int64    `json:"offset"`
					Cause   string   `json:"cause"`
					Heads   []string `json:"heads"`
				} `json:"roots"`
			}
			dec := json.NewDecoder(bytes.NewReader([]byte(outs[0])))
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("json: %v\n%s", err, outs[0])
			}
			if rep.HeldHeads != 2 || rep.HeldRecords != 3 || len(rep.Roots) != 1 || rep.Roots[0].Channel != "payments/0" ||
				rep.Roots[0].Offset != 2 || rep.Roots[0].Cause != "beyond-input" || !slices.Equal(rep.Roots[0].Heads, []string{"payments/0@2", "shipments/0@0"}) {
				t.Errorf("json report %+v", rep)
			}
		}
	}
}
