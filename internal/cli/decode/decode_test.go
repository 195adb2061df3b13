package decode

import (
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// TestFlags checks that flags land in Options, without running the command.
func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	var got *Options
	out := &cmdutil.Output{}
	cmd := NewCmdDecode(f, out, func(o *Options) error { got = o; return nil })
	cmd.Flags().StringVarP(&out.Value, "output", "o", "", "")
	cmd.SetArgs([]string{"--base64", "AQA=", "--header-format", "clock", "--max-header-size", "99", "--topic-id", "a=01020304-0506-0708-090a-0b0c0d0e0f10", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Base64 != "AQA=" || got.HeaderFormat != "clock" || got.MaxSize != 99 || got.Output != "json" || got.Names.Len() != 1 {
		t.Errorf("options %+v", got)
	}
	cmd = NewCmdDecode(f, &cmdutil.Output{}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--hex", "0100"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Output != "text" || got.HeaderFormat != "causes" || got.MaxSize != 256<<10 {
		t.Errorf("defaults %+v", got)
	}
}
