package holds_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/live"
)

// liveCauses runs the live view's driver (as watch does) over the
// fixture's topics from their start until it has received n records, and
// returns its snapshot's head causes, own and root, by channel.
func liveCauses(t *testing.T, f *fixture, topics []string, n int64) map[string][2]inspect.Cause {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: f.c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sels, err := kafka.ParseTopicSels(topics)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := kafka.ParseOffsets("start", f.now)
	fol, err := cl.Follow(ctx, sels, spec, kafka.WithLogFacts(), kafka.FetchWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var scope []clock.Channel
	for _, pc := range fol.Channels() {
		scope = append(scope, pc.Channel())
	}
	d, err := live.New(fol, live.Config{Replay: engine.Config{Scope: scope, Names: cl.Names()}, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(rctx) }()
	defer func() { stop(); <-done }()
	for {
		if s, ok := d.Latest(); ok && s.Received >= n {
			out := map[string][2]inspect.Cause{}
			for _, h := range s.Heads {
				out[h.Channel] = [2]inspect.Cause{h.Cause, h.RootCause}
			}
			return out
		}
		if ctx.Err() != nil {
			t.Fatalf("the live driver did not receive %d records", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSameCauseEverywhere: one table test through the three views of the
// one classifier — holds, the replay summary and the live view's snapshot
// give every held head the same cause and root cause.
func TestSameCauseEverywhere(t *testing.T) {
	for _, c := range fixtureCases {
		switch c.name {
		case "lagging", "truncated", "marker-claim", "out-of-scope":
			// A bounded range, gate starts, receipt-only settling or an
			// unread scope channel: not what a live view of every topic
			// from the start is.
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			c.setup(f)
			var flags, topics []string
			for n := range f.ids {
				flags, topics = append(flags, "-t", n), append(topics, n)
			}
			_, out, stderr := f.run(append([]string{"holds", "-o", "json"}, flags...)...)
			var rep report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s %s", err, out, stderr)
			}
			fromHolds := map[string][2]inspect.Cause{}
			for _, h := range rep.Heads {
				fromHolds[h.Channel] = [2]inspect.Cause{inspect.Cause(h.Cause), inspect.Cause(h.Root.Cause)}
			}
			_, sumOut, _ := f.run(append([]string{"replay", "-o", "json"}, flags...)...)
			var sum struct {
				Received int64
				Channels []struct {
					Channel string
					Head    *struct {
						Cause     inspect.Cause `json:"cause"`
						RootCause inspect.Cause `json:"root_cause"`
					}
				}
			}
			if err := json.Unmarshal([]byte(sumOut), &sum); err != nil {
				t.Fatal(err)
			}
			fromSummary := map[string][2]inspect.Cause{}
			for _, ch := range sum.Channels {
				if ch.Head != nil {
					fromSummary[ch.Channel] = [2]inspect.Cause{ch.Head.Cause, ch.Head.RootCause}
				}
			}
			fromLive := liveCauses(t, f, []string{strings.Join(topics, ",")}, sum.Received)
			if len(fromHolds) == 0 {
				t.Fatal("nothing held")
			}
			for ch, want := range fromHolds {
				if fromSummary[ch] != want || fromLive[ch] != want {
					t.Errorf("%s: holds %v, replay summary %v, live view %v", ch, want, fromSummary[ch], fromLive[ch])
				}
			}
			if len(fromSummary) != len(fromHolds) || len(fromLive) != len(fromHolds) {
				t.Errorf("heads: holds %v, replay summary %v, live view %v", fromHolds, fromSummary, fromLive)
			}
		})
	}
}
