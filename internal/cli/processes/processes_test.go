package processes

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/causalctl/causalctl/internal/view"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// want is what a process's row must say, computed from the fixture's
// records without the gate or the classifier.
type want struct {
	tasks      int32
	group      string
	members    int
	receives   []string
	from       string
	held       int
	heads      int
	oldestMs   *int64
	undated    int
	causes     map[string]int
	catching   int
	maxLag     *int64
	maxLagChan string
}

func (f *fixture) want(p proc) want {
	w := want{tasks: int32(len(p.tasks)), receives: p.topics, from: "state", group: "Dead", causes: map[string]int{}}
	switch {
	case p.running:
		w.group, w.members, w.from = "Stable", 1, "subscription"
	case len(p.committed) > 0:
		w.group = "Empty" // offsets, no member
	}
	for _, tk := range p.tasks {
		heads := map[string]held{}
		for _, h := range tk.held {
			w.held++
			if h.ts < 0 {
				w.undated++
			} else if ms := now.UnixMilli() - h.ts; w.oldestMs == nil || ms > *w.oldestMs {
				w.oldestMs = &ms
			}
			if cur, ok := heads[h.topic]; !ok || h.off < cur.off {
				heads[h.topic] = h
			}
		}
		for _, h := range heads {
			// Each head of the fixture waits for one position: never
			// written is beyond the log end, a held head; written but not
			// fed, it delivers once the process reads on: catching up,
			// no held head.
			for at, pos := range h.causes {
				topic, _, _ := strings.Cut(at, "/")
				switch {
				case pos >= f.written[topic]:
					w.heads++
					w.causes["beyond-log-end"]++
				case pos > tk.fed[topic]:
					w.catching++
				}
			}
		}
	}
	for _, at := range slices.Sorted(maps.Keys(p.committed)) {
		topic, _, _ := strings.Cut(at, "/")
		if lag := f.written[topic] - p.committed[at]; w.maxLag == nil || lag > *w.maxLag {
			w.maxLag, w.maxLagChan = &lag, at
		}
	}
	return w
}

func decode(t *testing.T, out string) jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return rep
}

