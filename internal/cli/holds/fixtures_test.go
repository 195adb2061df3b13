package holds_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is a kfake cluster the cases write to, with the time now that
// holds measures ages and headroom to.
type fixture struct {
	t     *testing.T
	c     *kfake.Cluster
	adm   *kadm.Client
	w     *kgo.Client
	ids   map[string]clock.TopicID
	now   time.Time
	addrs string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	w := client(t, c)
	// Now is real time, to the second: kfake applies retention on the
	// wall clock, so record timestamps must be near it.
	return &fixture{t: t, c: c, adm: kadm.NewClient(w), w: w, ids: map[string]clock.TopicID{},
		now: time.Now().Truncate(time.Second), addrs: strings.Join(c.ListenAddrs(), ",")}
}

func client(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// topic creates a topic of one partition, with retention.ms when given.
func (f *fixture) topic(name string, retention time.Duration) {
	f.t.Helper()
	var cfg map[string]*string
	if retention > 0 {
		ms := strconv.FormatInt(retention.Milliseconds(), 10)
		cfg = map[string]*string{"retention.ms": &ms}
	}
	resp, err := f.adm.CreateTopic(testCtx(f.t), 1, 1, cfg, name)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ids[name] = clock.TopicID(resp.ID)
}

// rec is a record on topic/0 written ago before now, claiming causes
// ("a=3", …; "" claims nothing).
func (f *fixture) rec(topic string, ago time.Duration, causes ...string) *kgo.Record {
	var es []clock.Entry
	for _, c := range causes {
		name, pos, _ := strings.Cut(c, "=")
		var p int64
		for _, d := range pos {
			p = p*10 + int64(d-'0')
		}
		es = append(es, clock.Entry{Channel: clock.Channel{Topic: f.ids[name]}, Position: p})
	}
	return &kgo.Record{Topic: topic, Timestamp: f.now.Add(-ago), Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(es...))}}}
}

