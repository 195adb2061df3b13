package clock

import (
	"errors"
	"fmt"
)

// Code is the stable reason a header value is undecodable (SPEC §2). Codes
// are printed as they are and scripts may match on them.
type Code string

// The reason codes. The first block is the parsley.causes grammar of SPEC §2;
// the second adds the rules of the legacy parsley-clock layout (SPEC §2.1).
const (
	CodeNullValue              Code = "null-value"
	CodeTruncated              Code = "truncated"
	CodeUnknownVersion         Code = "unknown-version"
	CodeNonMinimalVarint       Code = "non-minimal-varint"
	CodeVarintOverflow         Code = "varint-overflow"
	CodeZeroTopicID            Code = "zero-topic-id"
	CodeTopicsNotAscending     Code = "topics-not-ascending"
	CodeZeroPartitions         Code = "zero-partitions"
	CodePartitionsNotAscending Code = "partitions-not-ascending"
	CodeNegativePosition       Code = "negative-position"
	CodeReservedPosition       Code = "reserved-position"
	CodeTrailingBytes          Code = "trailing-bytes"
	CodeDuplicateHeader        Code = "duplicate-header"
	CodeTooLarge               Code = "too-large"

	CodeNegativeCount     Code = "negative-count"
	CodeNegativePartition Code = "negative-partition"
)

// Codes returns every reason code a decoder of this package can return,
// in a new slice.
func Codes() []Code {
	return []Code{
		CodeNullValue, CodeTruncated, CodeUnknownVersion, CodeNonMinimalVarint,
		CodeVarintOverflow, CodeZeroTopicID, CodeTopicsNotAscending, CodeZeroPartitions,
		CodePartitionsNotAscending, CodeNegativePosition, CodeReservedPosition,
		CodeTrailingBytes, CodeDuplicateHeader, CodeTooLarge,
		CodeNegativeCount, CodeNegativePartition,
	}
}

// DecodeError reports why a header value is undecodable.
type DecodeError struct {
	Code   Code   // stable reason code
	Offset int    // byte offset in the value where the rule was broken
	Detail string // human explanation; may be empty
}

func (e *DecodeError) Error() string {
	if e.Detail == "" {
		return string(e.Code)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Detail)
}

// CodeOf returns the reason code carried by err, if err wraps a DecodeError.
func CodeOf(err error) (Code, bool) {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Code, true
	}
	return "", false
}

func fail(code Code, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Code: code, Offset: off, Detail: fmt.Sprintf(format, args...)}
}
