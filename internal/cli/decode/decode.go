// Package decode implements `causalctl decode`: one clock header value, from
// a flag or stdin, shown with its topic names.
package decode

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of decode.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string

	Hex, Base64  string
	HeaderFormat string // "causes" or "clock"

	// StateKey and StateValue are one ordering-state entry (SPEC §6), in
	// hex; without StateValue the value is raw bytes on stdin.
	StateKey, StateValue string

	// InputFlags are a capture (--input, "-" for stdin) or a broker range
	// to decode record by record, the sizes (--max-header-size bounds the
	// single value too) and --topic-id.
	cmdutil.InputFlags
	// OpenInput opens the input (Factory.OpenInput).
	OpenInput func(context.Context, *cmdutil.InputFlags, input.Read) (*input.Source, error)
}

// NewCmdDecode returns the decode command. runF replaces the work in tests
// of flag parsing; nil runs Run.
func NewCmdDecode(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, OpenInput: f.OpenInput}
	cmd := &cobra.Command{
		Use:   "decode [--hex HEX | --base64 B64 | --input FILE | --topic NAME[/P]… | --state-key HEX [--state-value HEX] | < VALUE]",
		Short: "Decode a parsley.causes (or legacy parsley-clock) header value, or the clocks of records",
		Long: `Decode one clock header value and show its entries, with topic names where
known. The value comes from --hex, --base64, or raw bytes on stdin.

An undecodable value exits 1 and prints its reason code (SPEC §2), e.g.
"truncated" or "topics-not-ascending", on stderr.

With --input FILE (a capture, - for stdin), or a broker range (--topic with
--offsets, read-only), decode shows every record's channel, offset,
timestamp and clock instead, the header chosen by key
(parsley.causes, else the legacy parsley-clock). An undecodable record is
shown with its reason code, the rest still decoded, and the exit code is 1.

With --state-key HEX, decode shows one entry of a Parsley process's
ordering state (SPEC §6; a record of APP-__parsley.ordering-changelog): the
key's tag and fields (channel, position, name) and the value decoded by the
tag (store version, position, the topic a name is bound to, or a held
record: timestamp, key and value in base64 with their sizes, headers,
causes). The value is --state-value HEX, or raw bytes on stdin (none is read
from a terminal; an empty stdin is the key alone). A corrupt key or value
exits 1 with the defect named. The output is text on a terminal, JSON in a
pipe (or as --output says).

Output (--output):
  text  on a terminal, a summary line and a table; in a pipe, the clock's
        text form on one line (CHANNEL=POSITION,…), which encode reads back.
        For records, one line each: CHANNEL@OFFSET TIME CLOCK
  json  {"format","size","entries":[{"topic_id","topic","partition","position"}]},
        entries in wire order; for records, one such object per line with
        channel, offset and timestamp added (NDJSON); for --state-key,
        {"key":{…},"value":{…}} (docs/state.md)`,
		Example: `  causalctl decode --hex 0100
  causalctl decode --base64 AQEBAgMEBQYHCAkKCwwNDg8QAQIAAAAAAAAAKQ== --topic-id orders=01020304-0506-0708-090a-0b0c0d0e0f10
  causalctl decode --input capture.ndjson -o json
  causalctl decode --state-key 76 --state-value 01
  causalctl decode --state-key 6e6f7264657273 --state-value 0102030405060708090a0b0c0d0e0f1000000000 -o json
  causalctl decode --brokers localhost:9092 -t payments/1 --offsets -20`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			if err := opts.InputFlags.Check(c.Flags()); err != nil {
				return err
			}
			given := 0
			for _, v := range []string{opts.Hex, opts.Base64, opts.Input} {
				if v != "" {
					given++
				}
			}
			if opts.Range.Given() {
				given++
			}
			if opts.StateKey != "" {
				given++
			}
			if given > 1 {
				return cmdutil.Usagef("give one of --hex, --base64, --input, --topic and --state-key")
			}
			if opts.StateValue != "" && opts.StateKey == "" {
				return cmdutil.Usagef("--state-value needs --state-key: a store value is read by its key's tag")
			}
			if opts.StateKey != "" && out.Value == "" && !opts.IO.OutTTY {
				// A store entry has no one-line text form: scripts get JSON.
				opts.Output = "json"
			}
			if opts.HeaderFormat != "causes" && opts.HeaderFormat != "clock" {
				return cmdutil.Usagef("--header-format %s: want causes or clock", opts.HeaderFormat)
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Hex, "hex", "", "the value as hexadecimal")
	fs.StringVar(&opts.Base64, "base64", "", "the value as standard base64")
	cmdutil.AddHeaderFormatFlag(cmd, &opts.HeaderFormat)
	fs.StringVar(&opts.StateKey, "state-key", "", "decode one ordering-state entry (a Parsley changelog record): its key as `HEX`")
	fs.StringVar(&opts.StateValue, "state-value", "", "the entry's value as `HEX` (with --state-key; without it the value is raw bytes on stdin)")
	cmdutil.AddInputFlags(cmd, f, &opts.InputFlags, cmdutil.InputSpec{
		InputUsage: "decode the records of a capture `FILE` (- for stdin)",
		Optional:   true,
	})
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run decodes the value, or the records, and prints them.
func Run(ctx context.Context, opts *Options) error {
	if opts.StateKey != "" {
		return runStateEntry(opts)
	}
	if opts.Input != "" || opts.Range.Given() {
		return runRecords(ctx, opts)
	}
	value, err := readValue(opts)
	if err != nil {
		return err
	}
	format := clock.HeaderCauses
	var entries []clock.Entry // wire order
	if opts.HeaderFormat == "clock" {
		format = clock.HeaderLegacy
		entries, err = clock.DecodeLegacy(value, clock.MaxSize(opts.MaxHeaderSize))
	} else {
		var c clock.Clock
		c, err = clock.Decode(value, clock.MaxSize(opts.MaxHeaderSize))
		entries = c.Entries()
	}
	if err != nil {
		return fmt.Errorf("undecodable %s value (%d bytes): %w", format, len(value), err)
	}
	return opts.Final.Do(func() error {
		if opts.Output == "json" {
			return writeJSON(opts.IO.Out, format, len(value), entries, opts.Names)
		}
		if !opts.IO.OutTTY {
			// One line, the text form: what scripts and `encode` read.
			_, err := fmt.Fprintln(opts.IO.Out, opts.Names.Format(clock.FromLegacy(entries)))
			return err
		}
		return writeTable(opts.IO.Out, format, len(value), entries, opts.Names)
	})
}

func readValue(opts *Options) ([]byte, error) {
	switch {
	case opts.Hex != "":
		b, err := hex.DecodeString(strings.TrimSpace(opts.Hex))
		if err != nil {
			return nil, cmdutil.Usagef("--hex: %v", err)
		}
		return b, nil
	case opts.Base64 != "":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(opts.Base64))
		if err != nil {
			return nil, cmdutil.Usagef("--base64: %v", err)
		}
		return b, nil
	case opts.IO.InTTY:
		// Waiting on a terminal for binary input would look like a hang.
		return nil, cmdutil.Usagef("no value: give --hex or --base64, or pipe the raw bytes to stdin")
	}
	// Read one byte past the budget so too-large is reported, not buffered.
	limit := int64(opts.MaxHeaderSize)
	if limit <= 0 {
		limit = 1 << 30
	}
	b, err := io.ReadAll(io.LimitReader(opts.IO.In, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	return b, nil
}

type jsonEntry struct {
	TopicID   string `json:"topic_id"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	Position  int64  `json:"position"`
}

type jsonValue struct {
	// Record fields, for --input only.
	Channel   string `json:"channel,omitempty"`
	Offset    *int64 `json:"offset,omitempty"`
	Timestamp *int64 `json:"timestamp,omitempty"`
	Line      int64  `json:"line,omitempty"`

	Format  string      `json:"format"` // header key, "" for a record without one
	Size    int         `json:"size"`
	Entries []jsonEntry `json:"entries"`
	// Error is the reason a record's header is undecodable.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
}

func jsonEntries(entries []clock.Entry, names *clock.Names) []jsonEntry {
	out := make([]jsonEntry, len(entries))
	for i, e := range entries {
		name, _ := names.Name(e.Channel.Topic)
		out[i] = jsonEntry{e.Channel.Topic.String(), name, e.Channel.Partition, e.Position}
	}
	return out
}

func writeJSON(w io.Writer, format string, size int, entries []clock.Entry, names *clock.Names) error {
	return encodeJSON(w, jsonValue{Format: format, Size: size, Entries: jsonEntries(entries, names)})
}

func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeTable(w io.Writer, format string, size int, entries []clock.Entry, names *clock.Names) error {
	fmt.Fprintf(w, "%s, %s, %s\n", format, render.Count(size, "byte", "bytes"), render.Count(len(entries), "entry", "entries"))
	if len(entries) == 0 {
		fmt.Fprintln(w, "{} (the empty clock: it claims nothing)")
		return nil
	}
	t := tablewriter.NewTable(w)
	// Name and UUID side by side rather than a UUID/P channel column: the
	// table stays within 80 columns.
	t.Header("Topic", "Topic ID", "Partition", "Position")
	for _, e := range entries {
		name, ok := names.Name(e.Channel.Topic)
		if !ok {
			name = "-"
		}
		if err := t.Append(name, e.Channel.Topic.String(), e.Channel.Partition, e.Position); err != nil {
			return err
		}
	}
	return t.Render()
}
