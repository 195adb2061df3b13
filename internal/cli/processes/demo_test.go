package processes

import (
	"context"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// TestDemoNotifier: against the demo, processes lists its notifier — the
// Parsley-format process — with what its gates hold, running and after it
// stopped.
func TestDemoNotifier(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, n := demotest.DanglingJoined(ctx, t)
	held, heads := 0, 0
	for _, ts := range n.State() {
		for _, cs := range ts.Channels {
			held += len(cs.Held)
			if len(cs.Held) > 0 {
				heads++
			}
		}
	}
	if heads == 0 {
		t.Fatal("the dangling fault left the notifier holding nothing")
	}
	check := func(state, from string) {
		t.Helper()
		out, errOut, code := runAt(t, d.Addr(), false, "-o", "json")
		if code != cmdutil.ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		rep := decode(t, out)
		if len(rep.Processes) != 1 {
			t.Fatalf("processes %+v", rep.Processes)
		}
		p := rep.Processes[0]
		if p.App != demo.NotifierApp || p.Changelog != parsley.ChangelogTopic(demo.NotifierApp) || p.Tasks != 3 || p.Group == nil || p.Group.State != state ||
			deref(p.ReceivesFrom) != from || len(p.Receives) != 3 {
			t.Errorf("%s: %+v", state, p)
		}
		if p.HeldRecords != held || p.HeldHeads != heads || p.Causes["beyond-log-end"] == 0 {
			t.Errorf("%s: held %d in %d heads (causes %v), the notifier's gates %d in %d", state, p.HeldRecords, p.HeldHeads, p.Causes, held, heads)
		}
	}
	check("Stable", "subscription")
	n.Stop()
	if err := n.Err(); err != nil {
		t.Fatal(err)
	}
	check("Empty", "state")
}
