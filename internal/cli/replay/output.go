package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
)

// writer renders a replay in one output format. ndjson events are
// formatted by hand: at a million events a second, reflection would cost
// more than the gate.
type writer struct {
	format string
	bw     *cmdutil.LineWriter // whole lines only, under the FinalOutput
	names  *clock.Names
	quoted map[clock.Channel][]byte // channel → its JSON string
	buf    []byte
	events int
	// classify names a hold's blockers as at that moment (inspect's one
	// classifier); nil writes the gate's own kinds.
	classify func(gate.Blocker) inspect.Cause
	// task is the task of the events written (--tasks); −1 for none.
	task int32
}

func newWriter(w io.Writer, final *cmdutil.FinalOutput, format string, names *clock.Names) *writer {
	return &writer{format: format, bw: cmdutil.NewLineWriter(w, final), names: names, quoted: map[clock.Channel][]byte{}, task: -1}
}

// flushEvery bounds how many events wait in the buffer, so that a slow
// replay (stdin fed by hand, a long cascade) still streams.
const flushEvery = 512

func (w *writer) event(ev *engine.Event) error {
	if w.format != "ndjson" {
		return nil
	}
	b := w.buf[:0]
	b = append(b, `{"type":"`...)
	b = append(b, ev.Type.String()...)
	b = append(b, '"')
	if ev.Type == engine.EventDeliver {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, ev.Seq, 10)
	}
	b = append(b, `,"channel":`...)
	b = append(b, w.channel(ev.Channel)...)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, ev.Offset, 10)
	if w.task >= 0 {
		b = append(b, `,"task":`...)
		b = strconv.AppendInt(b, int64(w.task), 10)
	}
	if ev.Line > 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, ev.Line, 10)
	}
	if ev.Type == engine.EventHold {
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
				if w.classify != nil {
					b = append(b, w.classify(bl)...)
				} else {
					b = append(b, bl.Kind.String()...)
				}
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
	if w.format != "ndjson" {
		return render.Summary(w.bw, w.format, s)
	}
	b, err := render.JSONLine(s)
	if err != nil {
		return err
	}
	w.bw.WriteString(`{"type":"summary",`)
	w.bw.Write(b[1:])
	return nil
}

// finish writes the summary (when report) and what is still buffered as
// the command's final document: an interrupt's grace does not cut it
// (cmdutil.LineWriter.Finish).
func (w *writer) finish(report bool, summary func() error) error {
	var last func() error
	if report {
		last = summary
	}
	if err := w.bw.Finish(last); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
