package demo

import "github.com/causalctl/causalctl/internal/live"

// WatchFaulted is Watch with the slow fault signalled on faulted instead of
// by this demo's pipeline: for tests that replay a recorded run on a clock
// of their own.
func (d *Demo) WatchFaulted(src live.Source, faulted <-chan struct{}) *Feed {
	return d.watch(src, faulted)
}
