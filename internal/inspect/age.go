package inspect

import "time"

// Age is a duration that may be unknown.
type Age struct {
	D     time.Duration
	Known bool
}
