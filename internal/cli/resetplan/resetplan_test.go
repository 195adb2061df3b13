package resetplan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/testutil"
)

// now is the test's clock: the changelog's records are stamped against
// it, never against the wall clock.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const app = "packer"

// world is a stopped process as it comes about: packer read clicks (20
// records) up to 9, committed 10 and holds clicks/0@9 (written 12m before
// now) on a cause never written; its changelog was last written
// stoppedFor before now; retention then deleted clicks below 15, past the
// committed offset (POSITIONS_DISCARDED_UNREAD). stores are its store
// changelogs; packer-x, another process whose application id begins with
// packer's, has a store changelog of its own.
type world struct {
	c   *kfake.Cluster
	adm *kadm.Client
	// auth is how the test's own clients log in: empty without SASL.
	auth []kgo.Opt
	// env is the command's environment beside the brokers (SASL).
	env map[string]string
}

func newWorld(t *testing.T, stoppedFor time.Duration, discarded bool, stores ...string) *world {
	t.Helper()
	return newWorldOn(t, nil, nil, stoppedFor, discarded, stores...)
}

// newWorldOn is newWorld on a cluster made with cluster's options, the
// test writing it as auth logs in (a super user where ACLs are on).
func newWorldOn(t *testing.T, cluster []kfake.Opt, auth []kgo.Opt, stoppedFor time.Duration, discarded bool, stores ...string) *world {
	t.Helper()
	opts := append([]kfake.Opt{kfake.SeedTopics(1, "clicks", "elsewhere", parsley.ChangelogTopic(app), parsley.ChangelogTopic("packer-x"), "packer-x-stock-changelog")}, cluster...)
	for _, s := range stores {
		opts = append(opts, kfake.SeedTopics(1, app+"-"+s+"-changelog"))
	}
	w := &world{c: kafkatest.Cluster(t, opts...), auth: auth}
	cl := w.client(t)
	w.adm = kadm.NewClient(cl)
	md, err := w.adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	var recs []*kgo.Record
	for range 20 {
		recs = append(recs, &kgo.Record{Topic: "clicks", Value: []byte("c")})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	clicks := clock.Channel{Topic: ids["clicks"]}
	entries := append([]*kgo.Record{parsleytest.StoreEntry(app, 0, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})},
		parsleytest.Bindings(app, 0, map[string]clock.TopicID{"clicks": ids["clicks"]})...)
	entries = append(entries, parsleytest.FedUpTo(app, 0, clicks, 9),
		parsleytest.Held{Channel: clicks, Offset: 9, Timestamp: now.Add(-12 * time.Minute).UnixMilli(),
			Causes: []clock.Entry{{Channel: clock.Channel{Topic: ids["elsewhere"]}, Position: 40}}}.Entry(app, 0))
	for _, e := range entries {
		e.Timestamp = now.Add(-stoppedFor)
	}
	kafkatest.Transact(t, w.client(t, kgo.TransactionalID(app+"-0_0")), entries...)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "clicks", At: 10, LeaderEpoch: -1})
	if resp, err := w.adm.CommitOffsets(context.Background(), app, offs); err != nil || resp.Error() != nil {
		t.Fatalf("committing: %v %v", err, resp.Error())
	}
	if discarded {
		del := kadm.Offsets{}
		del.Add(kadm.Offset{Topic: "clicks", At: 15})
		if _, err := w.adm.DeleteRecords(context.Background(), del); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(w.c.ListenAddrs()...), kgo.DisableClientMetrics()}, w.auth...), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// join keeps a member of packer's group for the test: an instance runs.
func (w *world) join(t *testing.T) {
	t.Helper()
	assigned := make(chan struct{}, 1)
	w.client(t, kgo.ConsumerGroup(app), kgo.ConsumeTopics("clicks"), kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	select {
	case <-assigned:
	case <-time.After(30 * time.Second):
		t.Fatal("no assignment within 30s")
	}
}

func run(t *testing.T, w *world, args ...string) (string, string, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	brokers := strings.Join(w.c.ListenAddrs(), ",")
	f := cmdutil.NewFactory(ios, func(k string) string {
		if k == conn.EnvBrokers {
			return brokers
		}
		return w.env[k]
	})
	f.Now = func() time.Time { return now }
	err := cmdutiltest.Execute(cmdutiltest.AsRoot(NewCmdResetPlan(f, nil)), append([]string{"--app", app}, args...)...)
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), cmdutil.ExitCode(err)
}

