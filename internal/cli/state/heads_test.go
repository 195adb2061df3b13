package state

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// TestStateHeadCauses: one task, one head per cause the main fixture
// does not have — truncated (the log start moved past a required
// position), not-a-record (a required offset that is a transaction
// marker, which the group committed past) and cycle (two heads waiting
// for each other) — each asserted field by field; and a cause on a topic
// the process does not receive, which holds nothing.
func TestStateHeadCauses(t *testing.T) {
	const proc = "causes"
	cl := parsley.ChangelogTopic(proc)
	topics := []string{"trunc", "marks", "elsewhere", "a", "b", "c", "d", "e"}
	opts := []kfake.Opt{kfake.SeedTopics(1, cl)}
	for _, name := range topics {
		opts = append(opts, kfake.SeedTopics(1, name))
	}
	c := kafkatest.Cluster(t, opts...)
	ctx := context.Background()
	w := newWriter(t, c, kgo.TransactionalID("biz"))
	adm := kadm.NewClient(w)
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	ch := func(name string) clock.Channel { return clock.Channel{Topic: ids[name]} }
	// trunc: five records, the first four deleted (log start 4).
	for range 5 {
		kafkatest.Produce(t, c, &kgo.Record{Topic: "trunc", Value: []byte("t")})
	}
	del := kadm.Offsets{}
	del.AddOffset("trunc", 0, 4, -1)
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	// marks: record 0 in a transaction, its marker at 1; the group
	// committed 2, past the marker. a…e: one record each.
	txnDo(t, w, true, &kgo.Record{Topic: "marks", Value: []byte("m")})
	for _, name := range []string{"a", "b", "c", "d", "e", "elsewhere"} {
		kafkatest.Produce(t, c, &kgo.Record{Topic: name, Value: []byte("x")})
	}
	offs := kadm.Offsets{}
	offs.AddOffset("marks", 0, 2, -1)
	if _, err := adm.CommitOffsets(ctx, proc, offs); err != nil {
		t.Fatal(err)
	}

	entry := func(k parsley.Key, v []byte) *kgo.Record {
		return &kgo.Record{Topic: cl, Partition: 0, Key: parsley.AppendKey(nil, k), Value: v}
	}
	held := func(on string, causes ...clock.Entry) []*kgo.Record {
		return []*kgo.Record{
			entry(parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch(on)}, parsley.AppendPosition(nil, 0)),
			entry(parsley.Key{Tag: parsley.TagHeld, Channel: ch(on), Position: 0},
				parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: now.UnixMilli(), Causes: causes})),
		}
	}
	recs := []*kgo.Record{entry(parsley.Key{Tag: parsley.TagVersion}, []byte{1})}
	// "elsewhere" is no topic of the process: no binding names it.
	for _, name := range []string{"trunc", "marks", "a", "b", "c", "d", "e"} {
		recs = append(recs, entry(parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, ids[name])))
	}
	recs = append(recs,
		entry(parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("trunc")}, parsley.AppendPosition(nil, 0)),
		entry(parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("marks")}, parsley.AppendPosition(nil, 0)))
	recs = append(recs, held("a", clock.Entry{Channel: ch("trunc"), Position: 2})...)
	recs = append(recs, held("b", clock.Entry{Channel: ch("marks"), Position: 1})...)
	recs = append(recs, held("c", clock.Entry{Channel: ch("elsewhere"), Position: 0})...)
	recs = append(recs, held("d", clock.Entry{Channel: ch("e"), Position: 0})...)
	recs = append(recs, held("e", clock.Entry{Channel: ch("d"), Position: 0})...)
	txnDo(t, newWriter(t, c, kgo.TransactionalID(proc+"-0")), true, recs...)

	rep, code := runStateAt(t, strings.Join(c.ListenAddrs(), ","), "--app", proc)
	if code != cmdutil.ExitFound {
		t.Fatalf("exit %d, want 4", code)
	}
	if len(rep.Tasks) != 1 {
		t.Fatalf("%d tasks", len(rep.Tasks))
	}
	heads := map[string]*render.HeadJSON{}
	for _, jc := range rep.Tasks[0].Channels {
		if jc.Head != nil {
			heads[jc.Channel] = jc.Head
		}
		if jc.Channel == "marks/0" && (val(jc.Committed) != 2 || val(jc.Lag) != 0) {
			t.Errorf("marks/0: committed %v lag %v, want 2 and 0", jc.Committed, jc.Lag)
		}
	}
	for _, tc := range []struct {
		on, blocker string
		required    int64
		settled     int64
		cause       inspect.Cause
		root        string
	}{
		{"a/0", "trunc/0", 2, 0, inspect.CauseTruncated, "a/0@0"},
		{"b/0", "marks/0", 1, 0, inspect.CauseNotARecord, "b/0@0"},
		{"d/0", "e/0", 0, -1, inspect.CauseCycle, ""},
		{"e/0", "d/0", 0, -1, inspect.CauseCycle, ""},
	} {
		h := heads[tc.on]
		if h == nil {
			t.Errorf("%s: no head; heads %v", tc.on, heads)
			continue
		}
		if h.Offset != 0 || h.Cause != tc.cause || len(h.Blockers) != 1 {
			t.Errorf("%s: head @%d cause %s blockers %+v; want @0 %s and one blocker", tc.on, h.Offset, h.Cause, h.Blockers, tc.cause)
			continue
		}
		b := h.Blockers[0]
		if !strings.HasPrefix(b.Channel, strings.TrimSuffix(tc.blocker, "/0")) || b.Required != tc.required || val(b.Settled) != tc.settled || b.Cause != tc.cause && tc.cause != inspect.CauseCycle {
			t.Errorf("%s: blocker %+v (settled %d), want %s ≥ %d settled %d %s", tc.on, b, val(b.Settled), tc.blocker, tc.required, tc.settled, tc.cause)
		}
		if tc.root != "" && h.Root.String() != tc.root {
			t.Errorf("%s: root %v, want %s", tc.on, h.Root, tc.root)
		}
		if h.NextStep == "" {
			t.Errorf("%s: no next step", tc.on)
		}
	}
	// A cause on a topic outside the task's scope does not hold a head
	// (SPEC §3: the gate ignores it), so c/0@0 is ready, with no blockers.
	// inspect gives out-of-scope only when told what is read (Facts.Reads),
	// which DiagnoseTask does not say.
	if h := heads["c/0"]; h == nil || h.Cause != inspect.CauseReady || len(h.Blockers) != 0 || h.Root != nil {
		t.Errorf("c/0: head %+v, want ready with no blockers", h)
	}
}
