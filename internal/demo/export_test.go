package demo

import (
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

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

// UnpublishFirstCommits makes the first commit of each transactional
// producer of d and of its notifiers (of those with the transactional ids
// txids, when any are given) meet franz-go v1.22.3's unpublished
// partitions (docs/troubleshooting.md): just before EndTransaction the
// producer forgets the topics it wrote, as it has not yet stored them
// when the gap is hit, so EndTransaction finds nothing produced, sends an
// abort and returns nil. hits says how many commits it did that to. Call
// it before Run and StartNotifier.
func UnpublishFirstCommits(d *Demo, txids ...string) (hits func() int) {
	var mu sync.Mutex
	done := map[*kgo.Client]bool{}
	d.beforeEnd = func(cl *kgo.Client, written []*kgo.Record, commit bool) {
		mu.Lock()
		defer mu.Unlock()
		txid, _ := cl.OptValue(kgo.TransactionalID).(string)
		if !commit || done[cl] || (len(txids) > 0 && !slices.Contains(txids, txid)) {
			return
		}
		done[cl] = true
		topics := map[string]bool{}
		for _, r := range written {
			topics[r.Topic] = true
		}
		for topic := range topics {
			cl.PurgeTopicsFromProducing(topic)
		}
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(done)
	}
}