// plan runs reset-plan -o json, checked against its schema.
func plan(t *testing.T, w *world, args ...string) (jsonPlan, string, int) {
	t.Helper()
	out, errOut, code := run(t, w, append(args, "-o", "json")...)
	if errs := testutil.LoadSchemas(t, "../../../docs/schemas").Validate("reset-plan.schema.json", out); len(errs) > 0 {
		t.Errorf("the JSON breaks its schema: %v\n%s", errs, out)
	}
	var p jsonPlan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v: %s%s", err, out, errOut)
	}
	return p, errOut, code
}

func status(p jsonPlan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Preconditions {
		out[c.Name] = c.Status
	}
	return out
}

// TestRunningProcessIsRefused: while an instance runs, no-member fails:
// exit 4 naming it.
func TestRunningProcessIsRefused(t *testing.T) {
	w := newWorld(t, 10*time.Minute, true)
	w.join(t)
	p, errOut, code := plan(t, w)
	if code != cmdutil.ExitFound || !strings.Contains(errOut, CheckNoMember) {
		t.Errorf("exit %d, %q: want 4 naming %s", code, errOut, CheckNoMember)
	}
	if st := status(p); st[CheckNoMember] != "fail" || p.Ready {
		t.Errorf("preconditions %v, ready %v", st, p.Ready)
	}
}

// TestJustStoppedIsRefused: stopped 10s ago, within the session timeout:
// the closed instance may still hold its membership.
func TestJustStoppedIsRefused(t *testing.T) {
	w := newWorld(t, 10*time.Second, true)
	p, errOut, code := plan(t, w)
	if code != cmdutil.ExitFound || !strings.Contains(errOut, CheckQuiet) {
		t.Errorf("exit %d, %q: want 4 naming %s", code, errOut, CheckQuiet)
	}
	st := status(p)
	if st[CheckNoMember] != "ok" || st[CheckQuiet] != "fail" {
		t.Errorf("preconditions %v", st)
	}
	// A shorter session timeout is already over.
	if _, _, code := plan(t, w, "--session-timeout", "5s"); code != 0 {
		t.Errorf("--session-timeout 5s: exit %d, want 0", code)
	}
}

// TestLongStoppedPlan: stopped 10 minutes ago with a refusal that asks for
// a reset: every precondition holds (the ACLs cannot be described: not
// checked), and the plan says the boundary, the costs and the commands in
// their order.
func TestLongStoppedPlan(t *testing.T) {
	w := newWorld(t, 10*time.Minute, true)
	p, errOut, code := plan(t, w, "--state-dir", "/var/lib/streams/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st := status(p)
	if st[CheckNoMember] != "ok" || st[CheckQuiet] != "ok" || st[CheckAsked] != "ok" || st[CheckRights] != "unchecked" || !p.Ready {
		t.Errorf("preconditions %v, ready %v", st, p.Ready)
	}
	if len(p.Boundary) != 1 {
		t.Fatalf("boundary %+v, want clicks/0 alone", p.Boundary)
	}
	b := p.Boundary[0]
	if b.Channel != "clicks/0" || b.Committed == nil || *b.Committed != 10 || b.LogStart != 15 || b.End != 20 || b.HeldRecords != 1 ||
		b.OldestWrittenMsAgo == nil || *b.OldestWrittenMsAgo != (12*time.Minute).Milliseconds() || b.EarliestReads != 5 || b.EarliestAgain != 0 || b.LatestSkips != 5 {
		t.Errorf("boundary %+v", b)
	}
	brokers := strings.Join(w.c.ListenAddrs(), ",")
	want := []string{
		"kafka-consumer-groups --bootstrap-server " + brokers + " --delete --group packer",
		"kafka-topics --bootstrap-server " + brokers + " --delete --topic packer-__parsley.ordering-changelog",
		"rm -rf /var/lib/streams/packer   # on every instance",
	}
	if strings.Join(p.Commands, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(p.Commands, "\n"), strings.Join(want, "\n"))
	}
	text, _, code := run(t, w)
	if code != 0 || !strings.Contains(text, "EARLIEST reads 5 records") || !strings.Contains(text, "LATEST skips 5 records from 15") ||
		!strings.Contains(text, "1. kafka-consumer-groups") {
		t.Errorf("text (exit %d):\n%s", code, text)
	}
}