// TestProcessesListsTheThree: exactly the three Parsley processes (not
// the ordinary group), each with the held counts, causes, group state,
// received topics, ages and lag its records make.
func TestProcessesListsTheThree(t *testing.T) {
	f := threeProcesses(t)
	out, errOut, code := run(t, f.c, false, "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep := decode(t, out)
	var apps []string
	for _, p := range rep.Processes {
		apps = append(apps, p.App)
	}
	if want := []string{"alerts", "billing", "shop-shipper"}; !slices.Equal(apps, want) {
		t.Fatalf("processes %v, want %v", apps, want)
	}
	for i, p := range f.procs {
		got, w := rep.Processes[i], f.want(p)
		if got.Error != nil || got.Group == nil || got.ReceivesFrom == nil || got.NextStart == nil {
			t.Errorf("%s: %+v", p.app, got)
			continue
		}
		if got.Tasks != w.tasks || got.Group.State != w.group || len(got.Group.Members) != w.members {
			t.Errorf("%s: %d tasks, group %s of %d, want %d, %s of %d", p.app, got.Tasks, got.Group.State, len(got.Group.Members), w.tasks, w.group, w.members)
		}
		if !slices.Equal(got.Receives, w.receives) || *got.ReceivesFrom != w.from {
			t.Errorf("%s: receives %v from %s, want %v from %s", p.app, got.Receives, *got.ReceivesFrom, w.receives, w.from)
		}
		if got.HeldRecords != w.held || got.HeldHeads != w.heads || !maps.Equal(got.Causes, w.causes) || got.CatchingUp != w.catching {
			t.Errorf("%s: held %d, heads %d, causes %v, catching up %d; want %d, %d, %v, %d", p.app, got.HeldRecords, got.HeldHeads, got.Causes, got.CatchingUp, w.held, w.heads, w.causes, w.catching)
		}
		if fmt.Sprint(deref(got.OldestWrittenMsAgo)) != fmt.Sprint(deref(w.oldestMs)) || got.UndatedHolds != w.undated {
			t.Errorf("%s: oldest %v ms, %d undated; want %v, %d", p.app, deref(got.OldestWrittenMsAgo), got.UndatedHolds, deref(w.oldestMs), w.undated)
		}
		if fmt.Sprint(deref(got.MaxLag)) != fmt.Sprint(deref(w.maxLag)) || (w.maxLag != nil && deref(got.MaxLagOn) != w.maxLagChan) {
			t.Errorf("%s: max lag %v on %v, want %v on %s", p.app, deref(got.MaxLag), deref(got.MaxLagOn), deref(w.maxLag), w.maxLagChan)
		}
		if got.NextStart.Refused || len(got.NextStart.Refusals) != 0 || got.OlderThan != nil {
			t.Errorf("%s: next start %+v, older than %v", p.app, *got.NextStart, got.OlderThan)
		}
	}
	if rep.Unread != 0 || rep.OlderThanMs != nil {
		t.Errorf("unread %d, older than %v", rep.Unread, rep.OlderThanMs)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

var memberID = regexp.MustCompile(`billing-[0-9a-f-]{16,}`)

// TestProcessesGoldens: the table on a terminal 80 and 200 columns wide
// (render.Table's rule: at 80 columns FROM, MEMBERS and RECEIVES are left
// out and said so), the plain columns in a pipe, and the JSON.
func TestProcessesGoldens(t *testing.T) {
	f := threeProcesses(t)
	for _, tc := range []struct {
		golden string
		width  int
		args   []string
	}{
		{"tty80.golden", 80, nil},
		{"tty200.golden", 200, nil},
		{"plain.golden", 0, nil},
		{"json.golden", 0, []string{"-o", "json"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runWidth(t, strings.Join(f.c.ListenAddrs(), ","), tc.width, tc.args...)
			if code != cmdutil.ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			testutil.Golden(t, *update, tc.golden, memberID.ReplaceAllString(out, "MEMBER"))
			if tc.width > 0 {
				for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					if w := ansi.StringWidth(l); w > tc.width {
						t.Errorf("%d columns wide at %d: %q", w, tc.width, l)
					}
				}
			}
		})
	}
}

// TestPlainColumns: in a pipe every row has as many fields as the header,
// split on spaces.
func TestPlainColumns(t *testing.T) {
	f := threeProcesses(t)
	out, _, _ := run(t, f.c, false)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if n := len(strings.Fields(l)); n != len(view.ProcessColumns) {
			t.Errorf("%d fields: %q", n, l)
		}
	}
}

// TestOlderThan: exit 4 when some hold is at least D old, or of unknown
// time; 0 otherwise; the JSON says which process matched.
func TestOlderThan(t *testing.T) {
	f := threeProcesses(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--app-prefix", "shop", "--older-than", "7m"}, cmdutil.ExitFound}, // at least: 7m matches
		{[]string{"--app-prefix", "shop", "--older-than", "7m1s"}, cmdutil.ExitOK},
		{[]string{"--app-prefix", "shop"}, cmdutil.ExitOK},
		{[]string{"--app-prefix", "alerts", "--older-than", "1000h"}, cmdutil.ExitFound}, // undated
		{[]string{"--app-prefix", "billing", "--older-than", "0s"}, cmdutil.ExitOK},      // nothing held
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if _, errOut, code := run(t, f.c, false, tc.args...); code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errOut)
			}
		})
	}
	out, _, code := run(t, f.c, false, "--older-than", "5m", "-o", "json")
	rep := decode(t, out)
	got := map[string]any{}
	for _, p := range rep.Processes {
		got[p.App] = deref(p.OlderThan)
	}
	if want := map[string]any{"alerts": true, "billing": false, "shop-shipper": true}; code != cmdutil.ExitFound || fmt.Sprint(got) != fmt.Sprint(want) ||
		deref(rep.OlderThanMs) != (5*time.Minute).Milliseconds() {
		t.Errorf("exit %d, older_than %v (of %v), want 4, %v", code, got, deref(rep.OlderThanMs), want)
	}
}

// TestAppPrefix narrows the list; a prefix matching nothing lists nothing
// and exits 0.
func TestAppPrefix(t *testing.T) {
	f := threeProcesses(t)
	rep := decode(t, first(run(t, f.c, false, "--app-prefix", "bi", "-o", "json")))
	if len(rep.Processes) != 1 || rep.Processes[0].App != "billing" {
		t.Errorf("processes %+v", rep.Processes)
	}
	out, _, code := run(t, f.c, false, "--app-prefix", "nothing")
	if code != cmdutil.ExitOK || !strings.HasPrefix(out, "No Parsley processes") {
		t.Errorf("exit %d: %q", code, out)
	}
}

func first(s string, _ string, _ int) string { return s }

// TestFlags: usage errors.
func TestFlags(t *testing.T) {
	c := kafkatest.Cluster(t)
	for _, args := range [][]string{{"--concurrency", "0"}, {"--older-than", "-1s"}, {"--txn-wait", "-1s"}, {"--read-on-max-records", "-1"}} {
		if _, errOut, code := run(t, c, false, args...); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errOut)
		}
	}
}

