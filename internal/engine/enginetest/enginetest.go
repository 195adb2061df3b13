// Package enginetest holds the assertions tests make on replays: that the
// gate failed closed, and where, read from the typed error or summary
// rather than from the text a person reads. Only tests import it.
package enginetest

import (
	"testing"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/inspect"
)

// FailedClosed fails t unless err says the gate failed closed
// (engine.FailureOf) at offset on channel, written as people write it
// ("orders/0"), with code. It returns the failure, nil when there is none.
func FailedClosed(t testing.TB, err error, channel string, offset int64, code gate.Code) *engine.InputError {
	t.Helper()
	ie, ok := engine.FailureOf(err)
	if !ok {
		t.Errorf("error %v: the gate did not fail closed; want it to at %s offset %d (%s)", err, channel, offset, code)
		return nil
	}
	if ie.Channel != channel || ie.Offset != offset || ie.Code != code {
		t.Errorf("failed closed at %s offset %d (%s), want %s offset %d (%s)", ie.Channel, ie.Offset, ie.Code, channel, offset, code)
	}
	return ie
}

// SummaryFailed fails t unless a replay summary's failure f (Summary.Failed)
// says the gate failed closed at offset on channel with code.
func SummaryFailed(t testing.TB, f *inspect.Failure, channel string, offset int64, code gate.Code) {
	t.Helper()
	switch {
	case f == nil:
		t.Errorf("the summary has no failure; want the gate failed closed at %s offset %d (%s)", channel, offset, code)
	case f.Channel != channel || f.Offset != offset || f.Code != string(code):
		t.Errorf("summary: failed closed at %s offset %d (%s), want %s offset %d (%s)", f.Channel, f.Offset, f.Code, channel, offset, code)
	}
}
