package acceptance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/testutil"
)

// This file is the changing cluster: each way a cluster changes under a
// read, with its defined answer (docs/troubleshooting.md).

// duringFirstFetch runs change while the cluster holds the first fetch it
// receives — the read is open, its range resolved, nothing read yet — and
// answers the fetch once change returns. change runs on its own goroutine
// and reaches the cluster through its own client.
func duringFirstFetch(c *kfake.Cluster, change func()) {
	var first atomic.Bool
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		if first.CompareAndSwap(false, true) {
			c.SleepControl(change)
		}
		return nil, nil, false
	})
}

// deleteBelow deletes the records of topic/p below offset at, as
// retention or DeleteRecords does.
func deleteBelow(t *testing.T, adm *kadm.Client, topic string, p int32, at int64) {
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: topic, Partition: p, At: at})
	if _, err := adm.DeleteRecords(context.Background(), del); err != nil {
		t.Error(err)
	}
}

// awaitOutput waits until buf matches re, failing the test at the deadline.
func awaitOutput(t *testing.T, buf *testutil.SyncBuffer, re *regexp.Regexp, what string) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(15 * time.Second)
	for !re.MatchString(buf.String()) {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("never saw %s:\n%s", what, buf.String())
		}
	}
}

// TestWatchRidesThroughOutage: watch follows through its brokers going
// away (every connection reset, new ones refused) and coming back: the
// status lines say disconnected meanwhile, and afterwards every record
// written during the outage is received exactly once.
func TestWatchRidesThroughOutage(t *testing.T) {
	fc := newFaultCluster(t)
	stdout, _, stop := startAsync(t, false, "watch", "--brokers", fc.brokers, "-t", "orders,payments", "--offsets", "start",
		"--interval", "100ms", "--request-timeout", "10s", "--dial-timeout", "1s")
	awaitOutput(t, stdout, regexp.MustCompile(`state=running .*received=450 `), "the first 450 records")
	fc.SetAll(kafkatest.Faults{Refuse: true})
	for _, p := range fc.Proxies() {
		p.ResetAll()
	}
	awaitOutput(t, stdout, regexp.MustCompile(`state="disconnected \(retrying, `), "a disconnected status line")
	fc.produce(t, fc.writer(t), 150, 10) // 30 more records while disconnected
	fc.SetAll(kafkatest.Faults{})
	awaitOutput(t, stdout, regexp.MustCompile(`(?m)^state=running .*received=480 .*\n(.*\n)*state=running .*received=480 `), "all 480 records, twice")
	if code := stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
	}
	received := regexp.MustCompile(`received=(\d+) `)
	last, disconnected := 0, false
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		m := received.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("status line without received=: %q", l)
		}
		n, _ := strconv.Atoi(m[1])
		if n < last || n > 480 {
			t.Errorf("received went from %d to %d (%q): a record read twice or the count going back", last, n, l)
		}
		last = n
		disconnected = disconnected || strings.HasPrefix(l, `state="disconnected`)
	}
	if !disconnected || last != 480 {
		t.Errorf("disconnected shown %v, last received %d: want true, 480", disconnected, last)
	}
}

// TestRangeGapCommands: retention deleting the start of orders/0 after
// the range was resolved fails capture naming the channel and the deleted
// offsets; with --allow-gaps the capture goes on, warns once, and records
// the gap as a gap line.
func TestRangeGapCommands(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-gaps=%v", allow), func(t *testing.T) {
			fc := newFaultCluster(t)
			adm := kadm.NewClient(fc.writer(t))
			duringFirstFetch(fc.Cluster, func() { deleteBelow(t, adm, "orders", 0, 100) })
			file := filepath.Join(t.TempDir(), "c.ndjson")
			args := []string{"capture", "-t", "orders", "-t", "payments", "-f", file}
			if allow {
				args = append(args, "--allow-gaps")
			}
			code, _, stderr := faultRun(t, fc, args...)
			if !allow {
				if code != cmdutil.ExitFailure || strings.Count(stderr, "\n") != 1 ||
					!strings.Contains(stderr, "reading orders/0 failed at position 0 (no record read yet): offsets 0 to 99 of orders/0 were deleted before they were read") {
					t.Errorf("exit %d, stderr %q: want 1 and one line naming orders/0 and offsets 0 to 99", code, stderr)
				}
				return
			}
			const warning = "warning: orders/0: offsets 0 to 99 were deleted before they were read (retention or DeleteRecords); read on at 100 (--allow-gaps)\n"
			if code != 0 || stderr != warning+"captured 350 records from 3 partitions to "+file+"\n" {
				t.Errorf("exit %d, stderr %q: want 0, the warning %q and the summary line", code, stderr, warning)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			gap := regexp.MustCompile(`(?m)^\{"topic":"orders",[^\n]*"partition":0,"position":100,"gap":\{"from":0,"to":100\}\}$`)
			if len(gap.FindAll(b, -1)) != 1 {
				t.Errorf("want one gap line for orders/0 from 0 to 100 in:\n%.2000s", b)
			}
			if n := strings.Count(string(b), `"topic":"orders","topic_id":"`+fc.orders.String()+`","partition":0,"offset":`); n != 50 {
				t.Errorf("%d records of orders/0 captured, want the 50 from 100 on", n)
			}
			code, out, stderr := faultRunEnv(t, "", nil, "replay", "-f", file, "-o", "json")
			if code != 0 || !strings.Contains(out, `"received":350`) {
				t.Errorf("replay of the gapped capture: exit %d %s\n%.500s", code, stderr, out)
			}
		})
	}
}