// TestUnreadProcess: a process whose changelog cannot be read is a row
// saying why; the others are listed; exit 1, naming it.
func TestUnreadProcess(t *testing.T) {
	f := threeProcesses(t)
	broken := parsley.ChangelogTopic("billing")
	f.c.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.c.KeepControl()
		r := req.(*kmsg.ListOffsetsRequest)
		if len(r.Topics) != 1 || r.Topics[0].Topic != broken {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = broken
		for _, p := range r.Topics[0].Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			// Not an authorization refusal: that is the command's error
			// (TestProcessReadDenied in internal/cli), not a row.
			rp.Partition, rp.ErrorCode = p.Partition, kerr.InvalidRequest.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	out, errOut, code := run(t, f.c, false, "-o", "json", "--older-than", "5m")
	if code != cmdutil.ExitFailure || !strings.Contains(errOut, "1 of 3 processes could not be read (billing)") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	testutil.Golden(t, *update, "unread.json.golden", out)
	rep := decode(t, out)
	if len(rep.Processes) != 3 || rep.Unread != 1 {
		t.Fatalf("%+v", rep)
	}
	for _, p := range rep.Processes {
		if unread := p.App == "billing"; unread != (p.Error != nil) || unread != (p.Group == nil) {
			t.Errorf("%s: error %v, group %v", p.App, deref(p.Error), p.Group)
		}
	}
	if p := rep.Processes[2]; p.HeldRecords != 3 {
		t.Errorf("shop-shipper not read whole: %+v", p)
	}
	text, _, _ := run(t, f.c, false)
	if !regexp.MustCompile(`(?m)^billing +2 +(- +){11}unread$`).MatchString(text) {
		t.Errorf("no unread row for billing:\n%s", text)
	}
}

// TestNextStartRefused: a process whose widest topic grew past its
// changelog's partitions says its next start is refused.
func TestNextStartRefused(t *testing.T) {
	w := newWorld(t, map[string]int32{"wide": 4, parsley.ChangelogTopic("grown"): 2})
	w.fill(t, "wide", 4, 1)
	w.store(t, "grown", []string{"wide"}, []task{{fed: map[string]int64{"wide": 0}}, {fed: map[string]int64{"wide": 0}}})
	rep := decode(t, first(run(t, w.c, false, "-o", "json")))
	if len(rep.Processes) != 1 || rep.Processes[0].NextStart == nil {
		t.Fatalf("%+v", rep.Processes)
	}
	ns := rep.Processes[0].NextStart
	if !ns.Refused || len(ns.Refusals) != 1 || ns.Refusals[0].Reason != parsley.ReasonTaskWidthChanged ||
		!strings.Contains(ns.Refusals[0].Detail, "4 partitions") || ns.Refusals[0].NextStep != parsley.ReasonTaskWidthChanged.NextStep() {
		t.Errorf("next start %+v", ns)
	}
}

// TestReadOnMaxRecords: with --read-on-max-records 1 a process more than
// one record behind its log ends is PARTIAL (HELD N+PARTIAL, JSON
// read_on_partial); by default, and with 0 (no bound), none is.
func TestReadOnMaxRecords(t *testing.T) {
	f := threeProcesses(t)
	brokers := strings.Join(f.c.ListenAddrs(), ",")
	partial := func(args ...string) map[string]bool {
		t.Helper()
		out, errOut, code := runAt(t, brokers, false, append([]string{"-o", "json"}, args...)...)
		if code != cmdutil.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		got := map[string]bool{}
		for _, p := range decode(t, out).Processes {
			got[p.App] = p.ReadOnPartial
		}
		return got
	}
	for _, args := range [][]string{nil, {"--read-on-max-records", "0"}} {
		for app, p := range partial(args...) {
			if p {
				t.Errorf("%v: %s is PARTIAL", args, app)
			}
		}
	}
	if got := partial("--read-on-max-records", "1"); !got["shop-shipper"] || got["billing"] {
		t.Errorf("--read-on-max-records 1: partial %v, want shop-shipper (behind) and not billing (at its ends)", got)
	}
	out, errOut, code := runAt(t, brokers, false, "--read-on-max-records", "1")
	if code != cmdutil.ExitOK || !strings.Contains(out, "+PARTIAL") {
		t.Errorf("exit %d, no +PARTIAL in the table:\n%s%s", code, out, errOut)
	}
}
