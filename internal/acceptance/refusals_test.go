package acceptance

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
// healthyApp beside it receives invoices (1), which no case touches: its
// next start stays ok whatever happens to startApp's topics.
const (
	startApp   = "shop-packer"
	healthyApp = "shop-billing"
)

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
	opts := []kfake.Opt{kfake.SeedTopics(2, changelog), kfake.SeedTopics(1, parsley.ChangelogTopic(healthyApp), "invoices")}
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
	// The healthy neighbour: fed invoices/0 up to 4, committed at 5.
	healthy := parsley.ChangelogTopic(healthyApp)
	for range 5 {
		recs = append(recs, &kgo.Record{Topic: "invoices", Value: []byte("x")})
	}
	recs = append(recs,
		&kgo.Record{Topic: healthy, Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagVersion}), Value: []byte{1}},
		&kgo.Record{Topic: healthy, Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagName, Name: "invoices"}), Value: parsley.AppendNameValue(nil, w.ids["invoices"])},
		&kgo.Record{Topic: healthy, Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagFedUpTo, Channel: clock.Channel{Topic: w.ids["invoices"]}}), Value: parsley.AppendPosition(nil, 4)})
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
	hc := kadm.Offsets{}
	hc.Add(kadm.Offset{Topic: "invoices", At: 5, LeaderEpoch: -1})
	resp, err = w.adm.CommitOffsets(context.Background(), healthyApp, hc)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s's offsets: %v", healthyApp, err)
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

// psRow is what these tests read of a row of processes: its JSON (tasks,
// error, next_start) and its text's NEXT-START cell.
type psRow struct {
	Tasks     int        `json:"tasks"`
	Error     *string    `json:"error"`
	NextStart *nextStart `json:"next_start"`
	Cell      string     `json:"-"`
}

// processes runs `causalctl processes` with -o json (checked against its
// schema) and as text, and returns its exit code and rows by application
// id; a row of one output but not the other fails the test.
func (w *startWorld) processes(t *testing.T, args ...string) (int, map[string]psRow) {
	t.Helper()
	args = append([]string{"processes", "--brokers", w.addr}, args...)
	code, out, stderr := runEnv(t, nil, append(args, "-o", "json")...)
	for _, e := range loadSchemas(t).Validate("processes.schema.json", out) {
		t.Errorf("%v: %s", args, e)
	}
	var rep struct {
		Processes []struct {
			App string `json:"app"`
			psRow
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: exit %d, %v: %s%s", args, code, err, out, stderr)
	}
	rows := map[string]psRow{}
	for _, p := range rep.Processes {
		rows[p.App] = p.psRow
	}
	textCode, text, stderr := runEnv(t, nil, args...)
	if textCode != code {
		t.Errorf("%v: text exits %d, JSON %d: %s", args, textCode, code, stderr)
	}
	// Plain columns, no cell holding a space: APP first, NEXT-START last.
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		r, ok := rows[f[0]]
		if !ok {
			t.Errorf("%v: a text row for %s, none in JSON:\n%s", args, f[0], text)
		}
		r.Cell = f[len(f)-1]
		rows[f[0]] = r
	}
	if len(lines)-1 != len(rows) {
		t.Errorf("%v: %d text rows, %d JSON rows:\n%s", args, len(lines)-1, len(rows), text)
	}
	return code, rows
}

// checkRow checks a row of processes: its NEXT-START cell and next_start
// name want ("" for ok) and nothing else, as checkRefusals does.
func checkRow(t *testing.T, how string, r psRow, want parsley.Reason, topic string, channels []string, lost int64) {
	t.Helper()
	cell := string(want)
	if want == "" {
		cell = "ok"
	}
	if r.Error != nil || r.NextStart == nil {
		t.Fatalf("%s: unread: %v", how, *r.Error)
	}
	if r.Cell != cell {
		t.Errorf("%s: NEXT-START %q, want %q", how, r.Cell, cell)
	}
	checkRefusals(t, how, *r.NextStart, want, topic, channels, lost)
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
		}, want: parsley.StopSourceTopicMissing, topic: "shipments", gone: []string{"shipments"}},
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
			w.deleteUnread(t)
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
			w.checkProcesses(t, tc.want, tc.args != nil, tc.topic, tc.channels, tc.lost)
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