// TestTopicRecreatedMidRead: orders deleted and recreated under its name
// (a new topic ID) after the range was resolved is an identity change,
// reported as such, never merged with the old topic's records.
func TestTopicRecreatedMidRead(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "-t", "orders,payments", "-o", "json"},
		{"capture", "-t", "orders,payments", "-f", "FILE"},
	} {
		t.Run(args[0], func(t *testing.T) {
			fc := newFaultCluster(t)
			adm := kadm.NewClient(fc.writer(t))
			duringFirstFetch(fc.Cluster, func() {
				ctx := context.Background()
				if _, err := adm.DeleteTopics(ctx, "orders"); err != nil {
					t.Error(err)
				}
				if _, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
					t.Error(err)
				}
			})
			for i, a := range args {
				if a == "FILE" {
					args[i] = filepath.Join(t.TempDir(), "c.ndjson")
				}
			}
			code, out, stderr := faultRun(t, fc, args...)
			if code != cmdutil.ExitFailure || strings.Count(stderr, "\n") != 1 ||
				!strings.Contains(stderr, `channel-identity-changed: topic "orders" was `+fc.orders.String()+` and is now `) {
				t.Errorf("exit %d, stderr %q: want 1 and one line saying orders changed identity", code, stderr)
			}
			if strings.Contains(out, `"failed":null`) {
				t.Errorf("a summary that says nothing failed:\n%s", out)
			}
		})
	}
}

// TestLeaderMovesMidRead: the leaders of the partitions a command fetches
// moving to other brokers of a three-broker cluster after the read was
// resolved change nothing in the answer: the business topics' for replay,
// the ordering changelog's for state and processes (which fetch only it).
func TestLeaderMovesMidRead(t *testing.T) {
	for _, tc := range []struct {
		topic string
		args  []string
	}{
		{"orders", []string{"replay", "-t", "orders,payments", "-o", "json"}},
		{faultChangelog, []string{"state", "--app", faultApp, "-o", "json"}},
		{faultChangelog, []string{"processes", "-o", "json"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			fc := newFaultCluster(t, kfake.NumBrokers(3))
			code, want, stderr := faultRun(t, fc, tc.args...)
			if code != 0 && code != cmdutil.ExitFound {
				t.Fatalf("without a move: exit %d %s", code, stderr)
			}
			moved := moveLeadersDuringFirstFetch(t, fc, tc.topic)
			code2, got, stderr := faultRun(t, fc, tc.args...)
			if len(moved) != 2 {
				t.Fatalf("the leaders did not move")
			}
			if code2 != code || got != want {
				t.Errorf("exit %d (%s), want %d; a different answer after the leaders moved:\n%s", code2, stderr, code, firstDiff(got, want))
			}
		})
	}
}

// moveLeadersDuringFirstFetch moves the leaders of topic's two partitions
// each to the next of fc's three brokers while the cluster holds the first
// fetch it receives; the returned channel has one value per move made.
func moveLeadersDuringFirstFetch(t *testing.T, fc *faultCluster, topic string) chan int32 {
	moved := make(chan int32, 2)
	duringFirstFetch(fc.Cluster, func() { moveLeaders(t, fc, topic, moved) })
	return moved
}

