package acceptance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// runAt runs causalctl in-process against brokers with the clock stopped
// at now, so that two runs report the same ages.
func runAt(t *testing.T, brokers string, now time.Time, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	env := map[string]string{"CAUSALCTL_BROKERS": brokers}
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(k string) string { return env[k] }, Version: "test", Now: func() time.Time { return now }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := cli.Run(ctx, f, args)
	return code, out.String(), errOut.String()
}

// TestStateOfACaptureIsStateLive: a changelog written as a Parsley
// process writes it — in transactions, one aborted, tombstones, binary
// keys, three tasks — and business topics with null, empty and binary
// keys, null values and transaction markers; capture of the changelog and
// the business topics, then state --input of the capture equals state
// --app against the cluster, field by field, except exactly what a
// capture cannot know: the group (null offline) and, per channel, the
// committed offset and the lag computed from it.
func TestStateOfACaptureIsStateLive(t *testing.T) {
	const app = "roundtrip"
	cl := parsley.ChangelogTopic(app)
	c := kafkatest.Cluster(t, kfake.SeedTopics(3, cl), kfake.SeedTopics(3, "orders"), kfake.SeedTopics(2, "payments"))
	brokers := strings.Join(c.ListenAddrs(), ",")
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics(),
		kgo.TransactionalID(app+"-tx"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	adm := kadm.NewClient(w)
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	ch := func(topic string, p int32) clock.Channel { return clock.Channel{Topic: ids[topic], Partition: p} }
	txn := func(commit bool, rs ...*kgo.Record) {
		t.Helper()
		if err := w.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := w.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := w.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// Business topics: keys null, empty and binary, a null value, and
	// transactions (markers, an aborted record) between them.
	biz := func(topic string, p int32, key, value []byte) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Key: key, Value: value}
	}
	for p := range int32(3) {
		txn(true, biz("orders", p, nil, []byte("a")), biz("orders", p, []byte{}, nil), biz("orders", p, []byte{0xff, 0, 0xfe}, []byte{}))
		txn(false, biz("orders", p, []byte("gone"), []byte("aborted")))
		txn(true, biz("orders", p, []byte("k"), []byte("b")))
	}
	for p := range int32(2) {
		txn(true, biz("payments", p, []byte{0x80}, []byte("p")), biz("payments", p, nil, nil))
	}
	// The changelog. Orders offsets: 0,1,2 committed, 3 marker, 4 aborted,
	// 5 marker, 6 committed, 7 marker: the log end is 8.
	entry := func(p int32, k parsley.Key, v []byte) *kgo.Record {
		return &kgo.Record{Topic: cl, Partition: p, Key: parsley.AppendKey(nil, k), Value: v}
	}
	pos := func(n int64) []byte { return parsley.AppendPosition(nil, n) }
	held := func(c ...clock.Entry) []byte {
		return parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: 1764450000123, Key: []byte{0, 1, 0xff}, Value: nil,
			Headers: []clock.Header{{Key: "h", Value: nil}, {Key: "e", Value: []byte{}}}, Causes: c})
	}
	var first []*kgo.Record
	for p := range int32(3) {
		first = append(first, entry(p, parsley.Key{Tag: parsley.TagVersion}, []byte{1}),
			entry(p, parsley.Key{Tag: parsley.TagName, Name: "orders"}, parsley.AppendNameValue(nil, ids["orders"])),
			entry(p, parsley.Key{Tag: parsley.TagHeld, Channel: ch("orders", p), Position: 0}, held()))
		if p < 2 {
			first = append(first, entry(p, parsley.Key{Tag: parsley.TagName, Name: "payments"}, parsley.AppendNameValue(nil, ids["payments"])))
		}
	}
	txn(true, first...)
	txn(false, entry(1, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("orders", 1)}, pos(99)),
		entry(2, parsley.Key{Tag: parsley.TagHeld, Channel: ch("orders", 2), Position: 5}, held()))
	txn(true,
		// Tombstones of the first held records; task 0 delivered them.
		entry(0, parsley.Key{Tag: parsley.TagHeld, Channel: ch("orders", 0), Position: 0}, nil),
		entry(1, parsley.Key{Tag: parsley.TagHeld, Channel: ch("orders", 1), Position: 0}, nil),
		entry(0, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("orders", 0)}, pos(6)),
		entry(0, parsley.Key{Tag: parsley.TagFrontier, Channel: ch("orders", 0)}, pos(6)),
		entry(0, parsley.Key{Tag: parsley.TagDeliveredPast, Channel: ch("orders", 0)}, pos(2)),
		// Task 1: payments/1@1 waits for orders/1@6 (lagging: fed to 2).
		entry(1, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("orders", 1)}, pos(2)),
		entry(1, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("payments", 1)}, pos(1)),
		entry(1, parsley.Key{Tag: parsley.TagHeld, Channel: ch("payments", 1), Position: 1}, held(clock.Entry{Channel: ch("orders", 1), Position: 6})),
		// Task 0: payments/0@1 waits for orders/0@7, a transaction marker.
		entry(0, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("payments", 0)}, pos(1)),
		entry(0, parsley.Key{Tag: parsley.TagHeld, Channel: ch("payments", 0), Position: 1}, held(clock.Entry{Channel: ch("orders", 0), Position: 7})),
		// Task 2: nothing held any more.
		entry(2, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch("orders", 2)}, pos(6)),
		entry(2, parsley.Key{Tag: parsley.TagHeld, Channel: ch("orders", 2), Position: 0}, nil),
	)
	// The group's committed offsets: the cluster knows them, a capture
	// does not.
	offs := kadm.Offsets{}
	offs.AddOffset("orders", 0, 7, -1)
	offs.AddOffset("orders", 1, 3, -1)
	offs.AddOffset("payments", 1, 2, -1)
	if _, err := adm.CommitOffsets(ctx, app, offs); err != nil {
		t.Fatal(err)
	}

	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "state.ndjson")
	if code, _, stderr := runAt(t, brokers, now, "capture", "-t", cl, "-t", "orders", "-t", "payments", "-f", path); code != 0 {
		t.Fatalf("capture: exit %d: %s", code, stderr)
	}
	liveCode, live, stderr := runAt(t, brokers, now, "state", "--app", app, "--store-only", "-o", "json") // a capture knows no committed offsets to read on from
	if liveCode != 4 {
		t.Fatalf("state live: exit %d: %s %s", liveCode, live, stderr)
	}
	offCode, offline, stderr := runAt(t, brokers, now, "state", "--input", path, "-o", "json")
	if offCode != liveCode {
		t.Fatalf("state --input: exit %d, live %d: %s", offCode, liveCode, stderr)
	}
	var a, b map[string]any
	if err := json.Unmarshal([]byte(live), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(offline), &b); err != nil {
		t.Fatal(err)
	}
	// What a capture cannot know, asserted, then left out of the
	// comparison: the group, and each channel's committed offset and lag.
	if a["group"] == nil || b["group"] != nil {
		t.Errorf("group live %v, offline %v: want the group live and null offline", a["group"], b["group"])
	}
	delete(a, "group")
	delete(b, "group")
	committed := 0
	for i, task := range a["tasks"].([]any) {
		ot := b["tasks"].([]any)[i].(map[string]any)
		for j, chv := range task.(map[string]any)["channels"].([]any) {
			lc, oc := chv.(map[string]any), ot["channels"].([]any)[j].(map[string]any)
			if lc["committed"] != nil {
				committed++
				if lc["lag"] == nil {
					t.Errorf("%v: committed without a lag", lc["channel"])
				}
			}
			if oc["committed"] != nil || oc["lag"] != nil {
				t.Errorf("offline %v: committed %v lag %v, want null", oc["channel"], oc["committed"], oc["lag"])
			}
			for _, k := range []string{"committed", "lag"} {
				delete(lc, k)
				delete(oc, k)
			}
		}
	}
	if committed != 3 {
		t.Errorf("%d committed offsets live, want 3", committed)
	}
	// The retention clock runs from the committed offsets: none offline.
	if rc, ok := b["retention_clock"].([]any); !ok || len(rc) != 0 {
		t.Errorf("offline retention_clock %v, want []", b["retention_clock"])
	}
	delete(a, "retention_clock")
	delete(b, "retention_clock")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("state --input differs from state live beyond the group and committed offsets:\nlive    %s\noffline %s", live, offline)
	}
	// The capture itself: changelog keys are binary (base64), tombstones
	// null values, and the business topics' empty and null keys differ.
	capt, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"key":"dg==","value":"AQ=="}`, `"value":null}`, `"key":"","value":null}`, `"key":null,"value":"YQ=="}`, `"key":"/wD+","value":""}`, `"position":5}`} {
		if !strings.Contains(string(capt), want) {
			t.Errorf("capture lacks %s", want)
		}
	}

	// A cause that rests on the committed offsets differs too: once the
	// group commits orders/0 past 7 (a transaction marker), the live state
	// knows 7 carried no record (not-a-record); the capture, without the
	// group, still sees orders/0 fed to 6 (lagging).
	offs = kadm.Offsets{}
	offs.AddOffset("orders", 0, 8, -1)
	if _, err := adm.CommitOffsets(ctx, app, offs); err != nil {
		t.Fatal(err)
	}
	_, live, _ = runAt(t, brokers, now, "state", "--app", app, "--store-only", "--task", "0", "-o", "json")
	_, offline, _ = runAt(t, brokers, now, "state", "--input", path, "--task", "0", "-o", "json")
	for _, tc := range []struct{ name, out, cause string }{{"live", live, "not-a-record"}, {"offline", offline, "lagging"}} {
		want := `"cause":"` + tc.cause + `","root":{"channel":"payments/0","offset":1,"cause":"` + tc.cause + `"},"chain":["payments/0"],"chain_length":1,"blockers":[{"channel":"orders/0","required":7,"settled":6,"cause":"` + tc.cause + `","root":null,`
		if !strings.Contains(tc.out, want) {
			t.Errorf("%s: payments/0@1 is not %s: want %s in\n%s", tc.name, tc.cause, want, tc.out)
		}
	}
}
