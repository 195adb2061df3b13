// Package capture implements `causalctl capture`: a broker range written as
// a capture file (SPEC §4), for replaying at home.
package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of capture.
type Options struct {
	IO *iostreams.IOStreams
	// InputFlags name the range: --topic, --offsets, --from-group,
	// --allow-gaps and --start (no capture, sizes or --topic-id).
	cmdutil.InputFlags
	File string
	Now  func() time.Time
	// Final guards the capture on stdout: it is written in whole lines,
	// so an interrupt's exit cannot cut one (cmdutil.LineWriter).
	Final *cmdutil.FinalOutput
	// OpenInput opens the range (Factory.OpenInput).
	OpenInput func(context.Context, *cmdutil.InputFlags, input.Read) (*input.Source, error)
}

// NewCmdCapture returns the capture command.
func NewCmdCapture(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Now: time.Now, Final: f.Final, OpenInput: f.OpenInput}
	cmd := &cobra.Command{
		Use:   "capture --topic NAME[/P]… [--offsets RANGE] [-f FILE]",
		Short: "Write a broker range as a capture file",
		Long: `Read a range of records from the brokers (read_committed, no group joined,
nothing committed) and write it as a capture file (SPEC §4): every line with
its topic UUID, a position line at the start of each partition's range, a
position line wherever the position moved past offsets that carried no record
(transaction markers, aborted records), and one at each range's end. The end
is fixed when the range opens, so capture always finishes.

The capture goes to stdout, or to -f FILE: written beside FILE and renamed to
it at the end, so that FILE is never half-written. A capture interrupted or
failing keeps what it read and ends it with a stopped line saying where each
unfinished channel stopped and why; commands reading the file warn that its
range is partial. On a terminal, progress is shown on stderr.`,
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
	cmdutil.AddInputFlags(cmd, f, &opts.InputFlags, cmdutil.InputSpec{
		NoCapture: true, NoSizes: true, NoTopicID: true, // -f is the capture it writes
		StartUsage: "start positions overriding --offsets, `CH=OFFSET[,...]`",
	})
	fs.StringVarP(&opts.File, "file", "f", "", "write the capture to `FILE` instead of stdout")
	return cmd
}

// Run captures the range.
func Run(ctx context.Context, opts *Options) (err error) {
	// Each channel starts with its log facts: `holds --input` then
	// classifies as it would have live.
	src, err := opts.OpenInput(ctx, &opts.InputFlags, input.Read{LogFacts: true})
	if err != nil {
		return err
	}
	defer src.Close()
	br := src.Range
	if opts.File == "" {
		lw := cmdutil.NewLineWriter(opts.IO.Out, opts.Final)
		_, err := write(ctx, opts, lw, br, br.Channels, br.Ends)
		// What was captured is written even when the capture stopped: its
		// last line says where.
		if ferr := lw.Finish(nil); ferr != nil && err == nil {
			err = fmt.Errorf("writing the capture: %w", ferr)
		}
		return err
	}
	var records int64
	err = toFile(opts.File, func(w io.Writer) (err error) {
		records, err = write(ctx, opts, w, br, br.Channels, br.Ends)
		return err
	})
	if err != nil {
		return err
	}
	// Written whole and renamed into place: one line says what is in it.
	fmt.Fprintln(opts.IO.ErrOut, capturedLine(opts.IO.ErrTTY, records, len(br.Channels), opts.File))
	return nil
}

// capturedLine is the line that ends a capture on stderr: the records and
// channels written, and where (file; "" for stdout). On a terminal it
// replaces the progress line.
func capturedLine(tty bool, records int64, channels int, file string) string {
	s := fmt.Sprintf("captured %s from %s", render.Count(records, "record", "records"), render.Count(channels, "partition", "partitions"))
	if file != "" {
		s += " to " + file
	}
	if tty {
		s = "\r\x1b[K" + s
	}
	return s
}

