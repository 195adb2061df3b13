package tui

import (
	"time"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/view"
)

// Controller drives an offline replay from the keyboard. The model calls
// it on stepper keys and on its own ticks while it runs, then renders what
// Snapshot returns. Every call comes from the program's event loop, one at
// a time, so an implementation needs no locking and starts no goroutine.
type Controller interface {
	// Snapshot returns the state now.
	Snapshot() view.Snapshot
	// Step feeds one item (one receive or position advance).
	Step()
	// NextDelivery and NextHold feed items until one delivers a record,
	// or holds one.
	NextDelivery()
	NextHold()
	// ToggleRun runs or pauses; Running says which.
	ToggleRun()
	Running() bool
	// Faster and Slower change the running speed.
	Faster()
	Slower()
	// JumpStart and JumpEnd go to the start and the end of the input.
	JumpStart()
	JumpEnd()
	// Jump goes to a target people typed (CH@OFFSET or an item number);
	// the error is shown under the view.
	Jump(spec string) error
	// Advance feeds what elapsed time allows while running.
	Advance(elapsed time.Duration)
}

// StepperController adapts a replay.Stepper to the Controller the model
// calls: `replay --tui` builds the Stepper and passes this in Options.
func StepperController(s *view.Stepper) Controller { return stepperController{s} }

type stepperController struct{ s *view.Stepper }

func (c stepperController) Snapshot() view.Snapshot       { return c.s.Snapshot() }
func (c stepperController) Step()                         { c.s.Step() }
func (c stepperController) NextDelivery()                 { c.s.StepTo(engine.EventDeliver) }
func (c stepperController) NextHold()                     { c.s.StepTo(engine.EventHold) }
func (c stepperController) ToggleRun()                    { c.s.SetRunning(!c.s.Running()) }
func (c stepperController) Running() bool                 { return c.s.Running() }
func (c stepperController) Faster()                       { c.s.Faster() }
func (c stepperController) Slower()                       { c.s.Slower() }
func (c stepperController) JumpStart()                    { _ = c.s.JumpStart() } // a failure shows in the state
func (c stepperController) JumpEnd()                      { c.s.JumpEnd() }
func (c stepperController) Jump(spec string) error        { return c.s.Jump(spec) }
func (c stepperController) Advance(elapsed time.Duration) { c.s.Advance(elapsed) }
