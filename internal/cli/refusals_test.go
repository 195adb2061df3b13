package cli

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// startApp is the process of the start-refusal tests: it receives orders
// (2 partitions), payments (2) and shipments (1), so it has two tasks.
const startApp = "shop-packer"

// startWorld is one stopped process and its cluster: five records on every
// business partition, all of them fed, the group committed past them, and
// (held) shipments/0@4 held on a cause never written.
type startWorld struct {
	c    *kfake.Cluster
	addr string
	adm  *kadm.Client
	ids  map[string]clock.TopicID
}

var startTopics = map[string]int32{"orders": 2, "payments": 2, "shipments": 1}

func newStartWorld(t *testing.T, held bool) *startWorld {
	t.Helper()
	changelog := parsley.ChangelogTopic(startApp)
	opts := []kfake.Opt{kfake.SeedTopics(2, changelog)}
	for name, n := range startTopics {
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	c := kafkatest.Cluster(t, opts...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	w := &startWorld{c: c, addr: c.ListenAddrs()[0], adm: kadm.NewClient(cl), ids: map[string]clock.TopicID{}}
	md, err := w.adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		w.ids[td.Topic] = clock.TopicID(td.ID)
	}
	var recs []*kgo.Record
	for name, n := range startTopics {
		for p := range n {
			for range 5 {
				recs = append(recs, &kgo.Record{Topic: name, Partition: p, Value: []byte("x")})
			}
		}
	}
	entry := func(p int32, k parsley.Key, v []byte) *kgo.Record {
		return &kgo.Record{Topic: changelog, Partition: p, Key: parsley.AppendKey(nil, k), Value: v}
	}
	commit := kadm.Offsets{}
	for task := range int32(2) {
		recs = append(recs, entry(task, parsley.Key{Tag: parsley.TagVersion}, []byte{1}))
		for name, n := range startTopics {
			recs = append(recs, entry(task, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, w.ids[name])))
			if task < n {
				ch := clock.Channel{Topic: w.ids[name], Partition: task}
				recs = append(recs, entry(task, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, parsley.AppendPosition(nil, 4)))
				commit.Add(kadm.Offset{Topic: name, Partition: task, At: 5, LeaderEpoch: -1})
			}
		}
	}
	if held {
		rec := &parsley.HeldRecord{Timestamp: 1, Causes: []clock.Entry{{Channel: clock.Channel{Topic: w.ids["orders"]}, Position: 99}}}
		recs = append(recs, entry(0, parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: w.ids["shipments"]}, Position: 4},
			parsley.AppendHeldRecord(nil, rec)))
	}
	kafkatest.Produce(t, c, recs...)
	resp, err := w.adm.CommitOffsets(context.Background(), startApp, commit)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing the group's offsets: %v", err)
	}
	return w
}

// nextStart is the next_start object of state's JSON.
type nextStart struct {
	Refused  bool `json:"refused"`
	Refusals []struct {
		Reason      parsley.Reason `json:"reason"`
		Topic       *string        `json:"topic"`
		Channels    []string       `json:"channels"`
		Detail      string         `json:"detail"`
		NextStep    string         `json:"next_step"`
		RecordsLost *int64         `json:"records_lost"`
	} `json:"refusals"`
}

