package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/view"
)

// OpenTTY opens the controlling terminal for keys when stdin carries the
// capture.
func OpenTTY() (io.ReadCloser, error) { return os.Open("/dev/tty") }

// runStepper runs the replay under the keyboard: the stepper of the TUI.
// The input is opened to be read again (a broker range spooled to a
// temporary capture), so that jumping back re-reads a file, not the
// cluster.
func runStepper(ctx context.Context, opts *Options) error {
	in, err := opts.OpenInput(ctx, &opts.InputFlags, input.Read{Reread: true})
	if err != nil {
		return err
	}
	defer in.Close()
	name := in.Name
	cfg, err := gateConfig(opts, in)
	if err != nil {
		return err
	}
	open := func() (engine.Source, error) {
		rd, err := in.Capture.Open(capture.SkipPayloads())
		if err != nil {
			return nil, err
		}
		return reorder(rd, opts)
	}
	st, err := view.NewStepper(open, cfg, view.StepperOptions{Title: "causalctl replay", Source: name})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	keys := opts.IO.In
	if opts.Input == "-" {
		// The capture came on stdin: keys come from the terminal itself.
		tty, err := opts.OpenTTY()
		if err != nil {
			return fmt.Errorf("--tui with the capture on stdin needs a terminal for keys: %w", err)
		}
		defer tty.Close()
		keys = tty
	}
	err = tui.Run(ctx, keys, opts.IO.Out, tui.Options{Title: "causalctl replay", Controller: tui.StepperController(st), Color: opts.IO.Color})
	if errors.Is(err, context.Canceled) {
		return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted}
	}
	return err
}
