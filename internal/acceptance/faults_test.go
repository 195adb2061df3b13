package acceptance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/testutil"
)

// This file is the fault table: every broker command run in-process
// through the real command tree against a kfake cluster behind fault
// proxies (kafkatest.Proxied) and kfake's own fault hooks, each fault
// either survived — the very output of the run without faults — or
// failed with exit 1 and one line naming the channel, how far it got and
// the cause. Timeouts are short (--request-timeout 2s, --dial-timeout
// 1s) so that a fault is injected, not waited for, and every run is
// bounded by runCtx's limit: a hang fails the test.

// faultNow is the clock of every run, so that hold ages are the same.
var faultNow = time.UnixMilli(1_800_000_000_000)

// faultCluster is a pipeline big enough for a fetch to span many TCP
// reads (about 300 KB): orders (2 partitions) and payments (1), each
// payment claiming the order before it, the last one an order never
// written (a hold); and the Parsley process faultApp that ordered them,
// its changelog as big (faults_process_test.go).
type faultCluster struct {
	*kafkatest.ProxiedCluster
	brokers  string
	orders   clock.TopicID
	payments clock.TopicID
	auth     []kgo.Opt // the writers' credentials, on a cluster that wants them
}

func newFaultCluster(t *testing.T, opts ...kfake.Opt) *faultCluster {
	t.Helper()
	return newFaultClusterAuth(t, nil, opts...)
}

// newFaultClusterAuth is newFaultCluster on a cluster whose writers
// authenticate with auth (kfake.EnableSASL in opts).
func newFaultClusterAuth(t *testing.T, auth []kgo.Opt, opts ...kfake.Opt) *faultCluster {
	t.Helper()
	pc := kafkatest.Proxied(t, append([]kfake.Opt{kfake.SeedTopics(2, "orders"), kfake.SeedTopics(1, "payments"),
		kfake.SeedTopics(2, parsley.ChangelogTopic(faultApp))}, opts...)...)
	fc := &faultCluster{ProxiedCluster: pc, brokers: strings.Join(pc.Addrs(), ","), auth: auth}
	w := fc.writer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range md.Topics {
		switch *tm.Topic {
		case "orders":
			fc.orders = clock.TopicID(tm.TopicID)
		case "payments":
			fc.payments = clock.TopicID(tm.TopicID)
		}
	}
	fc.produce(t, w, 0, 150)
	fc.writeProcess(t)
	return fc
}

// writer is a producing client that reaches the brokers past the proxies.
func (fc *faultCluster) writer(t *testing.T) *kgo.Client {
	t.Helper()
	w, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(fc.Addrs()...), kgo.Dialer(fc.DialDirect),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics(),
		kgo.ProducerBatchCompression(kgo.NoCompression())}, fc.auth...)...) // so that the bytes on the wire are many
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// produce writes n orders to each partition of orders and n payments, the
// i-th payment claiming order i of orders/(i%2), starting at order from;
// with from 0 the last payment claims an order never written.
func (fc *faultCluster) produce(t *testing.T, w *kgo.Client, from, n int) {
	t.Helper()
	value := []byte(strings.Repeat("x", 600))
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		for p := range int32(2) {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: value, Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i))})
		}
		claim := int64(i)
		if from == 0 && i == n-1 {
			claim = 1_000_000
		}
		c := clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: fc.orders, Partition: int32(i % 2)}, Position: claim})
		recs = append(recs, &kgo.Record{Topic: "payments", Value: value, Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)),
			Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(c)}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// faultRun runs causalctl against fc with short timeouts and a fixed
// clock, bounded by runCtx's limit.
func faultRun(t *testing.T, fc *faultCluster, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return faultRunEnv(t, fc.brokers, nil, args...)
}

// faultRunEnv is faultRun against brokers with an environment.
func faultRunEnv(t *testing.T, brokers string, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	args = append(args, "--brokers", brokers, "--request-timeout", "2s", "--dial-timeout", "1s")
	ios, _, _, errOut := iostreams.Test()
	out := &testutil.SyncBuffer{}
	ios.Out = out
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(k string) string { return env[k] }, Version: "test", Now: func() time.Time { return faultNow }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, f, args) }()
	select {
	case code = <-done:
	case <-time.After(25 * time.Second):
		t.Fatalf("causalctl %s did not return", strings.Join(args, " "))
	}
	return code, out.String(), errOut.String()
}

// faultCommand is one column of the table: a command and how to get its
// result (stdout, or the file it wrote), with wall-clock stamps removed.
type faultCommand struct {
	name string
	code int // its exit code without faults (holds and check find a hold)
	// fetches are the topics the broker-side fetch faults hit: those the
	// command fetches (the table's "orders" and "payments").
	fetches [2]string
	args    func(dir string) []string
	// result returns what must not change under a transparent fault.
	result func(t *testing.T, dir, stdout string) string
}

var (
	logFactsAt = regexp.MustCompile(`,"at":\d+`)
	spoolLine  = regexp.MustCompile(`\(line \d+\)`)
)

