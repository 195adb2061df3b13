package holds_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/iostreams"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// runDemo runs the demo's pipeline for steps steps, unpaced, and leaves its
// broker up until the test ends.
func runDemo(t *testing.T, cfg demo.Config, steps int) *demo.Demo {
	t.Helper()
	cfg.Steps, cfg.Tick = steps, 0
	return demotest.Pipeline(testCtx(t), t, cfg)
}

// report is the part of the JSON schema these tests read.
type report struct {
	HeldHeads int `json:"held_heads"`
	Roots     []struct {
		Channel, Cause string
		NextStep       string `json:"next_step"`
		Heads          []string
	} `json:"roots"`
	Heads []struct {
		Channel string
		Offset  int64
		Cause   string
		Root    struct {
			Channel string
			Offset  int64
			Cause   string
		}
		Blockers []struct {
			Channel  string
			Required int64
			Cause    string
			Producer *struct {
				ProducerID      int64  `json:"producer_id"`
				TransactionalID string `json:"transactional_id"`
			}
		}
		NextStep string `json:"next_step"`
	} `json:"heads"`
}

// holds runs `causalctl holds` against the demo's broker, as a user would.
func holds(t *testing.T, d *demo.Demo, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	code := cli.Run(testCtx(t), f, append([]string{"holds", "--brokers", d.Addr(), "-t", "orders,payments,shipments"}, args...))
	return code, out.String(), errOut.String()
}

func holdsJSON(t *testing.T, d *demo.Demo, args ...string) (int, report) {
	t.Helper()
	code, out, stderr := holds(t, d, append(args, "-o", "json")...)
	var rep report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, output %q, stderr %s", code, out, stderr)
	}
	return code, rep
}

// TestDemoDangling is the Done-when: `demo --fault dangling`, then
// `holds` against the demo names the dangling claim beyond-log-end, with
// its root.
func TestDemoDangling(t *testing.T) {
	d := runDemo(t, demo.Config{Seed: 4, Fault: demo.FaultDangling, FaultStep: 8}, 25)
	code, rep := holdsJSON(t, d)
	if code != 4 || rep.HeldHeads == 0 {
		t.Fatalf("exit %d, %d heads: want 4 and holds", code, rep.HeldHeads)
	}
	found := false
	for _, h := range rep.Heads {
		for _, b := range h.Blockers {
			if b.Channel == "payments/1" && b.Required > 100000 && b.Cause == "beyond-log-end" {
				found = true
				if h.Root.Channel != h.Channel || h.Root.Cause != "beyond-log-end" || !strings.Contains(h.NextStep, "never written") {
					t.Errorf("dangling head %+v: want it its own root, beyond-log-end, with advice", h)
				}
			}
		}
		if h.Root.Cause != "beyond-log-end" || !strings.HasPrefix(h.Root.Channel, "shipments/") {
			t.Errorf("head %s@%d: root %+v, want the dangling shipment's", h.Channel, h.Offset, h.Root)
		}
	}
	if !found {
		t.Fatalf("no blocker names the dangling payments/1 claim beyond-log-end: %+v", rep)
	}
	if len(rep.Roots) != 1 || rep.Roots[0].Cause != "beyond-log-end" {
		t.Errorf("roots %+v", rep.Roots)
	}
	code, text, _ := holds(t, d)
	if code != 4 || !strings.Contains(text, "beyond-log-end at shipments/") || !strings.Contains(text, "next step: payments/1@") {
		t.Errorf("text: exit %d\n%s", code, text)
	}
}

// TestDemoOpenTxn: `demo --fault open-txn` shows open-transaction, naming
// the producer, while the late transaction is open.
func TestDemoOpenTxn(t *testing.T) {
	d := runDemo(t, demo.Config{Seed: 4, Fault: demo.FaultOpenTxn, FaultStep: 8}, 30)
	code, rep := holdsJSON(t, d)
	if code != 4 {
		t.Fatalf("exit %d: want 4", code)
	}
	found := false
	for _, h := range rep.Heads {
		for _, b := range h.Blockers {
			if b.Cause != "open-transaction" {
				continue
			}
			found = true
			if b.Channel != "payments/1" || b.Producer == nil || b.Producer.TransactionalID != demo.TxnLatePayment {
				t.Errorf("open-transaction blocker %+v: want payments/1 and producer %s", b, demo.TxnLatePayment)
			}
		}
	}
	if !found {
		t.Fatalf("no open-transaction blocker: %+v", rep)
	}
	root := false
	for _, r := range rep.Roots {
		if r.Cause == "open-transaction" && strings.Contains(r.NextStep, demo.TxnLatePayment) {
			root = true
		}
	}
	if !root {
		t.Errorf("no open-transaction root naming the producer: %+v", rep.Roots)
	}
}

// TestDemoMarkerClaim: a claim on a commit marker holds for good only in a
// node that settles on receipt; the seed's gate settles it.
func TestDemoMarkerClaim(t *testing.T) {
	d := runDemo(t, demo.Config{Seed: 4, Fault: demo.FaultMarkerClaim, FaultStep: 8}, 25)
	code, rep := holdsJSON(t, d, "--position-advance=false")
	if code != 4 {
		t.Fatalf("receipt only: exit %d, want 4", code)
	}
	found := false
	for _, h := range rep.Heads {
		if h.Cause == "not-a-record" {
			found = true
			if len(h.Blockers) == 0 || h.Blockers[0].Channel != "payments/1" || h.Root.Cause != "not-a-record" {
				t.Errorf("marker claim %+v", h)
			}
		}
	}
	if !found {
		t.Fatalf("no not-a-record head: %+v", rep)
	}
	_, rep = holdsJSON(t, d)
	for _, h := range rep.Heads {
		if h.Cause == "not-a-record" || h.Root.Cause == "not-a-record" {
			t.Errorf("position advance: %+v still held on the marker", h)
		}
	}
}

// TestDemoNothingHeld: without a fault the node catches up: exit 0.
func TestDemoNothingHeld(t *testing.T) {
	d := runDemo(t, demo.Config{Seed: 4}, 20)
	code, out, stderr := holds(t, d)
	if code != 0 || !strings.Contains(out, "Nothing held.") {
		t.Errorf("exit %d, %q, %s", code, out, stderr)
	}
	code, rep := holdsJSON(t, d)
	if code != 0 || rep.HeldHeads != 0 || len(rep.Heads) != 0 {
		t.Errorf("json: exit %d %+v", code, rep)
	}
	// A bad flag is a usage error, a broker that is not there a failure.
	if code, _, _ := holds(t, d, "--older-than", "-1s"); code != 2 {
		t.Errorf("--older-than -1s: exit %d, want 2", code)
	}
	ios, _, _, errOut := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	if code := cli.Run(testCtx(t), f, []string{"holds", "-f", "/nonexistent/capture.ndjson"}); code != 1 {
		t.Errorf("missing capture: exit %d, want 1 (%s)", code, errOut)
	}
}
