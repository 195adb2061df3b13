package holds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

const attachApp = "shop-packer"

// cut is a Parsley process stopped at a cut: two tasks over orders and
// payments (two partitions each), each task's gate run over what was
// written before the cut and its state and offsets written as Parsley
// writes them. Task 0 holds orders/0@1 for payments/0@2 (written after
// the cut) and orders/0@2 behind it; task 1 holds orders/1@1 for
// payments/1@5, never written.
type cut struct {
	c   *kfake.Cluster
	ids map[string]clock.TopicID
}

func (c *cut) ch(topic string, p int32) clock.Channel {
	return clock.Channel{Topic: c.ids[topic], Partition: p}
}

func causes(c clock.Clock) []kgo.RecordHeader {
	return []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(c)}}
}

func newCut(t *testing.T, committed map[string]int64) *cut {
	t.Helper()
	f := &cut{c: kafkatest.Cluster(t, kfake.SeedTopics(2, "orders", "payments", parsley.ChangelogTopic(attachApp))), ids: map[string]clock.TopicID{}}
	w, err := kgo.NewClient(kgo.SeedBrokers(f.c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	adm := kadm.NewClient(w)
	md, err := adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		f.ids[td.Topic] = clock.TopicID(td.ID)
	}
	type rec struct {
		topic string
		p     int32
		claim clock.Clock
	}
	before := []rec{
		{"orders", 0, clock.Clock{}},
		{"orders", 0, clock.MustNew(clock.Entry{Channel: f.ch("payments", 0), Position: 2})},
		{"orders", 0, clock.Clock{}},
		{"payments", 0, clock.Clock{}},
		{"payments", 0, clock.Clock{}},
		{"orders", 1, clock.Clock{}},
		{"orders", 1, clock.MustNew(clock.Entry{Channel: f.ch("payments", 1), Position: 5})},
		{"payments", 1, clock.Clock{}},
	}
	gates := map[int32]*gate.Gate{}
	for p := range int32(2) {
		if gates[p], err = gate.New([]clock.Channel{f.ch("orders", p), f.ch("payments", p)}); err != nil {
			t.Fatal(err)
		}
	}
	next := map[clock.Channel]int64{}
	var recs []*kgo.Record
	for _, r := range before {
		ch := f.ch(r.topic, r.p)
		if err := gates[r.p].Receive(ch, next[ch], r.claim, nil); err != nil {
			t.Fatal(err)
		}
		next[ch]++
		recs = append(recs, &kgo.Record{Topic: r.topic, Partition: r.p, Value: []byte("v"), Headers: causes(r.claim)})
	}
	if err := w.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The state at the cut.
	cl := parsley.ChangelogTopic(attachApp)
	var state []*kgo.Record
	entry := func(p int32, k parsley.Key, v []byte) {
		state = append(state, &kgo.Record{Topic: cl, Partition: p, Key: parsley.AppendKey(nil, k), Value: v})
	}
	written := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC).UnixMilli()
	for p, g := range gates {
		entry(p, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})
		for _, name := range []string{"orders", "payments"} {
			entry(p, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, f.ids[name]))
		}
		for _, ch := range g.Scope() {
			entry(p, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, parsley.AppendPosition(nil, g.Fed(ch)))
			for _, h := range g.Queue(ch) {
				entry(p, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: h.Offset},
					parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: written, Value: []byte("v"), Causes: h.Clock.Entries()}))
			}
		}
	}
	if err := w.ProduceSync(context.Background(), state...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The group's offsets: fed-up-to + 1, unless the test says otherwise.
	offs := kadm.Offsets{}
	for p, g := range gates {
		for _, name := range []string{"orders", "payments"} {
			at := g.Fed(f.ch(name, p)) + 1
			if c, ok := committed[name+"/"+string(rune('0'+p))]; ok {
				at = c
			}
			offs.Add(kadm.Offset{Topic: name, Partition: p, At: at})
		}
	}
	if _, err := adm.CommitOffsets(context.Background(), attachApp, offs); err != nil {
		t.Fatal(err)
	}
	// After the cut: the missing cause of task 0's head, and a payment
	// that is not enough for task 1's.
	after := []*kgo.Record{
		{Topic: "payments", Partition: 0, Value: []byte("v"), Headers: causes(clock.Clock{})},
		{Topic: "payments", Partition: 1, Value: []byte("v"), Headers: causes(clock.Clock{})},
		{Topic: "orders", Partition: 0, Value: []byte("v"), Headers: causes(clock.Clock{})},
	}
	if err := w.ProduceSync(context.Background(), after...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return f
}

// run runs causalctl against c as a user would.
func run(t *testing.T, c *kfake.Cluster, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test",
		Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }}
	code := cli.Run(testCtx(t), f, append(args, "--brokers", strings.Join(c.ListenAddrs(), ",")))
	return code, out.String(), errOut.String()
}