// checkProcesses checks that processes predicts want for startApp and ok
// for healthyApp, in text and JSON. processes checks today's declaration:
// a narrowed one (declared, state --receives only) is ok there. A process
// whose changelog is gone is not discovered, and is found by --app.
func (w *startWorld) checkProcesses(t *testing.T, want parsley.Reason, declared bool, topic string, channels []string, lost int64) {
	t.Helper()
	if declared {
		want, topic, channels, lost = "", "", nil, 0
	}
	code, rows := w.processes(t)
	if code != 0 {
		t.Errorf("processes: exit %d", code)
	}
	checkRow(t, "processes: "+healthyApp, rows[healthyApp], "", "", nil, 0)
	if want != parsley.ReasonOrderingStateLost {
		if len(rows) != 2 {
			t.Errorf("processes: rows %v, want %s and %s", slices.Sorted(maps.Keys(rows)), startApp, healthyApp)
		}
		checkRow(t, "processes: "+startApp, rows[startApp], want, topic, channels, lost)
		return
	}
	if _, ok := rows[startApp]; ok || len(rows) != 1 {
		t.Errorf("processes discovered %v without %s's changelog", slices.Sorted(maps.Keys(rows)), startApp)
	}
	code, rows = w.processes(t, "--app", startApp)
	if r := rows[startApp]; code != 0 || len(rows) != 1 || r.Tasks != 0 {
		t.Errorf("processes --app %s: exit %d, rows %+v, want one of 0 tasks", startApp, code, rows)
	}
	checkRow(t, "processes --app "+startApp, rows[startApp], want, topic, channels, lost)
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
	checkRefusals(t, how, ns, want, topic, channels, lost)
	if want == "" {
		if !strings.HasPrefix(first, "next start: ok — the store and the") {
			t.Errorf("%s: first line %q", how, first)
		}
		return
	}
	r := ns.Refusals[0]
	if first != "next start: refused — "+string(want) || !strings.Contains(text, r.Detail) || !strings.Contains(text, "next step: "+r.NextStep) {
		t.Errorf("%s: text does not give the refusal:\n%s", how, text)
	}
}

// checkRefusals checks a next_start object: refused with exactly want
// ("" for none), naming topic, channels and the records lost, with a
// detail and the reason's next step.
func checkRefusals(t *testing.T, how string, ns nextStart, want parsley.Reason, topic string, channels []string, lost int64) {
	t.Helper()
	if want == "" {
		if ns.Refused || len(ns.Refusals) != 0 {
			t.Errorf("%s: refused: %+v", how, ns)
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
}

// deleteUnread writes 5 more records to orders/1 (offsets 5–9) and
// deletes up to offset 8, as retention does: offsets 5–7 go unread.
func (w *startWorld) deleteUnread(t *testing.T) {
	t.Helper()
	var more []*kgo.Record
	for range 5 {
		more = append(more, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("y")})
	}
	kafkatest.Produce(t, w.c, more...)
	to := kadm.Offsets{}
	to.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 8})
	r, err := w.adm.DeleteRecords(context.Background(), to)
	mustOK(t, err, r.Error())
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
// unknown topic (a mistyped application id), not a lost state, through
// state and processes --app; --app names one application id, not with
// --app-prefix; and --receives takes topic names.
func TestStartRefusalsBadAsking(t *testing.T) {
	w := newStartWorld(t, false)
	code, _, stderr := runEnv(t, nil, "state", "--brokers", w.addr, "--app", "shop-packre")
	if code != 1 || !strings.Contains(stderr, `unknown topic "shop-packre-__parsley.ordering-changelog"`) {
		t.Errorf("mistyped app: exit %d: %s", code, stderr)
	}
	// processes --app likewise: a row with the error, exit 1; --app alone
	// lists that process alone.
	code, rows := w.processes(t, "--app", "shop-packre")
	if r, ok := rows["shop-packre"]; code != 1 || len(rows) != 1 || !ok || r.Error == nil || r.NextStart != nil || r.Cell != "unread" ||
		!strings.Contains(*r.Error, "unknown topic") {
		t.Errorf("processes --app mistyped: exit %d, rows %+v", code, rows)
	}
	code, rows = w.processes(t, "--app", healthyApp)
	if _, ok := rows[healthyApp]; code != 0 || len(rows) != 1 || !ok {
		t.Errorf("processes --app %s: exit %d, rows %+v", healthyApp, code, rows)
	}
	for _, args := range [][]string{{"--app", ""}, {"--app", "a b"}, {"--app", startApp, "--app-prefix", "shop-"}} {
		code, _, stderr := runEnv(t, nil, append([]string{"processes", "--brokers", w.addr}, args...)...)
		if code != 2 || !strings.Contains(stderr, "--app") {
			t.Errorf("processes %q: exit %d: %s", args, code, stderr)
		}
	}
	for _, arg := range []string{"", "orders/0", "a,b c"} {
		code, _, stderr := runEnv(t, nil, "state", "--brokers", w.addr, "--app", startApp, "--receives", arg)
		if code != 2 || !strings.Contains(stderr, "--receives") {
			t.Errorf("--receives %q: exit %d: %s", arg, code, stderr)
		}
	}
}
