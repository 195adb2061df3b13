package tui_test

import (
	"context"
	"os"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/view"
)

// A live driver (watch, demo): the goroutine that runs the gate offers a
// snapshot at most ten times a second on a channel of capacity one, and
// never waits for the view; the view waits on the channel.
func Example_live() {
	var (
		ctx     = context.Background()
		r       *engine.Replayer                  // over the watched scope
		records <-chan *record.Item               // from the brokers
		logEnd  func(clock.Channel) (int64, bool) // from ListOffsets, refreshed now and then
	)
	snaps := make(chan view.Snapshot, 1)
	go func() {
		defer close(snaps)
		tr := view.NewEvents(50)
		rates := &view.RateMeter{}
		emit := func(ev *engine.Event) error { tr.Observe(ev, time.Now()); return nil }
		build := func(now time.Time) view.Snapshot {
			return view.SnapshotOf(r, view.SnapshotOptions{
				Title: "causalctl watch", Source: "broker:9092", Now: now,
				Events: tr, Rates: rates, StampEvery: time.Second, LogEnd: logEnd,
			})
		}
		last := time.Now()
		for it := range records {
			if err := r.Feed(it, emit); err != nil {
				// Failed closed (or bad input): show where, and stop.
				tr.Stop(err, time.Now())
				snaps <- build(time.Now())
				return
			}
			if now := time.Now(); now.Sub(last) >= tui.TickInterval && len(snaps) == 0 {
				last = now
				snaps <- build(now)
			}
		}
	}()
	_ = tui.Run(ctx, os.Stdin, os.Stdout, tui.Options{Snapshots: snaps, Color: true})
}

// replay --tui: the stepper is driven from the program's own event loop.
func Example_stepper() {
	open := func() (engine.Source, error) { return capture.NewReader(os.Stdin), nil } // re-opens the capture
	var cfg engine.Config                                                             // scope, starts, names
	s, err := view.NewStepper(open, cfg, view.StepperOptions{Title: "causalctl replay", Source: "capture.ndjson"})
	if err != nil {
		return
	}
	_ = tui.Run(context.Background(), os.Stdin, os.Stdout, tui.Options{Controller: tui.StepperController(s)})
	_ = inspect.SummaryOf(s.Replayer(), inspect.Facts{}) // what was reached when the view was closed
}