// state runs `causalctl state` and returns its exit code, next_start and
// text (the same arguments without -o json).
func (w *startWorld) state(t *testing.T, args ...string) (int, nextStart, string) {
	t.Helper()
	code, out, stderr := runEnv(t, nil, append([]string{"state", "-o", "json"}, args...)...)
	var rep struct {
		NextStart *nextStart `json:"next_start"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.NextStart == nil {
		t.Fatalf("state %v: exit %d, %v, next_start %v: %s%s", args, code, err, rep.NextStart, out, stderr)
	}
	textCode, text, stderr := runEnv(t, nil, append([]string{"state"}, args...)...)
	if textCode != code {
		t.Errorf("text exits %d, JSON %d: %s", textCode, code, stderr)
	}
	return code, *rep.NextStart, text
}

// capture captures the changelog and the business topics but those gone,
// as an operator would for an offline look.
func (w *startWorld) capture(t *testing.T, gone []string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "capture.ndjson")
	args := []string{"capture", "--brokers", w.addr, "-f", file, "-t", parsley.ChangelogTopic(startApp)}
	for _, name := range slices.Sorted(maps.Keys(startTopics)) {
		if !slices.Contains(gone, name) {
			args = append(args, "-t", name)
		}
	}
	if code, _, stderr := runEnv(t, nil, args...); code != 0 {
		t.Fatalf("capture: exit %d: %s", code, stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(file)
			t.Logf("capture:\n%s", b)
		}
	})
	return file
}

// TestStartRefusals makes each refusal the way it happens to a stopped
// process and checks that state predicts it, and only it, in JSON and
// text, live and from a capture where a capture can tell.
func TestStartRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		held bool
		make func(t *testing.T, w *startWorld)
		args []string
		want parsley.Reason // "" for none
		// topic, channels and records lost the refusal names
		topic    string
		channels []string
		lost     int64
		// offline is what a capture predicts; "-" when there is nothing
		// to capture (the changelog is gone). gone are the topics deleted.
		offline parsley.Reason
		gone    []string
	}{
		{name: "healthy", held: true},
		{name: "healthy, nothing held"},
		{name: "received topic deleted while held", held: true, make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.DeleteTopics(ctx, "shipments")
			mustOK(t, err, r.Error())
		}, want: parsley.ReasonDeletedWithUndelivered, topic: "shipments", channels: []string{"shipments/0"}, offline: "", gone: []string{"shipments"}},
		{name: "received topic deleted, nothing held", make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.DeleteTopics(ctx, "shipments")
			mustOK(t, err, r.Error())
		}, gone: []string{"shipments"}},
		{name: "received topic deleted and recreated", make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.DeleteTopics(ctx, "payments")
			mustOK(t, err, r.Error())
			cr, err := w.adm.CreateTopic(ctx, 2, 1, nil, "payments")
			mustOK(t, err, cr.Err)
		}, want: parsley.ReasonIdentityChanged, topic: "payments", offline: parsley.ReasonIdentityChanged},
		{name: "changelog deleted, the group kept its offsets", make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.DeleteTopics(ctx, parsley.ChangelogTopic(startApp))
			mustOK(t, err, r.Error())
		}, want: parsley.ReasonOrderingStateLost, offline: "-"},
		{name: "partitions added to the widest topic", make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.CreatePartitions(ctx, 1, "orders")
			mustOK(t, err, r.Error())
		}, want: parsley.ReasonTaskWidthChanged, offline: parsley.ReasonTaskWidthChanged},
		{name: "records deleted past the committed offset", make: func(t *testing.T, w *startWorld) {
			var more []*kgo.Record
			for range 5 {
				more = append(more, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("y")})
			}
			kafkatest.Produce(t, w.c, more...)
			to := kadm.Offsets{}
			to.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 8})
			r, err := w.adm.DeleteRecords(ctx, to)
			mustOK(t, err, r.Error())
		}, want: parsley.ReasonPositionsDiscarded, topic: "orders", channels: []string{"orders/1"}, lost: 3, offline: parsley.ReasonPositionsDiscarded},
		{name: "declaration narrowed while held", held: true, args: []string{"--receives", "orders,payments"},
			want: parsley.ReasonRemovedWithHeld, topic: "shipments", channels: []string{"shipments/0"}, offline: parsley.ReasonRemovedWithHeld},
		{name: "declaration narrowed, nothing held", args: []string{"--receives", "orders,payments"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newStartWorld(t, tc.held)
			var file string
			if tc.make != nil {
				tc.make(t, w)
			}
			if tc.offline != "-" {
				file = w.capture(t, tc.gone)
			}
			code, ns, text := w.state(t, append([]string{"--brokers", w.addr, "--app", startApp}, tc.args...)...)
			checkNextStart(t, "live", code, ns, text, tc.held, tc.want, tc.topic, tc.channels, tc.lost)
			if file == "" {
				return
			}
			code, ns, text = w.state(t, append([]string{"--input", file, "--app", startApp}, tc.args...)...)
			checkNextStart(t, "offline", code, ns, text, tc.held, tc.offline, tc.topic, tc.channels, tc.lost)
			// A topic the capture lacks is named as unknown, not deleted.
			for _, name := range tc.gone {
				if !strings.Contains(text, "not in the capture: "+name+" — deleted or not captured") {
					t.Errorf("offline: the text does not say %s is not in the capture:\n%s", name, text)
				}
			}
			if strings.Contains(text, "not in the capture") != (len(tc.gone) > 0) {
				t.Errorf("offline: a topic said not captured:\n%s", text)
			}
		})
	}
}

func checkNextStart(t *testing.T, how string, code int, ns nextStart, text string, held bool, want parsley.Reason, topic string, channels []string, lost int64) {
	t.Helper()
	first, _, _ := strings.Cut(text, "\n")
	wantCode := 0
	if held || want != "" {
		wantCode = 4
	}
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d", how, code, wantCode)
	}
	if want == "" {
		if ns.Refused || len(ns.Refusals) != 0 {
			t.Errorf("%s: refused: %+v", how, ns)
		}
		if !strings.HasPrefix(first, "next start: ok — the store and the") {
			t.Errorf("%s: first line %q", how, first)
		}
		return
	}
	if !ns.Refused || len(ns.Refusals) != 1 || ns.Refusals[0].Reason != want {
		t.Fatalf("%s: refusals %+v, want exactly %s", how, ns.Refusals, want)
	}
	r := ns.Refusals[0]
	if topic != "" && (r.Topic == nil || *r.Topic != topic) {
		t.Errorf("%s: topic %v, want %s", how, r.Topic, topic)
	}
	if channels != nil && !slices.Equal(r.Channels, channels) {
		t.Errorf("%s: channels %v, want %v", how, r.Channels, channels)
	}
	if (r.RecordsLost != nil) != (want == parsley.ReasonPositionsDiscarded) || (r.RecordsLost != nil && *r.RecordsLost != lost) {
		t.Errorf("%s: records lost %v, want %d", how, r.RecordsLost, lost)
	}
	if r.Detail == "" || r.NextStep != want.NextStep() {
		t.Errorf("%s: detail %q, next step %q", how, r.Detail, r.NextStep)
	}
	if first != "next start: refused — "+string(want) || !strings.Contains(text, r.Detail) || !strings.Contains(text, "next step: "+r.NextStep) {
		t.Errorf("%s: text does not give the refusal:\n%s", how, text)
	}
}

// mustOK fails the test on an admin call's errors: the request's, then
// the per-topic ones.
func mustOK(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A changelog that is missing with no group offsets behind it is an
// unknown topic (a mistyped application id), not a lost state; and
// --receives takes topic names.
func TestStartRefusalsBadAsking(t *testing.T) {
	w := newStartWorld(t, false)
	code, _, stderr := runEnv(t, nil, "state", "--brokers", w.addr, "--app", "shop-packre")
	if code != 1 || !strings.Contains(stderr, `unknown topic "shop-packre-__parsley.ordering-changelog"`) {
		t.Errorf("mistyped app: exit %d: %s", code, stderr)
	}
	for _, arg := range []string{"", "orders/0", "a,b c"} {
		code, _, stderr := runEnv(t, nil, "state", "--brokers", w.addr, "--app", startApp, "--receives", arg)
		if code != 2 || !strings.Contains(stderr, "--receives") {
			t.Errorf("--receives %q: exit %d: %s", arg, code, stderr)
		}
	}
}