// TestTwoStoreChangelogs: each store changelog of the process is deleted,
// after the ordering changelog and before the local state; another
// process's (packer-x) is not.
func TestTwoStoreChangelogs(t *testing.T) {
	w := newWorld(t, 10*time.Minute, true, "inventory", "prices")
	p, errOut, code := plan(t, w)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Join(p.StoreChangelogs, ",") != "packer-inventory-changelog,packer-prices-changelog" {
		t.Errorf("store changelogs %v", p.StoreChangelogs)
	}
	var topics []string
	for _, c := range p.Commands {
		if _, t, ok := strings.Cut(c, "--delete --topic "); ok {
			topics = append(topics, t)
		}
	}
	if got := strings.Join(topics, ","); got != "packer-__parsley.ordering-changelog,packer-inventory-changelog,packer-prices-changelog" {
		t.Errorf("topics deleted, in order: %s", got)
	}
	if !strings.HasPrefix(p.Commands[0], "kafka-consumer-groups") || !strings.HasPrefix(p.Commands[len(p.Commands)-1], "rm -rf /tmp/kafka-streams/packer") {
		t.Errorf("commands %q", p.Commands)
	}
}

// TestNoRefusalNoReset: a stopped process that would start asks for no
// reset.
func TestNoRefusalNoReset(t *testing.T) {
	w := newWorld(t, 10*time.Minute, false)
	p, errOut, code := plan(t, w)
	if code != cmdutil.ExitFound || !strings.Contains(errOut, CheckAsked) || status(p)[CheckAsked] != "fail" {
		t.Errorf("exit %d, %q, %v: want 4 naming %s", code, errOut, status(p), CheckAsked)
	}
}

// TestRightsMissing: ACLs that do not allow Delete fail the precondition,
// naming the resources; ones that cannot be described leave it unchecked.
func TestRightsMissing(t *testing.T) {
	w := newWorld(t, 10*time.Minute, true)
	in := func(r kafka.Rights) *Plan {
		p, err := readFor(t, w)
		if err != nil {
			t.Fatal(err)
		}
		return Build(Input{Process: p, Now: now, SessionTimeout: time.Second, Rights: r, StateDir: "/s"})
	}
	pl := in(kafka.Rights{Principal: "User:ops", Checked: true, Missing: []string{"group packer"}})
	if f := pl.Failed(); len(f) != 1 || f[0].Name != CheckRights || !strings.Contains(f[0].Detail, "User:ops may not delete group packer") {
		t.Errorf("failed %+v", f)
	}
	pl = in(kafka.Rights{Principal: "User:ops", Checked: true})
	if f := pl.Failed(); len(f) != 0 {
		t.Errorf("failed %+v with every right", f)
	}
}

// readFor reads packer from w as Run does.
func readFor(t *testing.T, w *world) (*inspect.Process, error) {
	t.Helper()
	cl, err := kafka.Dial(context.Background(), kafka.Config{Brokers: w.c.ListenAddrs()})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return process.Read(context.Background(), cl, app, "", time.Second, &clock.Names{})
}

// aclWorld is the long-stopped world on a cluster with SASL and ACLs on:
// admin (a super user) writes it; every other user may read what
// reset-plan reads (topics, groups, transactional ids), describe the
// cluster (and so its ACLs) when describe says so, and has acls besides;
// root is a super user too, with no ACL of its own.
func aclWorld(t *testing.T, users map[string]bool, acls map[string][]kfake.ACL) *world {
	t.Helper()
	reads := func(describeCluster bool) []kfake.ACL {
		all := kmsg.ACLResourcePatternTypeLiteral
		out := []kfake.ACL{
			{Resource: kmsg.ACLResourceTypeTopic, Name: "*", Pattern: all, Operation: kmsg.ACLOperationRead, Allow: true},
			{Resource: kmsg.ACLResourceTypeTopic, Name: "*", Pattern: all, Operation: kmsg.ACLOperationDescribeConfigs, Allow: true},
			{Resource: kmsg.ACLResourceTypeGroup, Name: "*", Pattern: all, Operation: kmsg.ACLOperationRead, Allow: true},
			{Resource: kmsg.ACLResourceTypeTransactionalId, Name: "*", Pattern: all, Operation: kmsg.ACLOperationDescribe, Allow: true},
		}
		if describeCluster {
			out = append(out, kfake.ACL{Resource: kmsg.ACLResourceTypeCluster, Name: "kafka-cluster", Pattern: all, Operation: kmsg.ACLOperationDescribe, Allow: true})
		}
		return out
	}
	opts := []kfake.Opt{kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin-secret"), kfake.Superuser("PLAIN", "root", "root-secret")}
	for user, describeCluster := range users {
		opts = append(opts, kfake.User("PLAIN", user, user+"-secret", append(reads(describeCluster), acls[user]...)...))
	}
	return newWorldOn(t, opts, []kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())}, 10*time.Minute, true)
}

