package check_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// run runs causalctl in-process against the brokers at addr (when given).
func run(t *testing.T, addr string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	env := map[string]string{"CAUSALCTL_BROKERS": addr}
	f := cmdutiltest.Factory(ios, "")
	f.Getenv = func(k string) string { return env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code = cli.Run(ctx, f, args)
	return code, out.String(), errOut.String()
}

// runDemo runs the demo's pipeline with fault for steps steps, unpaced,
// and returns its broker's address.
func runDemo(t *testing.T, fault demo.Fault, steps int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return demotest.Pipeline(ctx, t, demo.Config{Seed: 3, Fault: fault, FaultStep: 10, Steps: steps}).Addr()
}

type report struct {
	Records  int64          `json:"records"`
	Counts   map[string]int `json:"counts"`
	Findings []struct {
		Kind     string `json:"kind"`
		Channel  string `json:"channel"`
		Offset   int64  `json:"offset"`
		Producer string `json:"producer"`
		Hole     *struct {
			Ancestor struct {
				Channel string `json:"channel"`
				Offset  int64  `json:"offset"`
			} `json:"ancestor"`
			Path []struct {
				Channel string `json:"channel"`
				Via     string `json:"via"`
			} `json:"path"`
		} `json:"hole"`
	} `json:"findings"`
}

func checkDemo(t *testing.T, addr string, args ...string) (int, report, string) {
	t.Helper()
	args = append([]string{"check", "-t", "orders", "-t", "payments", "-t", "shipments", "-o", "json"}, args...)
	code, out, errOut := run(t, addr, args...)
	var rep report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, stderr %q: output is not the JSON report: %v\n%s", code, errOut, err, out)
	}
	return code, rep, errOut
}

// The done-when of `check`: it finds the hole `demo --fault unfolded`
// injects, naming the shipping service's channel, and nothing on an
// honest demo.
func TestCheckFindsTheUnfoldedDemoHole(t *testing.T) {
	honest := runDemo(t, demo.NoFault, 60)
	code, rep, errOut := checkDemo(t, honest, "--scope", "orders,shipments")
	if code != 0 || len(rep.Findings) != 0 || rep.Records == 0 {
		t.Errorf("honest demo: exit %d (stderr %q), %d findings of %d records: want exit 0 and none", code, errOut, len(rep.Findings), rep.Records)
		for _, f := range rep.Findings {
			t.Logf("  %+v", f)
		}
	}

	faulty := runDemo(t, demo.FaultUnfolded, 60)
	code, rep, errOut = checkDemo(t, faulty, "--scope", "orders,shipments")
	if code != 4 || rep.Counts["hole"] == 0 {
		t.Fatalf("unfolded demo: exit %d (stderr %q), counts %v: want exit 4 and holes", code, errOut, rep.Counts)
	}
	for _, f := range rep.Findings {
		if f.Kind != "hole" || !strings.HasPrefix(f.Producer, "shipments/") || !strings.HasPrefix(f.Channel, "shipments/") ||
			f.Hole == nil || !strings.HasPrefix(f.Hole.Ancestor.Channel, "orders/") {
			t.Errorf("finding %+v: want a hole of a shipment missing an order, produced on shipments", f)
			continue
		}
		through := false
		for _, h := range f.Hole.Path {
			through = through || strings.HasPrefix(h.Channel, "payments/")
		}
		if p := f.Hole.Path; !through || p[len(p)-1].Channel != f.Hole.Ancestor.Channel {
			t.Errorf("finding %+v: want a path through payments ending at the ancestor", f)
		}
	}
	// The range was spooled to a temporary file the user never sees: no
	// output names its lines, only channels and offsets.
	lineRE := regexp.MustCompile(`\bline\b`)
	for _, format := range []string{"text", "json", "ndjson"} {
		code, out, errOut := run(t, faulty, "check", "-t", "orders", "-t", "payments", "-t", "shipments", "--scope", "orders,shipments", "-o", format)
		if code != 4 || !strings.Contains(out, "shipments/") {
			t.Fatalf("-o %s: exit %d (stderr %q):\n%s", format, code, errOut, out)
		}
		if m := lineRE.FindStringIndex(out); m != nil {
			t.Errorf("-o %s names a line of the spool: …%s…", format, out[max(0, m[0]-80):min(len(out), m[1]+20)])
		}
	}
	// A node consuming everything waits for every cause: nothing hides.
	if code, rep, _ := checkDemo(t, faulty); code != 0 || len(rep.Findings) != 0 {
		t.Errorf("unfolded demo, every channel in scope: exit %d, counts %v: want 0 and none", code, rep.Counts)
	}
}