// toFile runs write on a temporary file beside path and renames it to path
// when the capture is whole, or when it says where it stopped (write
// returned a *stoppedError): a path that a crash or a failed write leaves
// half-written never exists; the temporary file is removed instead.
func toFile(path string, write func(io.Writer) error) error {
	tmp, err := createBeside(path)
	if err != nil {
		return err
	}
	err = write(tmp)
	var stopped *stoppedError
	if err != nil && !errors.As(err, &stopped) {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	// A file's last bytes may fail only when it is closed (NFS, a full
	// disk): the capture is not written until then.
	if cerr := tmp.Close(); cerr != nil {
		os.Remove(tmp.Name())
		return lost(err, path, cerr)
	}
	if rerr := os.Rename(tmp.Name(), path); rerr != nil {
		os.Remove(tmp.Name())
		return lost(err, path, rerr)
	}
	return err
}

// lost is the error of a capture to path that could not be kept: the
// capture's own error, if any, then why (one line).
func lost(err error, path string, why error) error {
	if err == nil {
		return fmt.Errorf("writing %s: %w (nothing kept)", path, why)
	}
	return fmt.Errorf("%w; writing %s then failed: %v (nothing kept)", err, path, why)
}

// createBeside creates the temporary file a capture to path is written to:
// in path's directory (a rename within one file system is atomic), named
// so that it looks like no capture (".NAME.causalctl-RANDOM.tmp"), with the
// mode os.Create would give path.
func createBeside(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+".causalctl-"+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			if err != nil {
				return nil, fmt.Errorf("writing %s: %w", path, err)
			}
			return f, nil
		}
	}
	return nil, fmt.Errorf("writing %s: no free temporary name beside it", path)
}

// itemSource is what write reads: a broker range.
type itemSource interface {
	Next() (*record.Item, error)
}

// stoppedError is a capture that stopped before its range's end and says
// so in its last line (capture.Stopped): what it holds is kept.
type stoppedError struct{ err error }

func (e *stoppedError) Error() string { return e.err.Error() }
func (e *stoppedError) Unwrap() error { return e.err }

// write writes the items of src to out as a capture. When src fails or ctx
// ends before the range's end, what was read is written and then a stopped
// line naming each channel left unfinished, how far it got and why, and
// the error is a *stoppedError; when even that cannot be written, it is
// the write error.
func write(ctx context.Context, opts *Options, out io.Writer, src itemSource, channels []clock.Channel, ends map[clock.Channel]int64) (int64, error) {
	w := capture.NewWriter(out)
	start := opts.Now()
	last := start
	var records int64
	reached := make(map[clock.Channel]int64, len(channels))
	names := map[clock.Channel]string{}
	for n := 0; ; n++ {
		it, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			stop := &capture.Stopped{Reason: err.Error(), Records: records}
			if ctx.Err() != nil {
				stop.Reason = "interrupted"
			}
			for _, ch := range channels {
				at, ok := reached[ch]
				end, known := ends[ch]
				if !known {
					end = -1
				}
				if !ok {
					at = -1
				}
				if ok && at >= end && end >= 0 {
					continue
				}
				name, _ := opts.Names.Name(ch.Topic)
				if n, ok := names[ch]; ok {
					name = n
				}
				stop.Channels = append(stop.Channels, capture.StoppedChannel{Topic: name, TopicID: ch.Topic, Partition: ch.Partition, Reached: at, End: end})
			}
			werr := w.WriteStopped(stop)
			if werr == nil {
				werr = w.Flush()
			}
			if werr != nil {
				return records, fmt.Errorf("capture stopped after %d records (%v), and writing them failed: %w", records, err, werr)
			}
			if ctx.Err() != nil {
				return records, &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: &stoppedError{fmt.Errorf("interrupted: capture stopped after %d records (they are written, and a last line says where it stopped)", records)}}
			}
			return records, &stoppedError{fmt.Errorf("capture stopped after %d records (they are written, and a last line says where it stopped): %w", records, err)}
		}
		ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
		if _, ok := names[ch]; !ok && it.Topic != "" {
			names[ch] = it.Topic
		}
		switch it.Kind {
		case record.KindRecord:
			records++
			reached[ch] = it.Offset + 1
		case record.KindPosition:
			reached[ch] = it.Offset
		}
		if err := w.Write(it); err != nil {
			return records, err
		}
		if opts.IO.ErrTTY && n&1023 == 0 {
			if t := opts.Now(); t.Sub(last) >= time.Second {
				last = t
				fmt.Fprintf(opts.IO.ErrOut, "\r\x1b[Kcapturing: %s, %.0f records/s", render.Count(records, "record", "records"), float64(records)/t.Sub(start).Seconds())
			}
		}
	}
	if err := w.Flush(); err != nil {
		return records, err
	}
	if opts.IO.ErrTTY && opts.File == "" {
		// On stdout's terminal or beside its pipe; a file's line comes
		// once it is in place (Run).
		fmt.Fprintln(opts.IO.ErrOut, capturedLine(true, records, len(channels), ""))
	}
	return records, nil
}
