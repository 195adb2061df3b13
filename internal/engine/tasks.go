package engine

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// Tasks replays as a Parsley process does: one gate per task, task p
// receiving partition p of every topic in scope that has one (SPEC §6).
// A claim of a record on a channel of another partition is outside its
// task's scope and, as there, ignored. Each item goes to the gate of its
// partition; a Tasks is not safe for concurrent use.
type Tasks struct {
	// Tasks are the tasks by rising number.
	Tasks []*Task
	byNum map[int32]*Task
	// skipped counts the records of partitions no task receives.
	skipped int64
}

// Task is one task's gate.
type Task struct {
	Task int32
	*Replayer
}

// TaskSeed is one task's starting state: the gate state to restore
// (Config.Seed), e.g. from its ordering changelog.
type TaskSeed struct {
	Task  int32
	State []gate.ChannelState
}

// SplitTasks splits a scope into tasks: task p's scope is the channels of
// partition p, in scope order. The tasks come by rising number.
func SplitTasks(scope []clock.Channel) map[int32][]clock.Channel {
	out := map[int32][]clock.Channel{}
	for _, ch := range scope {
		out[ch.Partition] = append(out[ch.Partition], ch)
	}
	return out
}

// NewTasks returns one gate per task over cfg.Scope split by partition,
// each starting at cfg.Starts for its channels. With seeds, the tasks are
// the seeds' instead, each restored from its state (cfg.Scope and
// cfg.Starts must then be empty); a seed with no channel is no task.
func NewTasks(cfg Config, seeds []TaskSeed) (*Tasks, error) {
	t := &Tasks{byNum: map[int32]*Task{}}
	if cfg.Names == nil {
		cfg.Names = &clock.Names{} // one set of names for every task
	}
	add := func(num int32, c Config) error {
		r, err := New(c)
		if err != nil {
			return fmt.Errorf("task %d: %w", num, err)
		}
		task := &Task{Task: num, Replayer: r}
		t.Tasks = append(t.Tasks, task)
		t.byNum[num] = task
		return nil
	}
	if seeds != nil {
		if len(cfg.Scope) > 0 || len(cfg.Starts) > 0 {
			return nil, fmt.Errorf("seeded tasks take their scope and starts from the seeds")
		}
		for _, s := range seeds {
			if len(s.State) == 0 {
				continue
			}
			if _, dup := t.byNum[s.Task]; dup {
				return nil, fmt.Errorf("task %d seeded twice", s.Task)
			}
			for _, cs := range s.State {
				if cs.Channel.Partition != s.Task {
					return nil, fmt.Errorf("task %d: seeded channel %s is not of partition %d", s.Task, cfg.Names.Channel(cs.Channel), s.Task)
				}
			}
			c := cfg
			c.Seed = s.State
			if err := add(s.Task, c); err != nil {
				return nil, err
			}
		}
	} else {
		split := SplitTasks(cfg.Scope)
		for _, num := range slices.Sorted(mapsKeys(split)) {
			c := cfg
			c.Scope, c.Starts = split[num], map[clock.Channel]int64{}
			for ch, s := range cfg.Starts {
				if ch.Partition == num {
					c.Starts[ch] = s
				}
			}
			if err := add(num, c); err != nil {
				return nil, err
			}
		}
	}
	if len(t.Tasks) == 0 {
		return nil, fmt.Errorf("empty scope: no task to replay")
	}
	slices.SortFunc(t.Tasks, func(a, b *Task) int { return int(a.Task) - int(b.Task) })
	return t, nil
}

func mapsKeys[V any](m map[int32]V) func(func(int32) bool) {
	return func(yield func(int32) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Task returns task num, or nil.
func (t *Tasks) Task(num int32) *Task { return t.byNum[num] }

// Skipped counts the records seen on channels outside every task's
// scope.
func (t *Tasks) Skipped() int64 {
	n := t.skipped
	for _, task := range t.Tasks {
		n += task.Skipped()
	}
	return n
}

// Flush emits every task's pending events (Replayer.Flush), task by task.
func (t *Tasks) Flush(emit func(*Task, *Event) error) error {
	for _, task := range t.Tasks {
		if err := task.Flush(func(ev *Event) error { return emit(task, ev) }); err != nil {
			return err
		}
	}
	return nil
}

// Feed routes one item to the gate of its partition's task and emits the
// events it caused there (valid only during the call). Log facts go to
// the task too, for its diagnosis.
func (t *Tasks) Feed(it *record.Item, emit func(*Task, *Event) error) error {
	task := t.byNum[it.Partition]
	if task == nil {
		if it.Kind == record.KindRecord {
			t.skipped++
		}
		return nil
	}
	return task.Feed(it, func(ev *Event) error { return emit(task, ev) })
}

// Held counts the records every task holds.
func (t *Tasks) Held() int64 {
	var n int64
	for _, task := range t.Tasks {
		n += task.Gate().Stats().Held
	}
	return n
}

// RunTasks feeds every item of src to t until its end, an error, or ctx's
// cancellation (ErrInterrupted, after the item in hand), as Run does for
// one gate. The seeded heads' deliveries come first (Flush).
func RunTasks(ctx context.Context, src Source, t *Tasks, emit func(*Task, *Event) error) error {
	if err := t.Flush(emit); err != nil {
		return err
	}
	for n := 0; ; n++ {
		if n&255 == 0 && ctx.Err() != nil {
			return ErrInterrupted
		}
		it, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := t.Feed(it, emit); err != nil {
			return err
		}
	}
}

// Keep drops the tasks keep refuses. Their items are then outside every
// task: counted by Skipped as records no task receives, never fed.
func (t *Tasks) Keep(keep func(task int32) bool) {
	var kept []*Task
	for _, task := range t.Tasks {
		if keep(task.Task) {
			kept = append(kept, task)
		} else {
			delete(t.byNum, task.Task)
		}
	}
	t.Tasks = kept
}
