package state

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// runStateAt runs causalctl state with args against the brokers at addr
// and decodes its JSON.
func runStateAt(t *testing.T, addr string, args ...string) (jsonReport, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cmdutiltest.Factory(ios, addr)
	f.Now = func() time.Time { return now }
	err := cmdutiltest.Execute(cmdutiltest.AsRoot(NewCmdState(f, nil)), append(args, "-o", "json")...)
	var rep jsonReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
		t.Fatalf("%v: %s (stderr %s, error %v)", jerr, out, errOut, err)
	}
	return rep, cmdutil.ExitCode(err)
}

// channelOf is the channel of a report line: its topic UUID and the
// partition after the last slash.
func channelOf(t *testing.T, c jsonChannel) clock.Channel {
	t.Helper()
	id, err := clock.ParseTopicID(c.TopicID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(c.Channel[strings.LastIndexByte(c.Channel, '/')+1:])
	if err != nil {
		t.Fatal(err)
	}
	return clock.Channel{Topic: id, Partition: int32(p)}
}

// danglingHead is the held head whose cause is beyond-log-end, and its
// task; it fails the test when there is none.
func danglingHead(t *testing.T, rep jsonReport) (int32, jsonChannel) {
	t.Helper()
	for _, jt := range rep.Tasks {
		for _, jc := range jt.Channels {
			if jc.Head != nil && jc.Head.Cause == inspect.CauseBeyondLogEnd {
				return jt.Task, jc
			}
		}
	}
	t.Fatalf("no head beyond the log end: %+v", rep.Tasks)
	return 0, jsonChannel{}
}

// sameAsGates compares every channel of the demo's gates with the report,
// field by field: fed-up-to, settled, held count, head offset, committed.
func sameAsGates(t *testing.T, what string, rep jsonReport, gates []demo.TaskState) {
	t.Helper()
	if len(rep.Tasks) != len(gates) {
		t.Fatalf("%s: %d tasks, the demo has %d", what, len(rep.Tasks), len(gates))
	}
	for i, ts := range gates {
		jt := rep.Tasks[i]
		if jt.Task != ts.Task {
			t.Fatalf("%s: task %d at %d, want %d", what, jt.Task, i, ts.Task)
		}
		byCh := map[clock.Channel]jsonChannel{}
		for _, jc := range jt.Channels {
			byCh[channelOf(t, jc)] = jc
		}
		for _, cs := range ts.Channels {
			jc, ok := byCh[cs.Channel]
			if !ok {
				t.Errorf("%s: task %d lacks %s", what, ts.Task, cs.Channel)
				continue
			}
			if val(jc.FedUpTo) != cs.FedUpTo || val(jc.Settled) != cs.Settled || jc.Held != len(cs.Held) || val(jc.Committed) != cs.Committed {
				t.Errorf("%s: task %d %s: fed %d settled %d held %d committed %d; the gate's %d %d %d %d", what, ts.Task, jc.Channel,
					val(jc.FedUpTo), val(jc.Settled), jc.Held, val(jc.Committed), cs.FedUpTo, cs.Settled, len(cs.Held), cs.Committed)
			}
			if (jc.Head != nil) != (len(cs.Held) > 0) || (jc.Head != nil && jc.Head.Offset != cs.Held[0]) {
				t.Errorf("%s: task %d %s: head %+v, the gate holds %v", what, ts.Task, jc.Channel, jc.Head, cs.Held)
			}
			if jc.Committed != nil && (jc.Lag == nil || *jc.Lag < 0) {
				t.Errorf("%s: %s committed %d, lag %v", what, jc.Channel, *jc.Committed, jc.Lag)
			}
		}
	}
}

// TestStateOfTheDemoNotifier: `demo --fault dangling`, then state --app
// notifier names the held head, its beyond-log-end cause and its task —
// while the notifier runs (a member: subscription scope, the task
// assigned, committed offsets and their lag), and after it is stopped,
// when the report equals the demo's own gates at the moment it stopped.
func TestStateOfTheDemoNotifier(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, n := demotest.DanglingJoined(ctx, t)

	// The read is compared with the gates as they were before and after
	// it; a transaction in between (the position moving past trailing
	// markers) makes it read again.
	var running jsonReport
	var code int
	var gatesRunning []demo.TaskState
	for {
		before := n.State()
		running, code = runStateAt(t, d.Addr(), "--app", "notifier")
		if gatesRunning = n.State(); reflect.DeepEqual(before, gatesRunning) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the notifier never stood still")
		}
	}
	if code != cmdutil.ExitFound {
		t.Fatalf("running: exit %d, want 4 (held)", code)
	}
	if g := running.Group; g == nil || g.Group != "notifier" || len(g.Members) != 1 || len(g.Members[0].Subscription) == 0 || len(g.Members[0].Assignment) == 0 {
		t.Fatalf("running: group %+v, want notifier with one subscribed, assigned member", running.Group)
	}
	member := running.Group.Members[0].MemberID
	committed := 0
	for _, jt := range running.Tasks {
		if jt.ScopeSource != inspect.ScopeSubscription || jt.AssignedTo == nil || *jt.AssignedTo != member {
			t.Errorf("running: task %d scope from %s, assigned to %v; want subscription, %s", jt.Task, jt.ScopeSource, jt.AssignedTo, member)
		}
		for _, jc := range jt.Channels {
			if jc.Committed != nil {
				committed++
			}
		}
	}
	if committed == 0 {
		t.Error("running: no committed offsets")
	}
	task, head := danglingHead(t, running)
	t.Logf("running: task %d holds %s@%d: %s", task, head.Channel, head.Head.Offset, head.Head.Cause)
	// Idle with everything received, the running notifier's gates are
	// what its changelog says.
	sameAsGates(t, "running", running, gatesRunning)

	n.Stop()
	if err := n.Err(); err != nil {
		t.Fatal(err)
	}
	gates := n.State()
	stopped, code := runStateAt(t, d.Addr(), "--app", "notifier")
	if code != cmdutil.ExitFound {
		t.Fatalf("stopped: exit %d, want 4", code)
	}
	if stopped.Group == nil || len(stopped.Group.Members) != 0 {
		t.Errorf("stopped: group %+v, want no members", stopped.Group)
	}
	for _, jt := range stopped.Tasks {
		if jt.ScopeSource != inspect.ScopeState || jt.AssignedTo != nil {
			t.Errorf("stopped: task %d scope from %s, assigned to %v", jt.Task, jt.ScopeSource, jt.AssignedTo)
		}
	}
	sameAsGates(t, "stopped", stopped, gates)
	stask, shead := danglingHead(t, stopped)
	if stask != task || shead.Channel != head.Channel || shead.Head.Offset != head.Head.Offset {
		t.Errorf("stopped: the dangling head is task %d %s@%d, running it was task %d %s@%d",
			stask, shead.Channel, shead.Head.Offset, task, head.Channel, head.Head.Offset)
	}
	if len(shead.Head.Blockers) == 0 || shead.Head.Blockers[0].Cause != inspect.CauseBeyondLogEnd || shead.Head.Root == nil {
		t.Errorf("stopped: the dangling head's blockers %+v root %v", shead.Head.Blockers, shead.Head.Root)
	}
}

// TestHealthyDemoSuggestionExitsZero: `state --app notifier`, as the
// healthy demo suggests it, exits 0 while the pipeline runs: the records
// the notifier holds for a second while orders arrive late are catching
// up (read on from the committed offsets), not held heads — only those
// exit 4. Several reads while the notifier works, at least one of them
// with records held.
func TestHealthyDemoSuggestionExitsZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	d, err := demo.New(ctx, demo.Config{Seed: 7, Steps: 80, Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	n, err := d.StartNotifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-n.Joined():
	case <-ctx.Done():
		t.Fatal("the notifier's member never joined its group")
	}
	reads, sawHeld := 0, false
	for running := true; running; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		rep, code := runStateAt(t, d.Addr(), "--app", "notifier")
		if code != cmdutil.ExitOK {
			t.Fatalf("read %d: exit %d, want 0 on the healthy demo: %d held heads, %d records held", reads, code, rep.HeldHeads, rep.HeldRecords)
		}
		sawHeld = sawHeld || rep.HeldRecords > 0
	}
	if reads < 3 || !sawHeld {
		t.Errorf("%d reads, records held in any: %v; want a few, some holding records", reads, sawHeld)
	}
}
