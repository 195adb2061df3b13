package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// TestLiveDriver drives the view as watch and demo do: one goroutine runs
// the gate and offers a snapshot now and then on a channel of capacity
// one — never blocking the gate, never one per record — and the program
// draws them. Under -race it also shows that a snapshot shares nothing
// with the gate that goes on changing.
func TestLiveDriver(t *testing.T) {
	const channels, records = 20, 50000
	names := &clock.Names{}
	var scope []clock.Channel
	for k := range channels {
		id := clock.TopicID{0x1e, 15: byte(k/4 + 1)}
		names.Add(fmt.Sprintf("topic%d", k/4), id)
		scope = append(scope, clock.Channel{Topic: id, Partition: int32(k % 4)})
	}
	r, err := engine.New(engine.Config{Scope: scope, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan view.Snapshot, 1)
	in, inW := io.Pipe()
	var out testutil.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), in, &out, Options{Snapshots: ch}) }()

	tr := view.NewEvents(20)
	rates := &view.RateMeter{}
	snapshot := func() view.Snapshot {
		return view.SnapshotOf(r, view.SnapshotOptions{Title: "causalctl watch", Source: "test", Now: time.Now(),
			Events: tr, Rates: rates, StampEvery: time.Second})
	}
	emit := func(ev *engine.Event) error { tr.Observe(ev, time.Now()); return nil }
	next := make([]int64, channels)
	offered := 0
	for n := range records {
		c := n % channels
		// Every record claims the previous one of the next channel, so
		// records wait for each other across channels.
		var es []clock.Entry
		if d := (c + 1) % channels; next[d] > 0 {
			es = append(es, clock.Entry{Channel: scope[d], Position: next[d] - 1})
		}
		it := &record.Item{Kind: record.KindRecord, Topic: fmt.Sprintf("topic%d", c/4), TopicID: scope[c].Topic,
			Partition: scope[c].Partition, Offset: next[c],
			Headers: []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(es...))}}}
		next[c]++
		if err := r.Feed(it, emit); err != nil {
			t.Fatal(err)
		}
		if n%1000 == 999 && len(ch) == 0 {
			select {
			case ch <- snapshot():
				offered++
			default:
			}
		}
	}
	ch <- snapshot() // the last one waits its turn
	close(ch)
	if offered == 0 {
		t.Fatal("no snapshot offered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "received 50 000") {
		if time.Now().After(deadline) {
			t.Fatalf("the last snapshot was not drawn:\n%q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	inW.Write([]byte("q"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
