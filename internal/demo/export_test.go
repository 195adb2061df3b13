package demo

import (
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/causalctl/causalctl/internal/live"
)

// WatchFaulted is Watch with the slow fault signalled on faulted instead of
// by this demo's pipeline: for tests that replay a recorded run on a clock
// of their own.
func (d *Demo) WatchFaulted(src live.Source, faulted <-chan struct{}) *Feed {
	return d.watch(src, faulted)
}

// SkipTombstones breaks n's writer: delivered records stay in its store.
func SkipTombstones(n *Notifier) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.skipTombstones = true
}

// OnStep makes d call f after each pipeline step, on Run's goroutine. Call
// it before Run.
func OnStep(d *Demo, f func(step int)) { d.onStep = f }

// Cluster returns d's embedded broker, for tests that make it misbehave.
func Cluster(d *Demo) *kfake.Cluster { return d.cluster }
