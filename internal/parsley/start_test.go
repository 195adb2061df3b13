package parsley

import (
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
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
		{"a consumer using the application id as its group.id", func(w *world) {
			w.in.App = "shop"
			w.in.Members = []record.GroupMember{{MemberID: "m1", ClientID: "shop-1-StreamThread-1-consumer"}, {MemberID: "m2", ClientID: "report\x1b"}}
		}, ReasonSubstrateMisconfigured, func(t *testing.T, r Refusal) {
			if !strings.Contains(r.Detail, "m2") || strings.Contains(r.Detail, "\x1b") || !strings.Contains(r.Detail, "group.id") {
				t.Errorf("detail %q: want m2 named, escaped", r.Detail)
			}
		}},
		{"a bootstrap member that never left", func(w *world) {
			w.in.App = "shop"
			w.in.Members = []record.GroupMember{{MemberID: "m1", ClientID: "parsley-bootstrap-shop-1"}}
		}, ReasonSubstrateMisconfigured, nil},
		{"a topic without a topic ID", func(w *world) {
			w.in.Cluster["payments"] = TopicFacts{Partitions: 1, LogStarts: map[int32]int64{0: 0}}
		}, ReasonSubstrateMisconfigured, func(t *testing.T, r Refusal) {
			if r.Topic != "payments" || !strings.Contains(r.Detail, "3.7.0") {
				t.Errorf("%+v", r)
			}
		}},
		{"a held record over the changelog's max.message.bytes", func(w *world) {
			w.in.ChangelogMaxBytes = 1000
			w.in.Held = []HeldSize{{Topic: "orders", Channel: clock.Channel{Topic: orders}, Offset: 10, Bytes: 999},
				{Topic: "orders", Channel: clock.Channel{Topic: orders, Partition: 1}, Offset: 10, Bytes: 1001}}
		}, ReasonSubstrateMisconfigured, func(t *testing.T, r Refusal) {
			if !slices.Equal(r.Channels, []clock.Channel{{Topic: orders, Partition: 1}}) {
				t.Errorf("channels %v", r.Channels)
			}
		}},
		{"a causes header over the budget", func(w *world) {
			w.in.Undecodable = []UndecodableRecord{{Topic: "orders", Channel: clock.Channel{Topic: orders}, Offset: 10, Code: string(clock.CodeTooLarge)}}
		}, ReasonMetadataBudgetExceeded, nil},
		{"a frontier over the budget", func(w *world) {
			w.in.Budget = 26 * 20
			for i := range 20 {
				w.stores[0].Apply(int64(10+i), key(Key{Tag: TagFrontier, Channel: clock.Channel{Topic: clock.TopicID{0xee, byte(i)}}}), AppendPosition(nil, 1))
			}
		}, ReasonMetadataBudgetExceeded, nil},
		{"the changelog not compacted, a partition aged out", func(w *world) {
			w.in.ChangelogCleanup = "delete"
			w.stores[1] = NewStore(1)
			w.in.Committed[TopicPartition{"orders", 1}] = 10
		}, ReasonOrderingStateLost, func(t *testing.T, r Refusal) {
			if !strings.Contains(r.Detail, "cleanup.policy is delete") {
				t.Errorf("detail %q", r.Detail)
			}
		}},
		{"records on a channel recorded as gone", func(w *world) {
			w.stores[0].Apply(9, key(Key{Tag: TagFedUpTo, Channel: clock.Channel{Topic: payments}}), AppendPosition(nil, DeletedPosition))
			f := w.in.Cluster["payments"]
			f.LogEnds = map[int32]int64{0: 7}
			w.in.Cluster["payments"] = f
		}, ReasonOutOfOrderFeed, func(t *testing.T, r Refusal) {
			if r.Topic != "payments" {
				t.Errorf("topic %q", r.Topic)
			}
		}},
		{"a received topic missing, nothing held on it", func(w *world) {
			delete(w.in.Cluster, "payments")
		}, StopSourceTopicMissing, nil},
		{"a partition added while running", func(w *world) {
			w.in.Cluster["payments"] = facts(payments, 0, 0) // the width stays 2
		}, StopPartitionAdded, func(t *testing.T, r Refusal) {
			if !slices.Equal(r.Channels, []clock.Channel{{Topic: payments, Partition: 1}}) || r.Reason.Triage().Recorded || !r.Reason.Triage().Clears {
				t.Errorf("%+v", r)
			}
		}},
		{"records deleted, the commit expired", func(w *world) {
			delete(w.in.Committed, TopicPartition{"orders", 0})
			w.in.Cluster["orders"] = facts(orders, 12, 0)
		}, ReasonPositionsDiscarded, func(t *testing.T, r Refusal) {
			if r.Lost != 2 || !strings.Contains(r.Detail, "the group's offsets expired, so the start succeeds at the covered position + 1 (10)") {
				t.Errorf("lost %d, want 2 (fed-up-to 9 + 1 to 12): %q", r.Lost, r.Detail)
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

// The warnings: a frontier from 80 % of the budget, and a changelog not
// compacted before anything aged out; none for a healthy process.
func TestCheckWarnings(t *testing.T) {
	w := newWorld()
	w.check()
	if got := CheckWarnings(w.in); len(got) != 0 {
		t.Fatalf("a healthy process is warned: %+v", got)
	}
	w.in.ChangelogCleanup = "compact,delete"
	if got := CheckWarnings(w.in); len(got) != 0 {
		t.Fatalf("compact,delete is compacted: %+v", got)
	}
	w.in.ChangelogCleanup = "delete"
	if got := CheckWarnings(w.in); len(got) != 1 || got[0].Reason != ReasonOrderingStateLost {
		t.Fatalf("not compacted: %+v", got)
	}
	w = newWorld()
	// orders (2 partitions) and payments (1): 26+9 + 26 = 61 bytes.
	w.check()
	for _, c := range []struct {
		budget int64
		warn   bool
	}{{61, true}, {76, true}, {77, false}, {60, false}} {
		w.in.Budget = c.budget
		got := CheckWarnings(w.in)
		if (len(got) == 1 && got[0].Reason == ReasonMetadataBudgetExceeded) != c.warn || len(got) > 1 {
			t.Errorf("budget %d: %+v, want a warning %v", c.budget, got, c.warn)
		}
		refused := slices.Contains(reasons(CheckStart(w.in)), ReasonMetadataBudgetExceeded)
		if refused != (c.budget < 61) {
			t.Errorf("budget %d: refused %v", c.budget, refused)
		}
	}
}

// Every reason has the triage table's answers and a next step; those the
// cluster cannot show are never predicted.
func TestTriage(t *testing.T) {
	for _, r := range append(Reasons(), Unshowable()...) {
		tr := r.Triage()
		if tr.Restart == "" || tr.Reset == "" || tr.Check == "" {
			t.Errorf("%s: %+v", r, tr)
		}
		if slices.Contains(Reasons(), r) && r.NextStep() == "" {
			t.Errorf("%s: no next step", r)
		}
	}
	for _, r := range Unshowable() {
		if slices.Contains(Reasons(), r) {
			t.Errorf("%s is predicted and unshowable", r)
		}
	}
	if FrontierBytes(map[string]int32{"a": 1, "b": 3, "c": 0}) != 26+26+18 {
		t.Errorf("FrontierBytes")
	}
}
