// Package encode implements `causalctl encode`: a clock in text form to the
// bytes of a parsley.causes (or legacy parsley-clock) header value.
package encode

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of encode.
type Options struct {
	IO           *iostreams.IOStreams
	Output       string // hex, base64 or raw
	Text         string
	HeaderFormat string // causes or clock
	Names        *clock.Names
}

// NewCmdEncode returns the encode command. runF replaces the work in tests
// of flag parsing; nil runs Run.
func NewCmdEncode(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams}
	names := &cmdutil.NamesFlag{}
	cmd := &cobra.Command{
		Use:   "encode CLOCK",
		Short: "Encode a clock given in text form as a header value",
		Long: `Encode a clock written as CHANNEL=POSITION[,CHANNEL=POSITION…] ({} for the
empty clock), where CHANNEL is UUID/PARTITION or NAME/PARTITION with the
name bound by --topic-id. The output is the parsley.causes v1 value, the
one encoding of that clock, so encode and decode are inverses.

Output (--output): hex (default), base64, or raw bytes (not to a terminal).`,
		Example: `  causalctl encode '{}'
  causalctl encode orders/0=41,payments/3=7 --topic-id orders=01020304-0506-0708-090a-0b0c0d0e0f10 --topic-id payments=f1020304-0506-0708-090a-0b0c0d0e0f10
  causalctl encode 01020304-0506-0708-090a-0b0c0d0e0f10/2=41 -o base64`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.Output, err = out.Resolve("hex"); err != nil {
				return err
			}
			if opts.HeaderFormat != "causes" && opts.HeaderFormat != "clock" {
				return cmdutil.Usagef("--header-format %s: want causes or clock", opts.HeaderFormat)
			}
			if opts.Output == "raw" && opts.IO.OutTTY {
				return cmdutil.Usagef("refusing to write raw bytes to a terminal: pipe the output, or use -o hex or -o base64")
			}
			opts.Text, opts.Names = args[0], names.Names
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	cmdutil.AddHeaderFormatFlag(cmd, &opts.HeaderFormat)
	cmdutil.AddTopicIDFlag(cmd.Flags(), names)
	cmdutil.AddOutputFlag(cmd, out, "hex", "base64", "raw")
	return cmd
}

// Run parses the clock and writes its encoding.
func Run(_ context.Context, opts *Options) error {
	c, err := opts.Names.Parse(opts.Text)
	if err != nil {
		return cmdutil.Usagef("clock %q: %v", opts.Text, err)
	}
	var value []byte
	if opts.HeaderFormat == "clock" {
		value = clock.EncodeLegacy(c.Entries())
	} else {
		value = clock.Encode(c)
	}
	switch opts.Output {
	case "raw":
		_, err = opts.IO.Out.Write(value)
	case "base64":
		_, err = fmt.Fprintln(opts.IO.Out, base64.StdEncoding.EncodeToString(value))
	default:
		_, err = fmt.Fprintln(opts.IO.Out, hex.EncodeToString(value))
	}
	return err
}