// as sets w's command to log in as user.
func (w *world) as(user string) *world {
	w.env = map[string]string{conn.EnvSASLMechanism: "PLAIN", conn.EnvSASLUser: user, conn.EnvSASLPassword: user + "-secret"}
	return w
}

// TestDeleteRightsOnACLCluster: delete-rights against a cluster with SASL
// and ACLs: a principal the ACLs allow Delete on the group and the
// changelogs meets it; one allowed only to read fails it, naming each
// resource it may not delete (exit 4); a super user, whom no ACL names,
// meets it on the broker's word; one not allowed to describe the
// cluster's ACLs leaves it unchecked, saying so, and the plan is ready on
// the other preconditions. The principal is the SASL user's.
func TestDeleteRightsOnACLCluster(t *testing.T) {
	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	w := aclWorld(t, map[string]bool{"ops": true, "clerk": true, "guest": false}, map[string][]kfake.ACL{
		"ops": {
			{Resource: kmsg.ACLResourceTypeGroup, Name: app, Pattern: lit, Operation: kmsg.ACLOperationDelete, Allow: true},
			{Resource: kmsg.ACLResourceTypeTopic, Name: app + "-", Pattern: pre, Operation: kmsg.ACLOperationDelete, Allow: true},
		},
		// clerk may delete the group (All) but no topic.
		"clerk": {{Resource: kmsg.ACLResourceTypeGroup, Name: app, Pattern: lit, Operation: kmsg.ACLOperationAll, Allow: true}},
	})

	detail := func(p jsonPlan) string {
		for _, c := range p.Preconditions {
			if c.Name == CheckRights {
				return c.Detail
			}
		}
		return ""
	}
	p, errOut, code := plan(t, w.as("ops"))
	if st := status(p); code != 0 || st[CheckRights] != "ok" || !p.Ready || !strings.Contains(detail(p), "User:ops may delete") {
		t.Errorf("ops: exit %d %s, %v: %q", code, errOut, st, detail(p))
	}

	p, errOut, code = plan(t, w.as("clerk"))
	if code != cmdutil.ExitFound || !strings.Contains(errOut, CheckRights) || status(p)[CheckRights] != "fail" || p.Ready {
		t.Errorf("clerk: exit %d %q, %v: want 4 naming %s", code, errOut, status(p), CheckRights)
	}
	if d := detail(p); !strings.Contains(d, "User:clerk may not delete topic packer-__parsley.ordering-changelog") || strings.Contains(d, "group packer") {
		t.Errorf("clerk: %q: want the changelog named, not the group", d)
	}

	// A super user's right is no ACL: the broker's own authorized
	// operations say it.
	p, errOut, code = plan(t, w.as("root"))
	if st := status(p); code != 0 || st[CheckRights] != "ok" || !strings.Contains(detail(p), "User:root may delete") {
		t.Errorf("root: exit %d %s, %v: %q", code, errOut, st, detail(p))
	}

	p, errOut, code = plan(t, w.as("guest"))
	if st := status(p); code != 0 || st[CheckRights] != "unchecked" || !p.Ready || !strings.Contains(detail(p), "not checked: not allowed to describe the cluster's ACLs") {
		t.Errorf("guest: exit %d %s, %v: %q", code, errOut, st, detail(p))
	}
	text, _, _ := run(t, w.as("guest"))
	if !strings.Contains(text, "not allowed to describe the cluster's ACLs") {
		t.Errorf("guest: the text does not say why delete-rights is not checked:\n%s", text)
	}
}

// TestQuietBoundary: quiet-for-session-timeout on both sides of its
// boundary, on the test's clock: the changelog last written exactly the
// session timeout before now passes; a millisecond more of timeout fails,
// saying how long to wait (rounded up, never too short).
func TestQuietBoundary(t *testing.T) {
	w := newWorld(t, 45*time.Second, true)
	p, errOut, code := plan(t, w, "--session-timeout", "45s")
	if st := status(p); code != 0 || st[CheckQuiet] != "ok" {
		t.Errorf("last written 45s ago, timeout 45s: exit %d %s, %v", code, errOut, st)
	}
	p, errOut, code = plan(t, w, "--session-timeout", "45001ms")
	if st := status(p); code != cmdutil.ExitFound || st[CheckQuiet] != "fail" || !strings.Contains(errOut, CheckQuiet) || !strings.Contains(errOut, "wait 1s") {
		t.Errorf("last written 45s ago, timeout 45.001s: exit %d %q, %v", code, errOut, st)
	}
}
