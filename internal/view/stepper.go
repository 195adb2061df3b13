package view

import (
	"cmp"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"

	"github.com/causalctl/causalctl/internal/replay"
)

// StepperOptions configure a Stepper.
type StepperOptions struct {
	replay.StepperOptions
	// Title and Source are shown in snapshots (e.g. "causalctl replay"
	// and the capture's name).
	Title, Source string
	// Recent is how many events snapshots list (default 50).
	Recent int
}

// Stepper is a replay.Stepper paired with the Events of its current
// replay, so that it can describe itself as a Snapshot at every step.
type Stepper struct {
	*replay.Stepper
	opts StepperOptions
	tr   *Events
}

// NewStepper returns a Stepper at the start of the input, paused; open and
// cfg are as for replay.NewStepper.
func NewStepper(open func() (engine.Source, error), cfg engine.Config, opts StepperOptions) (*Stepper, error) {
	s := &Stepper{opts: opts}
	recent := cmp.Or(opts.Recent, 50)
	inner := opts.StepperOptions
	inner.NewObserver = func(*engine.Replayer) replay.Observer {
		s.tr = NewEvents(recent)
		return s.tr
	}
	st, err := replay.NewStepper(open, cfg, inner)
	if err != nil {
		return nil, err
	}
	s.Stepper = st
	return s, nil
}

// Snapshot describes the replay's state now, with the stepper's position.
func (s *Stepper) Snapshot() Snapshot {
	pos := s.Position()
	state := s.State()
	return SnapshotOf(s.Replayer(), SnapshotOptions{
		Title:  s.opts.Title,
		Source: s.opts.Source,
		State:  state,
		Now:    s.Now(),
		Events: s.tr,
		Facts: inspect.Facts{
			Log:      s.Replayer().LogFacts,
			InputEnd: s.InputEnd,
			Reads:    s.Reads,
			// Past the end, whatever is missing is beyond the input.
			Exhausted: state == engine.StateFinished,
		},
		Offline:  true,
		Position: &pos,
	})
}
