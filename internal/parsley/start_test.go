package parsley

import (
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// world is a process receiving orders (2 partitions) and payments (1),
// with a record held on orders/1, its group committed where its store is.
type world struct {
	stores []*Store
	in     StartInput
}

func newWorld() *world {
	w := &world{}
	o1 := clock.Channel{Topic: orders, Partition: 1}
	for p := range int32(2) {
		s := NewStore(p)
		s.Apply(0, []byte{'v'}, []byte{1})
		s.Apply(1, key(Key{Tag: TagName, Name: "orders"}), AppendNameValue(nil, orders))
		s.Apply(2, key(Key{Tag: TagName, Name: "payments"}), AppendNameValue(nil, payments))
		s.Apply(3, key(Key{Tag: TagFedUpTo, Channel: clock.Channel{Topic: orders, Partition: p}}), AppendPosition(nil, 9))
		w.stores = append(w.stores, s)
	}
	w.stores[0].Apply(4, key(Key{Tag: TagFedUpTo, Channel: clock.Channel{Topic: payments}}), AppendPosition(nil, 4))
	w.stores[1].Apply(4, heldKey(o1, 8), heldValue(1, clock.Entry{Channel: clock.Channel{Topic: payments}, Position: 6}))
	w.in = StartInput{
		ChangelogExists:     true,
		ChangelogPartitions: 2,
		Committed:           map[TopicPartition]int64{{"orders", 0}: 10, {"orders", 1}: 10, {"payments", 0}: 5},
		Receives:            []string{"orders", "payments"},
		Declared:            true,
		Cluster: map[string]TopicFacts{
			"orders":   facts(orders, 0, 0),
			"payments": facts(payments, 0),
		},
	}
	return w
}

func (w *world) check() []Refusal {
	w.in.Tasks = nil
	for _, s := range w.stores {
		w.in.Tasks = append(w.in.Tasks, s.Decode())
	}
	return CheckStart(w.in)
}

func reasons(rs []Refusal) []Reason {
	var out []Reason
	for _, r := range rs {
		out = append(out, r.Reason)
	}
	return out
}

func TestCheckStartHealthy(t *testing.T) {
	if got := newWorld().check(); len(got) != 0 {
		t.Fatalf("a healthy process is refused: %+v", got)
	}
	w := newWorld()
	w.in.Declared, w.in.Receives = false, nil // a stopped process: the bindings
	if got := w.check(); len(got) != 0 {
		t.Fatalf("a stopped healthy process is refused: %+v", got)
	}
}

// TestCheckStartEachReason makes each refusal the way it happens and
// checks that it, and only it, is predicted.
func TestCheckStartEachReason(t *testing.T) {
	recreated := clock.TopicID{0x09, 9}
	cases := []struct {
		name  string
		make  func(w *world)
		want  Reason
		check func(t *testing.T, r Refusal)
	}{
		{"changelog deleted", func(w *world) {
			w.in.ChangelogExists, w.stores = false, nil
		}, ReasonOrderingStateLost, nil},
		{"corrupt entry", func(w *world) {
			w.stores[1].Apply(9, heldKey(clock.Channel{Topic: orders, Partition: 1}, 9), []byte{2})
		}, ReasonUnknownFormat, nil},
		{"partitions added", func(w *world) {
			w.in.Cluster["orders"] = facts(orders, 0, 0, 0)
		}, ReasonTaskWidthChanged, nil},
		{"payments deleted and recreated", func(w *world) {
			w.in.Cluster["payments"] = facts(recreated, 0)
		}, ReasonIdentityChanged, func(t *testing.T, r Refusal) {
			if r.Topic != "payments" {
				t.Errorf("topic %q", r.Topic)
			}
		}},
		{"orders deleted while held", func(w *world) {
			delete(w.in.Cluster, "orders")
			w.in.Cluster["payments"] = facts(payments, 0, 0) // the width stays
			w.in.Committed[TopicPartition{"payments", 1}] = 0
		}, ReasonDeletedWithUndelivered, func(t *testing.T, r Refusal) {
			if !slices.Equal(r.Channels, []clock.Channel{{Topic: orders, Partition: 1}}) {
				t.Errorf("channels %v", r.Channels)
			}
		}},
		{"declaration drops orders", func(w *world) {
			w.in.Receives = []string{"payments"}
			w.in.Cluster["payments"] = facts(payments, 0, 0)
			w.in.Committed[TopicPartition{"payments", 1}] = 0
		}, ReasonRemovedWithHeld, func(t *testing.T, r Refusal) {
			if r.Topic != "orders" {
				t.Errorf("topic %q", r.Topic)
			}
		}},
		{"records deleted past the commit", func(w *world) {
			w.in.Cluster["orders"] = facts(orders, 14, 0)
		}, ReasonPositionsDiscarded, func(t *testing.T, r Refusal) {
			if r.Lost != 4 || !slices.Equal(r.Channels, []clock.Channel{{Topic: orders}}) {
				t.Errorf("lost %d on %v, want 4 on orders/0", r.Lost, r.Channels)
			}
		}},
		{"one changelog partition purged", func(w *world) {
			w.stores[1] = NewStore(1) // orders/1 is still committed at 10
		}, ReasonOrderingStateLost, func(t *testing.T, r Refusal) {
			if !strings.Contains(r.Detail, "partition 1 ") {
				t.Errorf("detail %q does not name partition 1", r.Detail)
			}
		}},
		{"records deleted on a partition never fed, no commit", func(w *world) {
			// payments grows a partition that task 1 binds but never fed
			// and the group never committed; the width stays 2.
			w.in.Cluster["payments"] = facts(payments, 0, 3)
		}, ReasonPositionsDiscarded, func(t *testing.T, r Refusal) {
			if r.Lost != 3 || !slices.Equal(r.Channels, []clock.Channel{{Topic: payments, Partition: 1}}) {
				t.Errorf("lost %d on %v, want 3 on payments/1 (resumed at 0)", r.Lost, r.Channels)
			}
		}},
		{"records deleted, the commit expired", func(w *world) {
			delete(w.in.Committed, TopicPartition{"orders", 0})
			w.in.Cluster["orders"] = facts(orders, 12, 0)
		}, ReasonPositionsDiscarded, func(t *testing.T, r Refusal) {
			if r.Lost != 2 {
				t.Errorf("lost %d, want 2 (fed-up-to 9 + 1 to 12)", r.Lost)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld()
			c.make(w)
			got := w.check()
			if !slices.Equal(reasons(got), []Reason{c.want}) {
				t.Fatalf("refusals %v, want exactly %s: %+v", reasons(got), c.want, got)
			}
			if got[0].Reason.NextStep() == "" || got[0].Detail == "" {
				t.Errorf("no detail or next step: %+v", got[0])
			}
			if c.check != nil {
				c.check(t, got[0])
			}
		})
	}
}

// Records deleted up to the resume position lose nothing, and retention
// past a held record's own copy is no refusal (it is in the changelog).
func TestCheckStartRetentionUpToTheResumeIsFine(t *testing.T) {
	w := newWorld()
	w.in.Cluster["orders"] = facts(orders, 10, 10) // orders/1 holds 8
	if got := w.check(); len(got) != 0 {
		t.Fatalf("refused: %+v", got)
	}
}

// An offset reset forward to the log start — the runbook's deliberate
// reset — is what Parsley resumes from, whatever the store fed: the
// refusal is gone once the operator has acted.
func TestCheckStartHonoursADeliberateReset(t *testing.T) {
	w := newWorld()
	w.in.Cluster["orders"] = facts(orders, 14, 0)
	w.in.Committed[TopicPartition{"orders", 0}] = 14
	if got := w.check(); len(got) != 0 {
		t.Fatalf("refused after the reset: %+v", got)
	}
}

// A capture knows only the topics it has log facts of: a topic missing
// from it is not predicted deleted, and the width is not checked against
// a partial view.
func TestCheckStartPartialCluster(t *testing.T) {
	w := newWorld()
	delete(w.in.Cluster, "orders")
	w.in.Partial = true
	if got := w.check(); len(got) != 0 {
		t.Fatalf("refused from a partial view: %+v", got)
	}
}

// A changelog that exists with every partition empty, while the group has
// committed offsets, lost its state as surely as a deleted one.
func TestCheckStartEmptyChangelog(t *testing.T) {
	w := newWorld()
	w.stores = []*Store{NewStore(0), NewStore(1)}
	got := w.check()
	if !slices.Equal(reasons(got), []Reason{ReasonOrderingStateLost}) {
		t.Fatalf("refusals %+v", got)
	}
	w.in.Committed = nil // a fresh process: nothing to lose
	if got := w.check(); len(got) != 0 {
		t.Fatalf("a fresh process is refused: %+v", got)
	}
}

// facts is a topic of len(starts) partitions with those log starts.
func facts(id clock.TopicID, starts ...int64) TopicFacts {
	t := TopicFacts{ID: id, Partitions: int32(len(starts)), LogStarts: map[int32]int64{}}
	for p, s := range starts {
		t.LogStarts[int32(p)] = s
	}
	return t
}