func faultCommands() []faultCommand {
	stdout := func(_ *testing.T, _ string, out string) string { return out }
	business := [2]string{"orders", "payments"}
	return []faultCommand{
		{"capture", 0, business, func(dir string) []string {
			return []string{"capture", "-t", "orders", "-t", "payments", "-f", filepath.Join(dir, "c.ndjson")}
		}, func(t *testing.T, dir, _ string) string {
			return byChannel(logFactsAt.ReplaceAllString(readFile(t, filepath.Join(dir, "c.ndjson")), ""))
		}},
		{"replay", 0, business, func(string) []string { return []string{"replay", "-t", "orders,payments", "-o", "json"} }, stdout},
		{"holds", cmdutil.ExitFound, business, func(string) []string { return []string{"holds", "-t", "orders,payments", "-o", "json"} }, stdout},
		// check names each finding's line in the range's spool, which is in
		// fetch order: the same range may give other line numbers.
		{"check", cmdutil.ExitFound, business, func(string) []string { return []string{"check", "-t", "orders,payments"} },
			func(_ *testing.T, _ string, out string) string { return spoolLine.ReplaceAllString(out, "(line N)") }},
		{"topics", 0, business, func(string) []string { return []string{"topics", "-o", "json"} }, stdout},
		// state and processes fetch only the changelog (the business
		// topics' log facts are listed, not fetched): the fetch faults hit
		// it.
		{name: "state", code: cmdutil.ExitFound, fetches: [2]string{faultChangelog, faultChangelog},
			args:   func(string) []string { return []string{"state", "--app", faultApp, "-o", "json"} },
			result: stdout},
		{name: "processes", code: 0, fetches: [2]string{faultChangelog, faultChangelog},
			args:   func(string) []string { return []string{"processes", "-o", "json"} },
			result: stdout},
		// reset-plan reads the changelog as state does, and its last
		// batches for when it was last written.
		{name: "reset-plan", code: cmdutil.ExitFound, fetches: [2]string{faultChangelog, faultChangelog},
			args:   func(string) []string { return []string{"reset-plan", "--app", faultApp, "-o", "json"} },
			result: stdout},
	}
}

// A fault is one row: installed before the command runs, removed after.
type fault struct {
	name string
	// install sets the fault on fc and returns its removal.
	install func(fc *faultCluster) (remove func())
	// fails says the command must fail (exit 1, one line) rather than
	// survive; wantErr are substrings of that line.
	fails   bool
	wantErr []string
}

// checkFailure checks a failing cell: exit 1 and one line saying wantErr.
func (f fault) checkFailure(t *testing.T, code int, stderr string) {
	t.Helper()
	line := strings.TrimSuffix(stderr, "\n")
	if code != cmdutil.ExitFailure || strings.Contains(line, "\n") {
		t.Errorf("%s: exit %d, stderr %q: want exit 1 and one line", f.name, code, stderr)
		return
	}
	for _, w := range f.wantErr {
		if !strings.Contains(line, w) {
			t.Errorf("%s: error %q lacks %q", f.name, line, w)
		}
	}
}

func proxyFault(f kafkatest.Faults) func(fc *faultCluster) func() {
	return func(fc *faultCluster) func() {
		fc.SetAll(f)
		return func() { fc.SetAll(kafkatest.Faults{}) }
	}
}

func brokerFault(f kfake.Fault) func(fc *faultCluster) func() {
	return func(fc *faultCluster) func() { return fc.Fault(f).Remove }
}

// faultTable is every fault; the broker-side fetch faults hit the topics
// a and b (partition 1 of a for the fault that does not end).
func faultTable(a, b string) []fault {
	fetch := []kmsg.Key{kmsg.Fetch}
	return []fault{
		{name: "latency 5ms", install: proxyFault(kafkatest.Faults{Latency: 5 * time.Millisecond})},
		{name: "bandwidth 4MB/s", install: proxyFault(kafkatest.Faults{BytesPerSecond: 4 << 20})},
		{name: "fragmented writes", install: proxyFault(kafkatest.Faults{Slice: 61})},
		{name: "one reset mid-response", install: proxyFault(kafkatest.Faults{ResetAfter: 20 << 10, Resets: 1})},
		{name: "reset of every big response", install: proxyFault(kafkatest.Faults{ResetAfter: 20 << 10}),
			fails: true, wantErr: []string{"reading ", " failed at position ", "no progress for"}},
		{name: "blackhole", install: proxyFault(kafkatest.Faults{Blackhole: true}),
			fails: true, wantErr: []string{"no Kafka response from 127.0.0.1:", "within 1s"}},
		{name: "NOT_LEADER_FOR_PARTITION twice", install: brokerFault(kfake.Fault{Keys: fetch, Topic: a, Err: kerr.NotLeaderForPartition, Count: 2})},
		{name: "OFFSET_OUT_OF_RANGE once", install: brokerFault(kfake.Fault{Keys: fetch, Topic: b, Err: kerr.OffsetOutOfRange, Count: 1})},
		{name: "UNKNOWN_TOPIC_ID twice", install: brokerFault(kfake.Fault{Keys: fetch, Topic: a, Err: kerr.UnknownTopicID, Count: 2})},
		{name: "throttled fetches", install: throttle},
		{name: "NOT_LEADER_FOR_PARTITION for good", install: brokerFault(kfake.Fault{Keys: fetch, Topic: a, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1}),
			fails: true, wantErr: []string{"reading " + a + "/1 failed at position 0 (no record read yet): no progress for", "NOT_LEADER_FOR_PARTITION"}},
	}
}