type taskHead struct {
	Task    *int32
	Channel string
	Offset  int64
	Cause   string
}

// TestHoldsAppAttach: the shadow starts where the stopped process is, from
// its state, and reads what was written after the cut: task 0's head gets
// its cause and is released (with the record behind it), task 1's stays
// held, beyond the log end. state --app still shows both: it reads the
// store, not the future.
func TestHoldsAppAttach(t *testing.T) {
	f := newCut(t, nil)
	code, out, stderr := run(t, f.c, "holds", "--app", attachApp, "-o", "json")
	var rep struct {
		App         string `json:"app"`
		HeldHeads   int    `json:"held_heads"`
		HeldRecords int64  `json:"held_records"`
		Heads       []taskHead
		Tasks       []struct {
			Task      int32
			Scope     []string
			HeldHeads int `json:"held_heads"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d: %v: %q %s", code, err, out, stderr)
	}
	if code != cmdutil.ExitFound || stderr != "" {
		t.Errorf("exit %d, stderr %q: want 4 and no warning", code, stderr)
	}
	if rep.App != attachApp || len(rep.Tasks) != 2 || rep.Tasks[0].HeldHeads != 0 || rep.Tasks[1].HeldHeads != 1 ||
		strings.Join(rep.Tasks[1].Scope, ",") != "orders/1,payments/1" {
		t.Errorf("tasks %+v", rep.Tasks)
	}
	// held_records are what the process holds now (its store): task 0's
	// two deliver once it reads on (catching up), task 1's stays held.
	if rep.HeldHeads != 1 || rep.HeldRecords != 3 || len(rep.Heads) != 1 {
		t.Fatalf("%d heads, %d records: %+v, want task 1's head alone, 3 records held", rep.HeldHeads, rep.HeldRecords, rep.Heads)
	}
	h := rep.Heads[0]
	if h.Task == nil || *h.Task != 1 || h.Channel != "orders/1" || h.Offset != 1 || h.Cause != "beyond-log-end" {
		t.Errorf("head %+v, want task 1's orders/1@1 beyond-log-end", h)
	}

	// state tells the same story: the one held head, and task 0's store
	// head catching up (it delivers once the process reads on).
	code, out, stderr = run(t, f.c, "state", "--app", attachApp, "-o", "json")
	var st struct {
		HeldHeads int `json:"held_heads"`
		Tasks     []struct {
			Task       int32
			CatchingUp []string `json:"catching_up"`
			Channels   []struct {
				Channel string
				Head    *struct{ Offset int64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("state: exit %d: %v: %s", code, err, stderr)
	}
	heads := map[string]int64{}
	var catching []string
	for _, task := range st.Tasks {
		catching = append(catching, task.CatchingUp...)
		for _, c := range task.Channels {
			if c.Head != nil {
				heads[c.Channel] = c.Head.Offset
			}
		}
	}
	if st.HeldHeads != rep.HeldHeads || len(heads) != 1 || heads["orders/1"] != 1 || !slices.Equal(catching, []string{"orders/0@1"}) {
		t.Errorf("state's heads %v (%d), catching up %v: want holds --app's orders/1@1 alone, orders/0@1 catching up", heads, st.HeldHeads, catching)
	}

	// replay --app: the same shadow, as a replay summary per task.
	code, out, stderr = run(t, f.c, "replay", "--app", attachApp, "-o", "json")
	var sum struct {
		Delivered, Held int64
		Channels        []struct {
			Channel string
			Task    *int32
			Held    int
		}
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || code != 0 {
		t.Fatalf("replay: exit %d: %v: %s", code, err, stderr)
	}
	// Delivered: the two seeded orders/0 heads and the three records
	// written after the cut.
	if sum.Held != 1 || sum.Delivered != 5 || len(sum.Channels) != 4 {
		t.Errorf("replay --app: %+v", sum)
	}
	for _, c := range sum.Channels {
		if c.Task == nil || (c.Held > 0) != (c.Channel == "orders/1") {
			t.Errorf("replay --app channel %+v", c)
		}
	}

	// Text: one block per task.
	code, text, _ := run(t, f.c, "holds", "--app", attachApp)
	if code != cmdutil.ExitFound || !strings.Contains(text, "task 0 (orders/0, payments/0): Nothing held.") ||
		!strings.Contains(text, "task 1 (orders/1, payments/1): 1 held head") || !strings.Contains(text, "orders/1@1") {
		t.Errorf("text: exit %d\n%s", code, text)
	}
}

// TestHoldsAppMismatch: a committed offset ahead of fed-up-to + 1, and one
// behind it over a record the state lacks, are warnings naming the
// channel, the offset committed and fed-up-to — not bridged in silence.
func TestHoldsAppMismatch(t *testing.T) {
	// payments/1 is fed up to 0: committed 2 skips offset 1. orders/0 is
	// fed up to 2 with 1 and 2 held: committed 0 rereads 0 (settled:
	// dropped), 1 and 2 (held: not read twice).
	f := newCut(t, map[string]int64{"payments/1": 2, "orders/0": 0, "orders/1": 0})
	code, _, stderr := run(t, f.c, "holds", "--app", attachApp, "-o", "json")
	if code != cmdutil.ExitFound {
		t.Errorf("exit %d", code)
	}
	if !strings.Contains(stderr, "warning: task 1: payments/1: committed offset 2 is ahead of fed-up-to 0 + 1") {
		t.Errorf("no ahead warning: %q", stderr)
	}
	if strings.Contains(stderr, "orders/0") || strings.Contains(stderr, "orders/1") {
		t.Errorf("a behind offset whose records the state holds or settled is no mismatch: %q", stderr)
	}
}

// TestHoldsAppNotifier is the done-when against the demo: holds
// --app notifier gives the per-task diagnosis state --app notifier gives
// — the same held heads with the same causes, task by task — while the
// notifier runs caught up, and still after it stops and more records
// arrive (they queue behind its heads or deliver; its heads stay held).
func TestHoldsAppNotifier(t *testing.T) {
	ctx := testCtx(t)
	d, n := demotest.Dangling(ctx, t)
	demoRun := func(args ...string) (int, string, string) {
		ios, _, out, errOut := iostreams.Test()
		f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"}
		code := cli.Run(testCtx(t), f, append(args, "--brokers", d.Addr(), "-o", "json"))
		return code, out.String(), errOut.String()
	}
	stateHeads := func() map[string]string {
		code, out, stderr := demoRun("state", "--app", demo.NotifierApp)
		var st struct {
			Tasks []struct {
				Task     int32
				Channels []struct {
					Channel string
					Head    *struct {
						Offset int64
						Cause  string
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("state: exit %d: %v: %s", code, err, stderr)
		}
		heads := map[string]string{}
		for _, task := range st.Tasks {
			for _, c := range task.Channels {
				if c.Head != nil {
					heads[fmt.Sprintf("task %d %s@%d", task.Task, c.Channel, c.Head.Offset)] = c.Head.Cause
				}
			}
		}
		return heads
	}
	holdsHeads := func() (map[string]string, int64) {
		code, out, stderr := demoRun("holds", "--app", demo.NotifierApp)
		var rep struct {
			HeldRecords int64 `json:"held_records"`
			Heads       []taskHead
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || stderr != "" {
			t.Fatalf("holds: exit %d: %v: %s", code, err, stderr)
		}
		heads := map[string]string{}
		for _, h := range rep.Heads {
			heads[fmt.Sprintf("task %d %s@%d", *h.Task, h.Channel, h.Offset)] = h.Cause
		}
		return heads, rep.HeldRecords
	}
	want := stateHeads()
	dangling := false
	for at, cause := range want {
		dangling = dangling || (strings.Contains(at, "shipments/") && cause == "beyond-log-end")
	}
	if !dangling {
		t.Fatalf("state holds no dangling shipment: %v", want)
	}
	got, held := holdsHeads()
	t.Logf("heads %v, %d records held", want, held)
	if !maps.Equal(got, want) {
		t.Errorf("running: holds --app %v\nstate --app %v", got, want)
	}

	// Stopped, and more written: a record on every partition of every
	// topic, claiming nothing.
	n.Stop()
	demotest.WriteEveryChannel(ctx, t, d)
	if after := stateHeads(); !maps.Equal(after, want) {
		t.Errorf("stopped: state --app changed: %v, was %v", after, want)
	}
	got, heldAfter := holdsHeads()
	if !maps.Equal(got, want) {
		t.Errorf("stopped, more written: holds --app %v\nstate --app %v", got, want)
	}
	// The records held are the store's: the stopped process holds what
	// it held, whatever was written since (the late records queue behind
	// its heads only once it reads them).
	if heldAfter != held {
		t.Errorf("held %d records after the late ones, %d before: want the store's count, unchanged", heldAfter, held)
	}
}
