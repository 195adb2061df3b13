package process

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// TestReadProcesses: discovery finds the changelogs by suffix and prefix;
// each changelog's process is handed over once, by its index; at most
// concurrency are in hand at once, and that many are.
func TestReadProcesses(t *testing.T) {
	apps := []string{"a1", "a2", "a3", "a4", "a5", "b1"}
	var opts []kfake.Opt
	for _, app := range apps {
		opts = append(opts, kfake.SeedTopics(2, parsley.ChangelogTopic(app)))
	}
	c := kafkatest.Cluster(t, append(opts, kfake.SeedTopics(1, "orders"))...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	changelogs, listing, err := Discover(ctx, cl, "a")
	if err != nil || len(changelogs) != 5 || changelogs[0] != parsley.ChangelogTopic("a1") || len(listing[changelogs[4]]) != 2 {
		t.Fatalf("changelogs %v, %v", changelogs, err)
	}
	const budget = 2
	var inHand, most atomic.Int32
	var mu sync.Mutex
	got := map[int]string{}
	both := make(chan struct{})
	var once sync.Once
	err = ReadMany(ctx, cl, changelogs, listing, time.Second, budget, func(i int, p *inspect.Process, err error) {
		n := inHand.Add(1)
		defer inHand.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n == budget {
			once.Do(func() { close(both) })
		}
		// The first ones wait for each other: the budget is used.
		select {
		case <-both:
		case <-ctx.Done():
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("%s: %v", changelogs[i], err)
			return
		}
		if _, dup := got[i]; dup {
			t.Errorf("%d handed over twice", i)
		}
		got[i] = p.Changelog.Topic
	})
	if err != nil {
		t.Fatal(err)
	}
	if most.Load() != budget {
		t.Errorf("at most %d in hand at once, want %d", most.Load(), budget)
	}
	for i, topic := range changelogs {
		if got[i] != topic {
			t.Errorf("index %d: %q, want %q", i, got[i], topic)
		}
	}
}
