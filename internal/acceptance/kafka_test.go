package acceptance

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// runEnv runs causalctl in-process with an environment.
func runEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	f.Getenv = func(k string) string { return env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code = cli.Run(ctx, f, args)
	return code, out.String(), errOut.String()
}

// pipeline is a small causal pipeline in a kfake cluster: orders (2
// partitions) and payments (1), with committed, aborted and open
// transactions, and payments claiming orders by the broker's topic UUIDs.
type pipeline struct {
	c        *kfake.Cluster
	addr     string
	orders   clock.TopicID
	payments clock.TopicID
	keys     map[int16]int // requests seen once seeding is over
	mu       sync.Mutex
	watching bool
}

// Request keys that write or join: none may reach the cluster from a command.
var writeKeys = map[int16]string{0: "Produce", 8: "OffsetCommit", 11: "JoinGroup", 12: "Heartbeat", 14: "SyncGroup",
	22: "InitProducerID", 24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit", 19: "CreateTopics", 20: "DeleteTopics"}

func newPipeline(t *testing.T) *pipeline {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"), kfake.SeedTopics(1, "payments"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p := &pipeline{c: c, addr: c.ListenAddrs()[0], keys: map[int16]int{}}
	c.ControlKey(-1, func(req kmsg.Request) (kmsg.Response, error, bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.watching {
			p.keys[req.Key()]++
		}
		return nil, nil, false
	})
	ctx := context.Background()
	w, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.TransactionalID("seed"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	adm := kadm.NewClient(w)
	md, err := adm.Metadata(ctx, "orders", "payments")
	if err != nil {
		t.Fatal(err)
	}
	p.orders, p.payments = clock.TopicID(md.Topics["orders"].ID), clock.TopicID(md.Topics["payments"].ID)
	causes := func(es ...clock.Entry) []kgo.RecordHeader {
		return []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(es...))}}
	}
	o := func(part int32, pos int64) clock.Entry {
		return clock.Entry{Channel: clock.Channel{Topic: p.orders, Partition: part}, Position: pos}
	}
	rec := func(topic string, part int32, ts int64, hs []kgo.RecordHeader) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: part, Headers: hs, Value: []byte("v"), Timestamp: time.UnixMilli(ts)}
	}
	txn := func(commit bool, rs ...*kgo.Record) {
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
	txn(true, rec("orders", 0, 100, causes()), rec("orders", 1, 101, nil))               // orders/0@0 orders/1@0, markers at 1
	txn(false, rec("orders", 0, 102, causes()))                                          // aborted orders/0@2, marker 3
	txn(true, rec("orders", 0, 103, causes()), rec("payments", 0, 104, causes(o(0, 0)))) // orders/0@4, payments/0@0
	txn(true, rec("payments", 0, 105, causes(o(0, 4), o(1, 0))))                         // payments/0@2: both causes present
	txn(true, rec("payments", 0, 106, causes(o(1, 9))))                                  // payments/0@4 claims orders/1@9: never written
	// An open transaction on orders/1: the range must end below it.
	if err := w.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := w.ProduceSync(ctx, rec("orders", 1, 107, causes())).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.watching = true
	p.mu.Unlock()
	return p
}

// checkReadOnly fails the test if any command wrote, joined or committed.
func (p *pipeline) checkReadOnly(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, n := range p.keys {
		if name, ok := writeKeys[k]; ok {
			t.Errorf("the cluster received %d %s requests from causalctl", n, name)
		}
	}
	if p.keys[3] == 0 {
		t.Errorf("no Metadata request seen: the observer is not working")
	}
}

