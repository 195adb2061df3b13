package gate_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

func TestCode(t *testing.T) {
	de := &clock.DecodeError{Code: clock.CodeTrailingBytes}
	if got := gate.HeaderCode(fmt.Errorf("record 3: %w", de)); got != gate.Code(clock.CodeTrailingBytes) {
		t.Errorf("HeaderCode of a wrapped DecodeError = %q", got)
	}
	if got := gate.HeaderCode(errors.New("mangled")); got != gate.CodeUndecodable {
		t.Errorf("HeaderCode of an error with no code = %q", got)
	}
	for _, tc := range []struct {
		code   gate.Code
		header bool
	}{
		{gate.Code(clock.CodeTruncated), true},
		{gate.CodeUndecodable, true},
		{gate.CodeOutOfOrderFeed, false},
		{"", false},
	} {
		if got := tc.code.Header(); got != tc.header {
			t.Errorf("%q.Header() = %v, want %v", tc.code, got, tc.header)
		}
	}
}
