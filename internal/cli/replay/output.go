package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/olekukonko/tablewriter"
)

// writer renders a replay in one output format. ndjson events are
// formatted by hand: at a million events a second, reflection would cost
// more than the gate.
type writer struct {
	format string
	bw     *bufio.Writer
	names  *clock.Names
	quoted map[clock.Channel][]byte // channel → its JSON string
	buf    []byte
	events int
}

func newWriter(w io.Writer, format string, names *clock.Names) *writer {
	return &writer{format: format, bw: bufio.NewWriterSize(w, 64<<10), names: names, quoted: map[clock.Channel][]byte{}}
}

// flushEvery bounds how many events wait in the buffer, so that a slow
// replay (stdin fed by hand, a long cascade) still streams.
const flushEvery = 512

func (w *writer) event(ev *replay.Event) error {
	if w.format != "ndjson" {
		return nil
	}
	b := w.buf[:0]
	b = append(b, `{"type":"`...)
	b = append(b, ev.Type.String()...)
	b = append(b, '"')
	if ev.Type == replay.EventDeliver {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, ev.Seq, 10)
	}
	b = append(b, `,"channel":`...)
	b = append(b, w.channel(ev.Channel)...)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, ev.Offset, 10)
	if ev.Line > 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, ev.Line, 10)
	}
	if ev.Type == replay.EventHold {
		if ev.Behind >= 0 {
			b = append(b, `,"behind":`...)
			b = strconv.AppendInt(b, ev.Behind, 10)
		} else {
			if ev.Undecodable != "" {
				b = append(b, `,"undecodable":"`...)
				b = append(b, ev.Undecodable...)
				b = append(b, '"')
			}
			b = append(b, `,"blockers":[`...)
			for i, bl := range ev.Blockers {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"channel":`...)
				b = append(b, w.channel(bl.Channel)...)
				b = append(b, `,"required":`...)
				b = strconv.AppendInt(b, bl.Required, 10)
				b = append(b, `,"settled":`...)
				if bl.Settled < 0 {
					b = append(b, "null"...)
				} else {
					b = strconv.AppendInt(b, bl.Settled, 10)
				}
				b = append(b, `,"kind":"`...)
				b = append(b, bl.Kind.String()...)
				b = append(b, `"}`...)
			}
			b = append(b, ']')
		}
	}
	b = append(b, "}\n"...)
	w.buf = b
	if _, err := w.bw.Write(b); err != nil {
		return err
	}
	if w.events++; w.events%flushEvery == 0 {
		return w.bw.Flush()
	}
	return nil
}

func (w *writer) channel(ch clock.Channel) []byte {
	q, ok := w.quoted[ch]
	if !ok {
		q, _ = json.Marshal(w.names.Channel(ch))
		w.quoted[ch] = q
	}
	return q
}

func (w *writer) summary(s *inspect.Summary) error {
	switch w.format {
	case "ndjson":
		b, err := marshal(s)
		if err != nil {
			return err
		}
		w.bw.WriteString(`{"type":"summary",`)
		w.bw.Write(b[1:])
		return nil
	case "json":
		b, err := marshal(s)
		if err != nil {
			return err
		}
		_, err = w.bw.Write(b)
		return err
	}
	return writeText(w.bw, s)
}

func (w *writer) flush() error { return w.bw.Flush() }

// marshal encodes v as one line of JSON with a newline, HTML left alone.
func marshal(v any) ([]byte, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(sb.String()), nil
}

func pos(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// writeText renders the summary for people: a headline, the channels, and
// the blocked heads with their blockers. It stays within 80 columns for
// channel names of ordinary length.
func writeText(w io.Writer, s *inspect.Summary) error {
	state := "complete"
	switch {
	case s.Failed != nil:
		state = "FAILED CLOSED"
	case s.Interrupted:
		state = "interrupted"
	}
	fmt.Fprintf(w, "Replay %s: %d received, %d delivered, %d dropped, %d held", state, s.Received, s.Delivered, s.Dropped, s.Held)
	if s.Skipped > 0 {
		fmt.Fprintf(w, " (%d outside the scope skipped)", s.Skipped)
	}
	fmt.Fprintf(w, ".\n")
	if s.Failed != nil {
		fmt.Fprintf(w, "The gate failed closed at %s offset %d", s.Failed.Channel, s.Failed.Offset)
		if s.Failed.Line > 0 {
			fmt.Fprintf(w, " (line %d)", s.Failed.Line)
		}
		fmt.Fprintf(w, ": %s. Nothing after it was processed.\n", s.Failed.Code)
	}
	fmt.Fprintln(w)

	t := tablewriter.NewTable(w)
	t.Header("Channel", "Settled", "Received", "Held", "Head", "Waits on")
	for _, c := range s.Channels {
		head, waits := "-", ""
		if c.Head != nil {
			head = strconv.FormatInt(c.Head.Offset, 10)
			waits = firstBlocker(c.Head)
		}
		mark := c.Channel
		if c.Held > 0 {
			mark = "▲ " + mark // held rows stand out without colour
		}
		if err := t.Append(mark, pos(c.Settled), pos(c.ReceivedUpTo), c.Held, head, waits); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	var blocked []inspect.ChannelSummary
	for _, c := range s.Channels {
		if c.Head != nil {
			blocked = append(blocked, c)
		}
	}
	if len(blocked) > 0 {
		fmt.Fprintf(w, "\nBlocked heads:\n")
		t := tablewriter.NewTable(w)
		t.Header("Head", "Blocker", "Required", "Settled", "Kind", "Root")
		for _, c := range blocked {
			h := c.Head
			at := fmt.Sprintf("%s@%d", c.Channel, h.Offset)
			if h.Undecodable != "" {
				if err := t.Append(at, "undecodable header", "-", "-", h.Undecodable, "-"); err != nil {
					return err
				}
			}
			for _, b := range h.Blockers {
				root := h.Root
				switch {
				case h.Cyclic:
					root = "(cycle)"
				case root == "":
					root = "-"
				}
				if err := t.Append(at, b.Channel, b.Required, pos(b.Settled), b.Kind, root); err != nil {
					return err
				}
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(s.Cycles) > 0 {
		fmt.Fprintf(w, "\nWait cycles (a stamp broke the contract: honest stamps never wait in a circle):\n")
		for _, c := range s.Cycles {
			fmt.Fprintf(w, "  %s → %s\n", strings.Join(c, " → "), c[0])
		}
	}
	return nil
}

func firstBlocker(h *inspect.HeadSummary) string {
	if h.Undecodable != "" {
		return "undecodable (" + h.Undecodable + ")"
	}
	if len(h.Blockers) == 0 {
		return ""
	}
	b := h.Blockers[0]
	s := fmt.Sprintf("%s ≥ %d, settled %s", b.Channel, b.Required, pos(b.Settled))
	if n := len(h.Blockers) - 1; n > 0 {
		s += fmt.Sprintf(" (+%d)", n)
	}
	return s
}