func TestBrokerCommands(t *testing.T) {
	p := newPipeline(t)
	b := []string{"--brokers", p.addr}

	// topics: names, UUIDs, and the open transaction below the high watermark.
	code, out, stderr := runEnv(t, nil, append([]string{"topics", "-o", "json"}, b...)...)
	if code != 0 {
		t.Fatalf("topics: %d %s", code, stderr)
	}
	var topics []struct {
		Name       string
		TopicID    string `json:"topic_id"`
		Partitions []struct {
			Partition                 int32
			HighWatermark, LastStable int64
			LogStart                  int64 `json:"log_start"`
		}
	}
	if err := json.Unmarshal([]byte(out), &topics); err != nil || len(topics) != 2 {
		t.Fatalf("topics json %q: %v", out, err)
	}
	if topics[0].Name != "orders" || topics[0].TopicID != p.orders.String() || len(topics[0].Partitions) != 2 {
		t.Errorf("topics: %+v", topics[0])
	}
	code, out, _ = runEnv(t, nil, append([]string{"topics", "payments"}, b...)...)
	if code != 0 || !strings.Contains(out, p.payments.String()) || strings.Contains(out, p.orders.String()) {
		t.Errorf("topics payments: %d\n%s", code, out)
	}

	// capture: the log facts first, then committed records only, positions
	// at starts, gaps and ends.
	file := filepath.Join(t.TempDir(), "capture.ndjson")
	code, _, stderr = runEnv(t, nil, append([]string{"capture", "-t", "orders", "-t", "payments", "-f", file}, b...)...)
	if code != 0 {
		t.Fatalf("capture: %d %s", code, stderr)
	}
	perChannel := captureTrace(t, file, p)
	want := map[string]string{
		"orders/0":   "f0-6-6 p0 r0 p4 r4 p6",
		"orders/1":   "f0-2-3 p0 r0 p2", // the open transaction's record at 2 is above the last stable offset
		"payments/0": "f0-6-6 p0 r0 p2 r2 p4 r4 p6",
	}
	for ch, w := range want {
		if got := perChannel[ch]; got != w {
			t.Errorf("capture of %s: %s, want %s", ch, got, w)
		}
	}

	// replay from the capture and from the cluster agree.
	_, fromFile, _ := runEnv(t, nil, "replay", "-f", file, "-o", "json", "--interleave", "timestamp")
	code, fromBroker, stderr := runEnv(t, nil, append([]string{"replay", "-t", "orders,payments", "-o", "json"}, b...)...)
	if code != 0 {
		t.Fatalf("replay from the cluster: %d %s", code, stderr)
	}
	if fromFile != fromBroker {
		t.Errorf("replay of the capture and of the cluster differ:\n%s\n%s", fromFile, fromBroker)
	}
	var sum struct {
		Received, Delivered, Held int64
		Channels                  []struct {
			Channel string
			Head    *struct {
				Offset   int64
				Blockers []struct {
					Channel, Kind string
					Required      int64
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(fromBroker), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Received != 6 || sum.Delivered != 5 || sum.Held != 1 {
		t.Errorf("summary %+v", sum)
	}
	head := sum.Channels[2].Head
	if head == nil || head.Offset != 4 || len(head.Blockers) != 1 || head.Blockers[0].Channel != "orders/1" || head.Blockers[0].Kind != "beyond-log-end" {
		t.Errorf("payments head %+v", head)
	}
	_, fromBrokerND, _ := runEnv(t, nil, append([]string{"replay", "-t", "orders", "-t", "payments", "--interleave", "file"}, b...)...)
	_, fromFileND, _ := runEnv(t, nil, "replay", "-f", file)
	if d1, d2 := deliveries(fromFileND), deliveries(fromBrokerND); !slices.Equal(d1, d2) || len(d1) != 5 {
		t.Errorf("deliveries differ: %v vs %v", d1, d2)
	}
	code, _, stderr = runEnv(t, nil, append([]string{"replay", "-t", "payments", "--fail-on-held", "-o", "json", "--scope", "payments,orders/1"}, b...)...)
	if code != cmdutil.ExitHeld {
		t.Errorf("--fail-on-held from the cluster: %d %s", code, stderr)
	}

	// decode reads the range and names the topics.
	code, out, stderr = runEnv(t, nil, append([]string{"decode", "-t", "payments", "--offsets", "2:3"}, b...)...)
	if code != 0 || !strings.HasPrefix(out, "payments/0@2\t1970-01-01T00:00:00.105Z\torders/0=4,orders/1=0\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("decode of a range: %d %q %s", code, out, stderr)
	}

	// Errors: one line each, exit 1.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"replay", "-t", "refunds"}, "refunds"},
		{[]string{"capture", "-t", "orders/7", "-f", filepath.Join(t.TempDir(), "x")}, "orders"},
		{[]string{"replay", "-t", "orders", "--from-group", "nobody"}, "nobody"},
	} {
		code, _, stderr := runEnv(t, nil, append(tc.args, b...)...)
		if code != 1 || !strings.Contains(stderr, tc.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr)
		}
	}
	code, _, stderr = runEnv(t, nil, "replay", "-t", "orders", "--offsets", "sideways", "--brokers", p.addr)
	if code != 2 || !strings.Contains(stderr, "--offsets") {
		t.Errorf("bad offsets: %d %s", code, stderr)
	}
	code, _, stderr = runEnv(t, map[string]string{"CAUSALCTL_BROKERS": p.addr}, "topics")
	if code != 0 {
		t.Errorf("brokers from the environment: %d %s", code, stderr)
	}

	p.checkReadOnly(t)
	groups, err := kadm.NewClient(mustClient(t, p.addr)).ListGroups(context.Background())
	if err != nil || len(groups.Groups()) != 0 {
		t.Errorf("groups after the commands: %v %v", groups.Groups(), err)
	}
}

func mustClient(t *testing.T, addr string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// captureTrace reads a capture into per-channel traces like "p0 r0 p4".
func captureTrace(t *testing.T, path string, p *pipeline) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Topic     string
			TopicID   string `json:"topic_id"`
			Partition int32
			Offset    *int64
			Position  *int64
			LogFacts  *struct {
				LogStart      int64 `json:"log_start"`
				LastStable    int64 `json:"last_stable"`
				HighWatermark int64 `json:"high_watermark"`
			} `json:"log_facts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.TopicID != p.orders.String() && l.TopicID != p.payments.String() {
			t.Errorf("line without the topic's UUID: %s", sc.Text())
		}
		ch := fmt.Sprintf("%s/%d", l.Topic, l.Partition)
		if out[ch] != "" {
			out[ch] += " "
		}
		switch {
		case l.LogFacts != nil:
			out[ch] += fmt.Sprintf("f%d-%d-%d", l.LogFacts.LogStart, l.LogFacts.LastStable, l.LogFacts.HighWatermark)
		case l.Offset != nil:
			out[ch] += fmt.Sprintf("r%d", *l.Offset)
		default:
			out[ch] += fmt.Sprintf("p%d", *l.Position)
		}
	}
	return out
}

// deliveries returns the sorted deliver events of NDJSON output.
func deliveries(ndjson string) []string {
	var out []string
	for _, line := range strings.Split(ndjson, "\n") {
		var ev struct {
			Type, Channel string
			Offset        int64
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "deliver" {
			out = append(out, fmt.Sprintf("%s@%d", ev.Channel, ev.Offset))
		}
	}
	slices.Sort(out)
	return out
}

// TestProfileTLSAndSASL connects the way the README documents: a profile
// with TLS and SCRAM, the password in an environment variable.
func TestProfileTLSAndSASL(t *testing.T) {
	srvTLS, caFile := kafkatest.PKI(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(srvTLS), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "causalctl", "s3cret"), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	pool := x509.NewCertPool()
	pemData, _ := os.ReadFile(caFile)
	pool.AppendCertsFromPEM(pemData)
	w, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: "causalctl", Pass: "s3cret"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`current_profile: prod
profiles:
  prod:
    brokers: [%s]
    tls:
      ca: %s
    sasl:
      mechanism: SCRAM-SHA-512
      user: causalctl
      password_env: PROD_KAFKA_PASSWORD
`, c.ListenAddrs()[0], caFile)), 0o600)
	env := map[string]string{"XDG_CONFIG_HOME": dir, "PROD_KAFKA_PASSWORD": "s3cret"}
	// The file is found at $XDG_CONFIG_HOME/causalctl/config.yaml too.
	os.MkdirAll(filepath.Join(dir, "causalctl"), 0o700)
	os.Rename(cfg, filepath.Join(dir, "causalctl", "config.yaml"))
	code, out, stderr := runEnv(t, env, "topics")
	if code != 0 || !strings.Contains(out, "orders") {
		t.Fatalf("topics with the profile: %d %s %s", code, out, stderr)
	}
	code, out, stderr = runEnv(t, env, "decode", "-t", "orders")
	if code != 0 || !strings.HasPrefix(out, "orders/0@0\t") {
		t.Errorf("decode with the profile: %d %q %s", code, out, stderr)
	}
	env["PROD_KAFKA_PASSWORD"] = "wrong"
	code, _, stderr = runEnv(t, env, "topics")
	if code != 1 || !strings.Contains(strings.ToLower(stderr), "auth") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("wrong password: %d %q", code, stderr)
	}
}