func (f *fixture) produce(rs ...*kgo.Record) {
	f.t.Helper()
	if err := f.w.ProduceSync(testCtx(f.t), rs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
}

// txn writes rs in a transaction of producer txid, committed or left open.
func (f *fixture) txn(txid string, commit bool, rs ...*kgo.Record) {
	f.t.Helper()
	cl := client(f.t, f.c, kgo.TransactionalID(txid))
	if err := cl.BeginTransaction(); err != nil {
		f.t.Fatal(err)
	}
	if err := cl.ProduceSync(testCtx(f.t), rs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
	if commit {
		if err := cl.EndTransaction(testCtx(f.t), kgo.TryCommit); err != nil {
			f.t.Fatal(err)
		}
	}
}

// run runs causalctl with the fixture's brokers and time.
func (f *fixture) run(args ...string) (int, string, string) {
	f.t.Helper()
	ios, _, out, errOut := iostreams.Test()
	fac := cmdutiltest.Factory(ios, "")
	fac.Now = func() time.Time { return f.now }
	code := cli.Run(testCtx(f.t), fac, append(args, "--brokers", f.addrs))
	return code, out.String(), errOut.String()
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	pidRE  = regexp.MustCompile(`("producer_id":|producer )\d+`)
	msRE   = regexp.MustCompile(`"started_at":\d+`)
)

// stable replaces what differs from run to run: topic UUIDs, wall times
// and producer ids.
func stable(s string) string {
	s = uuidRE.ReplaceAllString(s, "UUID")
	s = timeRE.ReplaceAllString(s, "TIME")
	s = pidRE.ReplaceAllString(s, "${1}PID")
	return msRE.ReplaceAllString(s, `"started_at":MS`)
}

// headOf returns the reported head on channel.
func headOf(t *testing.T, out string, channel string) (h struct {
	Channel   string
	Offset    int64
	Cause     string
	HoldAgeMs *int64 `json:"written_ms_ago"`
	Root      struct {
		Channel, Cause string
		Offset         int64
	}
	Chain     []string
	Retention *struct {
		HeadroomMs int64 `json:"headroom_ms"`
		Warn       bool
	}
}) {
	t.Helper()
	b := []byte(out)
	var all struct {
		Heads []json.RawMessage `json:"heads"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	for _, raw := range all.Heads {
		if err := json.Unmarshal(raw, &h); err == nil && h.Channel == channel {
			return h
		}
	}
	t.Fatalf("no head on %s in %s", channel, b)
	return h
}

// fixtureCase is a cluster state that holds one head for one cause.
type fixtureCase struct {
	name  string
	setup func(f *fixture)
	args  []string
	head  string // the head to look at
	cause string // its own cause
	root  string // its root's channel
	rootC string // the root cause
	ageMs int64
	room  int64 // retention headroom in ms; 0: none reported
	warn  bool
}

// fixtureCases are the fixtures, one per cause.
var fixtureCases = []fixtureCase{
	{name: "lagging", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		for range 10 {
			f.produce(f.rec("a", time.Minute))
		}
		f.produce(f.rec("b", 30*time.Second, "a=5"))
	}, args: []string{"--offsets", "0:3"}, head: "b/0", cause: "lagging", root: "b/0", rootC: "lagging", ageMs: 30000},
	{name: "open-transaction", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		f.produce(f.rec("a", time.Minute), f.rec("a", time.Minute))
		f.txn("fixture-tx", false, f.rec("a", 50*time.Second))
		f.produce(f.rec("b", 40*time.Second, "a=2"))
	}, head: "b/0", cause: "open-transaction", root: "b/0", rootC: "open-transaction", ageMs: 40000},
	// Two transactions open on a: the earlier, from a@2, pins the last
	// stable offset; b claims a@3, inside the later one. The one named is
	// the earlier: the later committing would not deliver b.
	{name: "open-transactions", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		f.produce(f.rec("a", time.Minute), f.rec("a", time.Minute))
		f.txn("early-tx", false, f.rec("a", 50*time.Second))
		f.txn("late-tx", false, f.rec("a", 45*time.Second))
		f.produce(f.rec("b", 40*time.Second, "a=3"))
	}, head: "b/0", cause: "open-transaction", root: "b/0", rootC: "open-transaction", ageMs: 40000},
	{name: "beyond-log-end", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		f.produce(f.rec("a", time.Minute), f.rec("b", 2*time.Second, "a=100"))
	}, head: "b/0", cause: "beyond-log-end", root: "b/0", rootC: "beyond-log-end", ageMs: 2000},
	{name: "marker-claim", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		f.txn("fixture-tx", true, f.rec("a", time.Minute)) // a@0, its commit marker at a@1
		f.produce(f.rec("b", 3*time.Second, "a=1"))
	}, args: []string{"--position-advance=false"}, head: "b/0", cause: "not-a-record", root: "b/0", rootC: "not-a-record", ageMs: 3000},
	{name: "truncated", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		for range 5 {
			f.produce(f.rec("a", time.Minute))
		}
		var del kadm.Offsets
		del.Add(kadm.Offset{Topic: "a", Partition: 0, At: 5})
		if _, err := f.adm.DeleteRecords(testCtx(f.t), del); err != nil {
			f.t.Fatal(err)
		}
		f.produce(f.rec("b", 4*time.Second, "a=3"))
	}, args: []string{"--start", "a/0=0", "--position-advance=false"}, head: "b/0", cause: "truncated", root: "b/0", rootC: "truncated", ageMs: 4000},
	{name: "chain", setup: func(f *fixture) {
		for _, n := range []string{"a", "b", "c", "d"} {
			f.topic(n, 0)
		}
		f.produce(f.rec("d", time.Hour), f.rec("a", 3*time.Minute, "d=50"), f.rec("b", 2*time.Minute, "a=0"), f.rec("c", time.Minute, "b=0"))
	}, head: "c/0", cause: "held", root: "a/0", rootC: "beyond-log-end", ageMs: 60000},
	{name: "out-of-scope", setup: func(f *fixture) {
		for _, n := range []string{"b", "c", "x"} {
			f.topic(n, 0)
		}
		f.produce(f.rec("b", 2*time.Minute, "x=0"), f.rec("c", time.Minute, "b=0"))
	}, args: []string{"--scope", "b,c,x/0"}, head: "c/0", cause: "held", root: "b/0", rootC: "out-of-scope", ageMs: 60000},
	{name: "cycle", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 0)
		f.produce(f.rec("a", 2*time.Second, "b=0"), f.rec("b", time.Second, "a=0"))
	}, head: "a/0", cause: "cycle", root: "b/0", rootC: "cycle", ageMs: 2000}, // a chain on a cycle stops before repeating itself
	{name: "retention", setup: func(f *fixture) {
		f.topic("a", 0)
		f.topic("b", 2*time.Hour)
		f.produce(f.rec("a", 2*time.Hour), f.rec("b", 90*time.Minute, "a=9"))
	}, head: "b/0", cause: "beyond-log-end", root: "b/0", rootC: "beyond-log-end", ageMs: 90 * 60000, room: 30 * 60000, warn: true},
}

// TestFixtures: one kfake fixture per cause. Each asserts the head's cause,
// its root and root cause, its age and headroom, and the JSON and text
// against goldens; then captures the cluster and checks that holds --input
// reports exactly what holds against the cluster did, and that the replay
// summary gives the head the same cause.
func TestFixtures(t *testing.T) {
	for _, c := range fixtureCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			c.setup(f)
			var topics []string
			for n := range f.ids {
				if n != "x" {
					topics = append(topics, "-t", n)
				}
			}
			args := append([]string{"holds"}, append(topics, c.args...)...)
			code, out, stderr := f.run(append(args, "-o", "json")...)
			if code != 4 {
				t.Fatalf("exit %d, want 4: %s %s", code, out, stderr)
			}
			h := headOf(t, out, c.head)
			if h.Cause != c.cause || h.Root.Channel != c.root || h.Root.Cause != c.rootC {
				t.Errorf("%s: cause %s, root %s (%s); want %s, root %s (%s)", c.head, h.Cause, h.Root.Channel, h.Root.Cause, c.cause, c.root, c.rootC)
			}
			if h.HoldAgeMs == nil || *h.HoldAgeMs != c.ageMs {
				t.Errorf("%s: hold age %v ms, want %d", c.head, h.HoldAgeMs, c.ageMs)
			}
			switch {
			case c.room == 0 && h.Retention != nil && h.Retention.Warn:
				t.Errorf("%s: retention flagged: %+v", c.head, h.Retention)
			case c.room != 0 && (h.Retention == nil || h.Retention.HeadroomMs != c.room || h.Retention.Warn != c.warn):
				t.Errorf("%s: retention %+v, want %d ms, warn %v", c.head, h.Retention, c.room, c.warn)
			}
			testutil.Golden(t, *update, c.name+".json.golden", stable(out))
			if c.warn {
				// --retention-warn 0 is off: the headroom is told, never flagged.
				_, off, _ := f.run(append(args, "-o", "json", "--retention-warn", "0")...)
				if r := headOf(t, off, c.head).Retention; r == nil || r.Warn || r.HeadroomMs != c.room {
					t.Errorf("%s with --retention-warn 0: retention %+v, want %d ms, no warning", c.head, r, c.room)
				}
			}
			code, text, _ := f.run(args...)
			if code != 4 {
				t.Errorf("text: exit %d", code)
			}
			testutil.Golden(t, *update, c.name+".text.golden", stable(text))

			// capture, then holds --input: the same report.
			file := filepath.Join(t.TempDir(), "capture.ndjson")
			capArgs := append([]string{"capture", "-f", file}, topics...)
			if c.name == "lagging" {
				capArgs = append(capArgs, "--offsets", "0:3")
			}
			if code, _, stderr := f.run(capArgs...); code != 0 {
				t.Fatalf("capture: exit %d %s", code, stderr)
			}
			offline := append([]string{"holds", "-f", file, "-o", "json"}, withoutRange(c.args)...)
			if id, ok := f.ids["x"]; ok { // named in the scope, not in the capture
				offline = append(offline, "--topic-id", "x="+id.String())
			}
			code, fromFile, stderr := f.run(offline...)
			if code != 4 || fromFile != out {
				t.Errorf("holds --input: exit %d (%s)\n%s\nwant what holds against the cluster said:\n%s", code, stderr, fromFile, out)
			}

			if c.name == "lagging" {
				// Read to the end, the node has caught up: nothing held.
				if code, out, _ := f.run(append([]string{"holds"}, topics...)...); code != 0 || !strings.Contains(out, "Nothing held.") {
					t.Errorf("caught up: exit %d %q", code, out)
				}
			}

			// The replay summary gives the head the same cause.
			rargs := append(append([]string{"replay", "-o", "json"}, topics...), c.args...)
			_, sumOut, _ := f.run(rargs...)
			var sum struct {
				Channels []struct {
					Channel string
					Head    *struct {
						Cause     string `json:"cause"`
						RootCause string `json:"root_cause"`
					}
				}
			}
			if err := json.Unmarshal([]byte(sumOut), &sum); err != nil {
				t.Fatalf("replay summary %q: %v", sumOut, err)
			}
			for _, ch := range sum.Channels {
				if ch.Channel == c.head && (ch.Head == nil || ch.Head.Cause != c.cause || ch.Head.RootCause != c.rootC) {
					t.Errorf("replay summary of %s: %+v, want %s / %s", c.head, ch.Head, c.cause, c.rootC)
				}
			}
		})
	}
}

// withoutRange drops the flags that only a broker read takes.
func withoutRange(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--offsets" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