// moveLeaders moves the leaders of topic's partitions 0 and 1 each to the
// next of fc's three brokers, saying each move on moved.
func moveLeaders(t *testing.T, fc *faultCluster, topic string, moved chan<- int32) {
	for _, p := range []int32{0, 1} {
		to := (fc.LeaderFor(topic, p) + 1) % 3
		if err := fc.MoveTopicPartition(topic, p, to); err != nil {
			t.Error(err)
		}
		moved <- to
	}
}

// TestReadDeniedBeforeOutput: credentials that may read orders but only
// describe payments get, for every command that needs both, one line
// naming payments and the read refused — and no output before it.
func TestReadDeniedBeforeOutput(t *testing.T) {
	topicACL := func(name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	c := kafkatest.Cluster(t, kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("SCRAM-SHA-256", "admin", "admin-pw"),
		kfake.User("SCRAM-SHA-256", "alice", "alice-pw", topicACL("orders", kmsg.ACLOperationRead), topicACL("payments", kmsg.ACLOperationDescribe)),
		kfake.SeedTopics(1, "orders", "payments"))
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.SASL(scram.Auth{User: "admin", Pass: "admin-pw"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 20 {
		if err := w.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}}, &kgo.Record{Topic: "payments", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{conn.EnvSASLMechanism: "SCRAM-SHA-256", conn.EnvSASLUser: "alice", conn.EnvSASLPassword: "alice-pw"}
	file := filepath.Join(t.TempDir(), "c.ndjson")
	for _, args := range [][]string{
		{"replay", "-t", "orders,payments"},
		{"replay", "-t", "orders,payments", "-o", "json"},
		{"holds", "-t", "orders,payments"},
		{"check", "-t", "orders,payments"},
		{"decode", "-t", "orders,payments"},
		{"capture", "-t", "orders,payments", "-f", file},
	} {
		code, out, stderr := faultRunEnv(t, strings.Join(c.ListenAddrs(), ","), env, args...)
		if code != cmdutil.ExitFailure || out != "" || stderr != "causalctl: not authorized to read topic \"payments\"\n" && !strings.HasSuffix(stderr, "not authorized to read topic \"payments\"\n") ||
			strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want 1, nothing, one line naming payments and read", args, code, out, stderr)
		}
	}
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		t.Errorf("capture wrote %d bytes before the refusal", len(b))
	}
}

// TestWatchPicksUpNewPartitions: a partition added to a watched topic is
// followed from its first offset and said on stderr; the scope grows by
// it and its records are received.
func TestWatchPicksUpNewPartitions(t *testing.T) {
	fc := newFaultCluster(t)
	stdout, stderr, stop := startAsync(t, false, "watch", "--brokers", fc.brokers, "-t", "orders,payments", "--offsets", "start",
		"--interval", "100ms", "--request-timeout", "5s", "--dial-timeout", "1s")
	awaitOutput(t, stdout, regexp.MustCompile(`state=running scope=3 .*received=450 `), "the first 450 records")
	w := fc.writer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(w).CreatePartitions(ctx, 1, "orders"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := w.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 2, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	awaitOutput(t, stdout, regexp.MustCompile(`state=running scope=4 .*received=455 `), "the new partition's 5 records in a scope of 4")
	if code := stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
	}
	if got := stderr.String(); !strings.Contains(got, "watch: new partition orders/2: following it from offset 0\n") || strings.Count(got, "new partition") != 1 {
		t.Errorf("stderr %q: want the new partition said once", got)
	}
}

// TestWatchGapWarns: watch --allow-gaps reads past offsets deleted before
// it read them as the range commands do — and, in a pipe, says so once per
// gap on stderr with the range commands' warning.
func TestWatchGapWarns(t *testing.T) {
	fc := newFaultCluster(t)
	adm := kadm.NewClient(fc.writer(t))
	duringFirstFetch(fc.Cluster, func() { deleteBelow(t, adm, "orders", 0, 100) })
	stdout, stderr, stop := startAsync(t, false, "watch", "--brokers", fc.brokers, "-t", "orders,payments", "--offsets", "start", "--allow-gaps",
		"--interval", "50ms", "--request-timeout", "5s", "--dial-timeout", "1s")
	// 450 records less the 100 deleted, each once.
	awaitOutput(t, stdout, regexp.MustCompile(`(?m)^state=running .*received=350 `), "the 350 records left")
	if code := stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
	}
	const warning = "warning: orders/0: offsets 0 to 99 were deleted before they were read (retention or DeleteRecords); read on at 100 (--allow-gaps)\n"
	if got := stderr.String(); got != warning {
		t.Errorf("stderr %q, want the warning once: %q", got, warning)
	}
}
