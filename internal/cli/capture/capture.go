// Package capture implements `causalctl capture`: a broker range written as
// a capture file (SPEC §4), for replaying at home.
package capture

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of capture.
type Options struct {
	IO        *iostreams.IOStreams
	Range     cmdutil.RangeFlags
	Start     []string
	File      string
	Names     *clock.Names
	Now       func() time.Time
	OpenRange func(context.Context, cmdutil.BrokerRead) (*cmdutil.Range, error)
}

// NewCmdCapture returns the capture command.
func NewCmdCapture(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Now: time.Now, OpenRange: f.OpenRange, Names: &clock.Names{}}
	cmd := &cobra.Command{
		Use:   "capture --topic NAME[/P]… [--offsets RANGE] [-f FILE]",
		Short: "Write a broker range as a capture file",
		Long: `Read a range of records from the brokers (read_committed, no group joined,
nothing committed) and write it as a capture file (SPEC §4): every line with
its topic UUID, a position line at the start of each partition's range, a
position line wherever the position moved past offsets that carried no record
(transaction markers, aborted records), and one at each range's end. The end
is fixed when the range opens, so capture always finishes.

The capture goes to stdout, or to -f FILE. On a terminal, progress is shown
on stderr.`,
		Example: `  causalctl capture --brokers localhost:9092 -t orders -t payments/1 --offsets -500 -f stuck.ndjson
  causalctl capture -t orders --offsets @2026-11-29T10:00:00Z:+10m > window.ndjson`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !opts.Range.Given() {
				return cmdutil.Usagef("name the range to capture with --topic")
			}
			if opts.File == "" && opts.IO.OutTTY {
				return cmdutil.Usagef("refusing to write a capture to a terminal: give -f FILE or redirect stdout")
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	cmdutil.AddRangeFlags(cmd, f, &opts.Range)
	cmdutil.AddStartFlag(cmd, f, &opts.Start, "start positions overriding --offsets, `CH=OFFSET[,...]`")
	fs.StringVarP(&opts.File, "file", "f", "", "write the capture to `FILE` instead of stdout")
	return cmd
}

// Run captures the range.
func Run(ctx context.Context, opts *Options) (err error) {
	// Each channel starts with its log facts: `holds --input` then
	// classifies as it would have live.
	br, err := opts.OpenRange(ctx, cmdutil.BrokerRead{Flags: opts.Range, Start: opts.Start, Names: opts.Names,
		Options: []kafka.ReadOption{kafka.WithLogFacts()}})
	if err != nil {
		return err
	}
	defer br.Close()
	var out io.Writer = opts.IO.Out
	if opts.File != "" {
		f, cerr := os.Create(opts.File)
		if cerr != nil {
			return cerr
		}
		defer func() {
			// A file's last bytes may fail only when it is closed (NFS,
			// a full disk): the capture is not written until then.
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("writing %s: %w", opts.File, cerr)
			}
		}()
		out = f
	}
	w := capture.NewWriter(out)
	start := opts.Now()
	last := start
	var records int64
	for n := 0; ; n++ {
		it, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ferr := w.Flush(); ferr != nil {
				return fmt.Errorf("capture stopped after %d records (%v), and writing them failed: %w", records, err, ferr)
			}
			if ctx.Err() != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: fmt.Errorf("interrupted: capture stopped after %d records (they are written)", records)}
			}
			return fmt.Errorf("capture stopped after %d records (they are written): %w", records, err)
		}
		if it.Kind == capture.KindRecord {
			records++
		}
		if err := w.Write(it); err != nil {
			return err
		}
		if opts.IO.ErrTTY && n&1023 == 0 {
			if t := opts.Now(); t.Sub(last) >= time.Second {
				last = t
				fmt.Fprintf(opts.IO.ErrOut, "\r\x1b[Kcapturing: %s, %.0f records/s", render.Count(records, "record", "records"), float64(records)/t.Sub(start).Seconds())
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if opts.IO.ErrTTY {
		fmt.Fprintf(opts.IO.ErrOut, "\r\x1b[Kcaptured %s from %s\n", render.Count(records, "record", "records"), render.Count(len(br.Channels), "partition", "partitions"))
	}
	return nil
}
