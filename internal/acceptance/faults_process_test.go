package acceptance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// This file is the Parsley process of the fault cluster: the process that
// ordered its orders and payments, stopped, its ordering state in its
// changelog, for the table's state, processes and exporter columns.

// faultApp is the fault cluster's Parsley process; faultChangelog its
// ordering changelog (2 partitions: 2 tasks).
const faultApp = "shop"

var faultChangelog = parsley.ChangelogTopic(faultApp)

// faultHistory is how many records each task held and released before it
// stopped: the changelog's history, 3 entries each.
const faultHistory = 150

// faultEntries is how many entries the changelog holds: per task its
// bindings (3) and history, then task 0's last fed-up-to and its held
// record.
const faultEntries = 2*(3+3*faultHistory) + 2

// txnWriter is a transactional producer reaching the brokers past the
// proxies, writing uncompressed so that the changelog's bytes are many.
func (fc *faultCluster) txnWriter(t *testing.T, id string) *kgo.Client {
	t.Helper()
	w, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(fc.Addrs()...), kgo.Dialer(fc.DialDirect),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.TransactionalID(id)}, fc.auth...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// writeProcess writes faultApp's changelog and committed offsets: each
// task held and released faultHistory records of 600 bytes (a history
// of about 200 KB, so that a fetch of it spans many TCP reads), fed up to
// the end of its channels, and task 0 still holds payments/0@149, waiting
// for orders/0@1000000, never written. Its group committed the ends.
func (fc *faultCluster) writeProcess(t *testing.T) {
	t.Helper()
	names := map[string]clock.TopicID{"orders": fc.orders, "payments": fc.payments}
	value := []byte(strings.Repeat("h", 600))
	w := fc.txnWriter(t, faultApp+"-0")
	ch := func(topic clock.TopicID, p int32) clock.Channel { return clock.Channel{Topic: topic, Partition: p} }
	// Task 0 receives payments/0 and orders/0; task 1 orders/1.
	fed := map[int32]clock.Channel{0: ch(fc.payments, 0), 1: ch(fc.orders, 1)}
	for task := range int32(2) {
		recs := parsleytest.Bindings(faultApp, task, names)
		for i := range int64(faultHistory) {
			h := parsleytest.Held{Channel: fed[task], Offset: i, Timestamp: faultNow.Add(-time.Hour).UnixMilli(), Value: value,
				Causes: []clock.Entry{{Channel: ch(fc.orders, 0), Position: i}}}
			recs = append(recs, h.Entry(faultApp, task), parsleytest.FedUpTo(faultApp, task, fed[task], i), h.Release(faultApp, task))
			if len(recs) >= 90 {
				kafkatest.Transact(t, w, recs...)
				recs = nil
			}
		}
		if task == 0 {
			held := parsleytest.Held{Channel: fed[0], Offset: faultHistory - 1, Timestamp: faultNow.Add(-5 * time.Minute).UnixMilli(), Value: value,
				Causes: []clock.Entry{{Channel: ch(fc.orders, 0), Position: 1_000_000}}}
			recs = append(recs, parsleytest.FedUpTo(faultApp, 0, ch(fc.orders, 0), faultHistory-1), held.Entry(faultApp, 0))
		}
		if len(recs) > 0 {
			kafkatest.Transact(t, w, recs...)
		}
	}
	var offs kadm.Offsets
	for _, o := range []struct {
		topic string
		p     int32
	}{{"orders", 0}, {"orders", 1}, {"payments", 0}} {
		offs.Add(kadm.Offset{Topic: o.topic, Partition: o.p, At: faultHistory, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(fc.writer(t)).CommitOffsets(ctx, faultApp, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s's offsets: %v", faultApp, err)
	}
}

// TestProcessReadDenied: credentials that may do everything but one thing
// on the process — describe or read its ordering changelog, describe its
// group — get from state and processes exit 1, nothing on stdout, and one
// line naming the topic or group and the operation refused. A changelog
// the credentials may not describe is not listed to them at all, so
// processes without --app does not find it.
func TestProcessReadDenied(t *testing.T) {
	fc, alice, adm := deniableFaultCluster(t)
	for _, args := range [][]string{{"state", "--app", faultApp, "-o", "json"}, {"processes", "-o", "json"}} {
		if code, _, stderr := faultRun(t, fc, append(args, alice...)...); code > cmdutil.ExitFound {
			t.Fatalf("%v allowed: exit %d %s", args, code, stderr)
		}
	}
	for _, d := range processDenials() {
		t.Run(d.name, func(t *testing.T) {
			remove := deny(t, adm, d.acl)
			defer remove()
			runs := [][]string{{"state", "--app", faultApp}, {"state", "--app", faultApp, "-o", "json"}, {"processes", "--app", faultApp}, {"processes", "--app", faultApp, "-o", "json"}}
			if d.discovered {
				runs = append(runs, []string{"processes"}, []string{"processes", "-o", "json"})
			} else if code, out, stderr := faultRun(t, fc, append([]string{"processes"}, alice...)...); code != 0 || !strings.HasPrefix(out, "No Parsley processes") {
				// A topic the credentials may not describe is not in the
				// listing (Kafka hides it): discovery cannot see it.
				t.Errorf("processes: exit %d, stdout %q, stderr %q: want the changelog unseen", code, out, stderr)
			}
			for _, args := range runs {
				code, out, stderr := faultRun(t, fc, append(args, alice...)...)
				if code != cmdutil.ExitFailure || out != "" || !strings.HasSuffix(stderr, d.want+"\n") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("%v: exit %d, stdout %.200q, stderr %q: want 1, nothing, one line ending %q", args, code, out, stderr, d.want)
				}
			}
		})
	}
}

// processDenial is one refusal of TestProcessReadDenied: the ACL that
// denies it and the end of the line that says it.
type processDenial struct {
	name       string
	discovered bool // processes without --app still finds the process
	acl        func() *kadm.ACLBuilder
	want       string
}

func processDenials() []processDenial {
	topic := func(op kadm.ACLOperation) func() *kadm.ACLBuilder {
		return func() *kadm.ACLBuilder {
			return kadm.NewACLs().Deny("User:alice").DenyHosts("*").Topics(faultChangelog).Operations(op)
		}
	}
	return []processDenial{
		{"describe changelog", false, topic(kadm.OpDescribe), fmt.Sprintf("not authorized to describe topic %q", faultChangelog)},
		{"read changelog", true, topic(kadm.OpRead), fmt.Sprintf("not authorized to read topic %q", faultChangelog)},
		{"describe group", true, func() *kadm.ACLBuilder {
			return kadm.NewACLs().Deny("User:alice").DenyHosts("*").Groups(faultApp).Operations(kadm.OpDescribe)
		}, fmt.Sprintf("not authorized to describe group %q", faultApp)},
	}
}

// deniableFaultCluster is the fault cluster behind SASL and ACLs: its
// writers are the superuser admin, and alice, whose flags it returns with
// an admin client, may do everything until an ACL denies her something.
func deniableFaultCluster(t *testing.T) (fc *faultCluster, alice []string, adm *kadm.Client) {
	t.Helper()
	all := func(r kmsg.ACLResourceType) kfake.ACL {
		return kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll, Allow: true}
	}
	cluster := kfake.ACL{Resource: kmsg.ACLResourceTypeCluster, Name: "kafka-cluster", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll, Allow: true}
	fc = newFaultClusterAuth(t, []kgo.Opt{kgo.SASL(scram.Auth{User: "admin", Pass: "admin-pw"}.AsSha256Mechanism())},
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("SCRAM-SHA-256", "admin", "admin-pw"),
		kfake.User("SCRAM-SHA-256", "alice", "alice-pw", all(kmsg.ACLResourceTypeTopic), all(kmsg.ACLResourceTypeGroup),
			all(kmsg.ACLResourceTypeTransactionalId), cluster))
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("alice-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fc, []string{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "alice", "--sasl-password-file", pw}, kadm.NewClient(fc.writer(t))
}

// deny creates acl and returns its removal.
func deny(t *testing.T, adm *kadm.Client, acl func() *kadm.ACLBuilder) (remove func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := adm.CreateACLs(ctx, acl().ResourcePatternType(kadm.ACLPatternLiteral))
	if err == nil && len(res) > 0 {
		err = res[0].Err
	}
	if err != nil {
		t.Fatalf("creating the ACL: %v", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := adm.DeleteACLs(ctx, acl().ResourcePatternType(kadm.ACLPatternLiteral))
		if err == nil && len(res) > 0 {
			err = res[0].Err
		}
		if err != nil {
			t.Errorf("deleting the ACL: %v", err)
		}
	}
}