// throttle answers the first three fetches with no records and a throttle
// time, as a broker over its quota does; kgo then holds back requests to
// that broker for the throttle time.
func throttle(fc *faultCluster) func() {
	var n atomic.Int32
	fc.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if n.Add(1) > 3 {
			return nil, nil, false
		}
		fc.KeepControl()
		r := req.(*kmsg.FetchRequest)
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		resp.ThrottleMillis = 50
		for _, rt := range r.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = rp.Partition, -1, -1, -1
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return func() { n.Store(1 << 20) }
}

// TestFaultTable runs every command under every fault. A cell passes when
// the command's result is the fault-free result (exit 0), or, for a fault
// that cannot be ridden out within the request timeout, when it exits 1
// with one line naming the channel, its position and the cause — never
// exit 0 with another answer.
func TestFaultTable(t *testing.T) {
	for _, cmd := range faultCommands() {
		t.Run(cmd.name, func(t *testing.T) {
			t.Parallel() // the failing cells wait out the request timeout
			fc := newFaultCluster(t)
			dir := t.TempDir()
			code, out, stderr := faultRun(t, fc, cmd.args(dir)...)
			if code != cmd.code {
				t.Fatalf("without faults: exit %d, want %d: %s", code, cmd.code, stderr)
			}
			want := cmd.result(t, dir, out)
			if len(want) < 200 {
				t.Fatalf("the fault-free result is too small to tell anything: %q", want)
			}
			for _, f := range faultTable(cmd.fetches[0], cmd.fetches[1]) {
				if f.fails && cmd.name == "topics" && !strings.HasPrefix(f.wantErr[0], "no Kafka") {
					continue // topics fetches nothing: a fetch fault does not reach it
				}
				dir := t.TempDir()
				start := time.Now()
				remove := f.install(fc)
				code, out, stderr := faultRun(t, fc, cmd.args(dir)...)
				remove()
				t.Logf("%s: %v", f.name, time.Since(start).Round(time.Millisecond))
				switch {
				case f.fails:
					f.checkFailure(t, code, stderr)
				case code != cmd.code:
					t.Errorf("%s: exit %d (%s), want the fault ridden out", f.name, code, stderr)
				default:
					if got := cmd.result(t, dir, out); got != want {
						t.Errorf("%s: a different result under the fault (%d bytes, want %d):\n%s", f.name, len(got), len(want), firstDiff(got, want))
					}
				}
			}
		})
	}
}

// byChannel orders capture lines by channel, keeping each channel's in
// file order: the order across channels is the order fetches answered,
// which a retried fetch may change, and no reader relies on.
func byChannel(capture string) string {
	lines := strings.SplitAfter(capture, "\n")
	channel := func(l string) string {
		_, rest, _ := strings.Cut(l, `"topic":"`)
		topic, rest, _ := strings.Cut(rest, `"`)
		_, rest, _ = strings.Cut(rest, `"partition":`)
		part, _, _ := strings.Cut(rest, ",")
		return topic + "/" + part
	}
	slices.SortStableFunc(lines, func(a, b string) int { return strings.Compare(channel(a), channel(b)) })
	return strings.Join(lines, "")
}

// firstDiff shows where got first differs from want.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n got …%s\nwant …%s", i, got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFaultTableWatch is the table's watch column: under each fault it can
// ride out, watch reaches the fault-free state — every record received
// once, the same held — and under the others it exits 1 with one line.
func TestFaultTableWatch(t *testing.T) {
	fc := newFaultCluster(t)
	watch := []string{"watch", "-t", "orders,payments", "--offsets", "start", "--interval", "50ms"}
	settled := regexp.MustCompile(`(?m)^state=running scope=3 received=450 delivered=449 dropped=0 held=1 `)
	received := regexp.MustCompile(`received=(\d+) `)
	for _, f := range faultTable("orders", "payments") {
		remove := f.install(fc)
		if f.fails {
			code, _, stderr := faultRun(t, fc, watch...)
			remove()
			f.checkFailure(t, code, stderr)
			continue
		}
		stdout, stderr, stop := startAsync(t, false, append(watch, "--brokers", fc.brokers, "--request-timeout", "2s", "--dial-timeout", "1s")...)
		awaitOutput(t, stdout, settled, f.name+": the fault-free state")
		remove()
		if code := stop(); code != cmdutil.ExitOK {
			t.Errorf("%s: exit %d (%s), want %d", f.name, code, stderr, cmdutil.ExitOK)
		}
		for _, m := range received.FindAllStringSubmatch(stdout.String(), -1) {
			if n, _ := strconv.Atoi(m[1]); n > 450 {
				t.Errorf("%s: received=%d: a record read twice", f.name, n)
			}
		}
	}
}
