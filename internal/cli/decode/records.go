package decode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/record"
)

// Source yields the items to decode; engine.Source, so that a broker range
// plugs in as well as a capture file.
type Source = engine.Source

// runRecords decodes every record of the capture or broker range opts
// name. A capture's first reading learns the topic names of every line, so
// that a clock naming a topic by UUID shows its name even before that
// topic's lines.
func runRecords(ctx context.Context, opts *Options) error {
	in, err := opts.OpenInput(ctx, &opts.InputFlags, input.Read{})
	if err != nil {
		return err
	}
	defer in.Close()
	if in.Range != nil {
		return DecodeRecords(in, opts) // a broker range: its errors name the channel
	}
	if len(in.Channels) == 0 {
		// As replay says: an empty capture was almost certainly captured
		// or named wrongly.
		return fmt.Errorf("%s holds no records or positions: nothing to decode", in.Name)
	}
	if err := DecodeRecords(in, opts); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// ErrUndecodable is returned, after every record has been shown, when some
// records' headers were undecodable.
var ErrUndecodable = errors.New("undecodable headers")

// DecodeRecords writes one line per record of src: channel, offset, time
// and clock (or the reason the header is undecodable). Position items are
// not records and are passed over. The lines are streamed in whole lines
// under opts.Final (cmdutil.LineWriter): an interrupt's exit does not cut
// one.
func DecodeRecords(src Source, opts *Options) error {
	w := cmdutil.NewLineWriter(opts.IO.Out, opts.Final)
	err := decodeRecords(src, opts, w)
	if ferr := w.Finish(nil); ferr != nil && err == nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	return err
}

func decodeRecords(src Source, opts *Options, w *cmdutil.LineWriter) error {
	var bad, records int
	var first string
	for {
		it, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if it.Kind != record.KindRecord {
			continue
		}
		records++
		ch, err := engine.ResolveChannel(opts.Names, it)
		if err != nil {
			return fmt.Errorf("line %d: %w", it.Line, err)
		}
		c, key, derr := clock.FromHeaders(it.Headers, clock.MaxSize(opts.MaxHeaderSize))
		channel := opts.Names.Channel(ch)
		if derr != nil {
			bad++
			if first == "" {
				first = fmt.Sprintf("%s offset %d", channel, it.Offset)
				if it.Line > 0 {
					first = fmt.Sprintf("line %d: %s", it.Line, first)
				}
				first += ": " + derr.Error()
			}
		}
		if opts.Output == "json" {
			v := jsonValue{Channel: channel, Offset: &it.Offset, Line: it.Line, Format: key, Entries: jsonEntries(c.Entries(), opts.Names)}
			if it.HasTimestamp {
				v.Timestamp = &it.Timestamp
			}
			for _, h := range it.Headers {
				if h.Key == key {
					v.Size = len(h.Value)
				}
			}
			if derr != nil {
				v.Error = derr.Error()
				code, _ := clock.CodeOf(derr)
				v.Code = string(code)
			}
			if err := encodeJSON(w, v); err != nil {
				return err
			}
			continue
		}
		ts := "-"
		if t, ok := record.TimeOf(it.Timestamp); it.HasTimestamp && ok {
			ts = t.UTC().Format("2006-01-02T15:04:05.000Z")
		} else if it.HasTimestamp { // past 2262 (record.MaxTimestamp): the number, not a date
			ts = strconv.FormatInt(it.Timestamp, 10)
		}
		text := opts.Names.Format(c)
		if derr != nil {
			text = "UNDECODABLE " + derr.Error()
		}
		if _, err := fmt.Fprintf(w, "%s@%d\t%s\t%s\n", channel, it.Offset, ts, text); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%w: %d of %d records, the first at %s", ErrUndecodable, bad, records, first)
	}
	return nil
}
