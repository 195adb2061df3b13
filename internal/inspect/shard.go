package inspect

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// MergeShards combines the summaries of the N shards of one per-task
// replay (replay --tasks --shard K/N, K = 0…N-1) into the summary the
// single run (replay --tasks) gives: the counts summed, the channels and
// the cycles task by task in rising task order, as MergeTasks orders
// them. Every shard must be there exactly once, all of one N and one
// interleaving, each channel of a task of its own shard. When a shard
// failed closed, the merge carries its failure (the earliest line first,
// then the lowest task); the single run stops every task there, the other
// shards did not, so only the failure is the single run's then.
func MergeShards(sums []*Summary) (*Summary, error) {
	if len(sums) == 0 {
		return nil, fmt.Errorf("no shard summary to merge")
	}
	n := int32(0)
	seen := map[int32]bool{}
	for i, s := range sums {
		switch {
		case s.Shard == nil:
			return nil, fmt.Errorf("summary %d is of no shard: replay --tasks --shard K/N writes one", i+1)
		case n == 0:
			n = s.Shard.Count
		case s.Shard.Count != n:
			return nil, fmt.Errorf("summary %d is of shard %s, summary 1 of %d shards", i+1, s.Shard, n)
		}
		if s.Shard.Index < 0 || s.Shard.Index >= s.Shard.Count {
			return nil, fmt.Errorf("summary %d: shard %s is out of range", i+1, s.Shard)
		}
		if seen[s.Shard.Index] {
			return nil, fmt.Errorf("shard %s given twice", s.Shard)
		}
		seen[s.Shard.Index] = true
		if s.Interleave != sums[0].Interleave {
			return nil, fmt.Errorf("shard %s was replayed in interleaving %q, shard %s in %q", s.Shard, s.Interleave, sums[0].Shard, sums[0].Interleave)
		}
	}
	if int32(len(sums)) != n {
		var missing []string
		for k := range n {
			if !seen[k] {
				missing = append(missing, fmt.Sprintf("%d/%d", k, n))
			}
		}
		return nil, fmt.Errorf("missing shard %s: every shard K/%d from K = 0 to %d is needed", strings.Join(missing, ", "), n, n-1)
	}

	type task struct {
		num      int32
		channels []ChannelSummary
		cycles   [][]string
	}
	tasks := map[int32]*task{}
	out := &Summary{Interleave: sums[0].Interleave, Channels: []ChannelSummary{}, Cycles: [][]string{}}
	var failedTask int32
	for _, s := range sums {
		out.Received += s.Received
		out.Delivered += s.Delivered
		out.Dropped += s.Dropped
		out.Held += s.Held
		out.Skipped += s.Skipped
		out.Interrupted = out.Interrupted || s.Interrupted
		taskOf := map[string]int32{}
		for _, c := range s.Channels {
			if c.Task == nil {
				return nil, fmt.Errorf("shard %s: channel %s has no task: replay --tasks writes one", s.Shard, c.Channel)
			}
			if !s.Shard.Has(*c.Task) {
				return nil, fmt.Errorf("shard %s holds task %d, of shard %d/%d", s.Shard, *c.Task, *c.Task%n, n)
			}
			t := tasks[*c.Task] // of this shard alone: shards differ in K
			if t == nil {
				t = &task{num: *c.Task}
				tasks[*c.Task] = t
			}
			taskOf[c.Channel] = *c.Task
			t.channels = append(t.channels, c)
		}
		for _, cy := range s.Cycles {
			num, ok := cycleTask(cy, taskOf)
			if !ok || tasks[num] == nil {
				return nil, fmt.Errorf("shard %s: cycle %v is of no one task of the shard", s.Shard, cy)
			}
			tasks[num].cycles = append(tasks[num].cycles, cy)
		}
		if s.Failed != nil {
			num := int32(-1)
			if t, ok := taskOf[s.Failed.Channel]; ok {
				num = t
			}
			if out.Failed == nil || s.Failed.Line < out.Failed.Line || s.Failed.Line == out.Failed.Line && num < failedTask {
				out.Failed, failedTask = s.Failed, num
			}
		}
	}
	order := slices.SortedFunc(func(yield func(*task) bool) {
		for _, t := range tasks {
			if !yield(t) {
				return
			}
		}
	}, func(a, b *task) int { return cmp.Compare(a.num, b.num) })
	for _, t := range order {
		out.Channels = append(out.Channels, t.channels...)
		out.Cycles = append(out.Cycles, t.cycles...)
	}
	return out, nil
}

// cycleTask is the one task whose channels a wait cycle runs through: a
// task's gate waits on its own channels only.
func cycleTask(cycle []string, taskOf map[string]int32) (int32, bool) {
	var num int32
	for i, ch := range cycle {
		t, ok := taskOf[ch]
		if !ok || i > 0 && t != num {
			return 0, false
		}
		num = t
	}
	return num, len(cycle) > 0
}
