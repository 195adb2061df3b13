package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
)

// Code is the reason a gate failed closed: an undecodable header's reason
// code (a clock.Code, or CodeUndecodable when its error carries none), or
// CodeOutOfOrderFeed. Codes are printed as they are and scripts may match
// on them.
type Code string

// Reason codes of a FailClosedError that are not header reason codes.
const (
	// CodeOutOfOrderFeed: a record arrived above the settled position but
	// not above the highest position already received on its channel — the
	// feed broke per-channel offset order.
	CodeOutOfOrderFeed Code = "out-of-order-feed"
	// CodeUndecodable is the code of an undecodable header whose error
	// carries no clock.Code.
	CodeUndecodable Code = "undecodable"
)

// HeaderCode returns the code of a gate that failed closed on a header
// undecodable for decodeErr: its clock.Code, else CodeUndecodable.
func HeaderCode(decodeErr error) Code {
	if c, ok := clock.CodeOf(decodeErr); ok {
		return Code(c)
	}
	return CodeUndecodable
}

// Header reports whether the gate failed closed on a record's undecodable
// header, rather than on the feed's order.
func (c Code) Header() bool { return c != "" && c != CodeOutOfOrderFeed }

// Sentinel errors. Inputs return them wrapped, with the channel and offset.
var (
	// ErrNotInScope: the input names a channel outside the gate's scope.
	// Nothing changes.
	ErrNotInScope = errors.New("channel not in scope")
	// ErrInScope: AddChannel for a channel already in scope. Nothing changes.
	ErrInScope = errors.New("channel already in scope")
	// ErrOutOfOrderFeed is wrapped by the Err of a FailClosedError with
	// code CodeOutOfOrderFeed.
	ErrOutOfOrderFeed = errors.New(string(CodeOutOfOrderFeed))
)

// FailClosedError is the error of a gate that failed closed. Once failed, a
// gate returns the same *FailClosedError from every input and changes no
// more.
type FailClosedError struct {
	Channel clock.Channel
	Offset  int64
	// Code is the header's reason code (a clock.Code, or CodeUndecodable)
	// or CodeOutOfOrderFeed.
	Code Code
	// Err is the decode error, or for an out-of-order feed an error
	// wrapping ErrOutOfOrderFeed.
	Err error
}

// Error returns one line naming the channel (UUID/PARTITION), the offset and
// the reason code.
func (e *FailClosedError) Error() string {
	msg := string(e.Code)
	if e.Err != nil {
		// A DecodeError already starts with its code; do not say it twice.
		if s := e.Err.Error(); strings.HasPrefix(s, msg) {
			msg = s
		} else {
			msg += ": " + s
		}
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	return fmt.Sprintf("gate failed closed at %v offset %d: %s", e.Channel, e.Offset, msg)
}

// Unwrap returns Err.
func (e *FailClosedError) Unwrap() error { return e.Err }
