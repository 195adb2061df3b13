// Package render writes what more than one command prints: the replay
// summary (SPEC §5) as text for people or as JSON, the same for `replay`,
// `demo` and any command that runs the gate, so that their summaries read
// the same. Commands share renderers through this package, never by
// importing each other.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
)

// Summary renders a summary as replay prints it at the end of a run:
// "text", the headline and tables people read, or "json", the summary
// object of SPEC §5 on one line.
func Summary(w io.Writer, format string, s *inspect.Summary) error {
	return writeSummary(w, format, s, "interrupted")
}

// StoppedSummary is Summary for a command that runs until it is stopped
// (demo): stopped before its end, by q or Ctrl-C, its text headline says
// "stopped", not "interrupted" (the JSON's interrupted field is the same).
func StoppedSummary(w io.Writer, format string, s *inspect.Summary) error {
	return writeSummary(w, format, s, "stopped")
}

func writeSummary(w io.Writer, format string, s *inspect.Summary, stopped string) error {
	switch format {
	case "text":
		return summaryText(w, s, stopped)
	case "json":
		b, err := JSONLine(s)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("summary format %q: want text or json", format)
}

// JSONLine encodes v as one line of JSON with a newline, HTML left alone:
// the JSON output of every command.
func JSONLine(v any) ([]byte, error) {
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

// summaryText renders the summary for people: a headline (stopped says a
// summary stopped before its end: "interrupted" or "stopped"), the channels, and
// the blocked heads with their blockers. It stays within 80 columns for
// channel names of ordinary length.
func summaryText(w io.Writer, s *inspect.Summary, stopped string) error {
	state := "complete"
	switch {
	case s.Failed != nil:
		state = "FAILED CLOSED"
	case s.Interrupted:
		state = stopped
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

	t := NewTable(Column{Title: "Channel"}, Column{Title: "Settled", Right: true}, Column{Title: "Received", Right: true},
		Column{Title: "Held", Right: true}, Column{Title: "Head", Right: true}, Column{Title: "Waits on"})
	for _, c := range s.Channels {
		head, waits := "-", "-"
		if c.Head != nil {
			head = strconv.FormatInt(c.Head.Offset, 10)
			waits = firstBlocker(c.Head)
		}
		mark := c.Channel
		if c.Held > 0 {
			mark = "▲ " + mark // held rows stand out without colour
		}
		t.Append(mark, pos(c.Settled), pos(c.ReceivedUpTo), strconv.Itoa(c.Held), head, waits)
	}
	// A summary is written once, to a file as often as to a terminal: its
	// tables are laid out whole.
	if err := t.Write(w, 0); err != nil {
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
		t := NewTable(Column{Title: "Head"}, Column{Title: "Blocker"}, Column{Title: "Required", Right: true},
			Column{Title: "Settled", Right: true}, Column{Title: "Kind"}, Column{Title: "Root"})
		for _, c := range blocked {
			h := c.Head
			at := fmt.Sprintf("%s@%d", c.Channel, h.Offset)
			if h.Undecodable != "" {
				t.Append(at, "undecodable header", "-", "-", h.Undecodable, "-")
			}
			for _, b := range h.Blockers {
				root := h.Root
				switch {
				case h.Cyclic:
					root = "(cycle)"
				case root == "":
					root = "-"
				}
				t.Append(at, b.Channel, strconv.FormatInt(b.Required, 10), pos(b.Settled), string(b.Kind), root)
			}
		}
		if err := t.Write(w, 0); err != nil {
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
