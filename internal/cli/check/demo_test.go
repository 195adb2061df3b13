package check_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
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

// The dangling demo's one forged claim makes a hole of every later
// shipment of its channel: the report leads with that claim, as one root
// line among its first five, says how many findings follow from it, and
// details only the first 20 findings unless --all is given; in JSON every
// finding names it as its root.
func TestCheckLeadsWithTheRoot(t *testing.T) {
	addr := runDemo(t, demo.FaultDangling, 60)
	file := filepath.Join(t.TempDir(), "dangling.ndjson")
	if code, _, errOut := run(t, addr, "capture", "-t", "orders", "-t", "payments", "-t", "shipments", "-f", file); code != 0 {
		t.Fatalf("capture: exit %d: %s", code, errOut)
	}
	code, out, errOut := run(t, "", "check", "-f", file, "--scope", "orders,shipments")
	if code != 4 {
		t.Fatalf("exit %d (stderr %q), want 4:\n%s", code, errOut, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	rootLine := regexp.MustCompile(`^  (shipments/\d+@\d+) \(line \d+\) claims (payments/\d+=\d+) \(beyond-log-end\): (\d+) findings follow from it \(hole (\d+), beyond-log-end 1\)$`)
	var m []string
	for _, l := range lines[:min(5, len(lines))] {
		if m = rootLine.FindStringSubmatch(l); m != nil {
			break
		}
	}
	if m == nil {
		t.Fatalf("no root line among the first five lines:\n%s", strings.Join(lines[:min(12, len(lines))], "\n"))
	}
	holes, _ := strconv.Atoi(m[4])
	if !strings.Contains(lines[1], fmt.Sprintf("%s findings: hole (%d), beyond-log-end (1).", m[3], holes)) || holes <= 20 {
		t.Fatalf("counts %q: want every finding to follow from the root %s claiming %s, and more than 20 holes", lines[1], m[1], m[2])
	}
	if !strings.Contains(out, fmt.Sprintf("… and %d more findings: --limit N shows N, --all every one.", holes+1-20)) {
		t.Errorf("the report does not say how many findings it left out:\n%s", out)
	}
	if got := strings.Count(out, "\n    shipments/"); got != 20 {
		t.Errorf("%d findings detailed, want the default 20", got)
	}
	_, all, _ := run(t, "", "check", "-f", file, "--scope", "orders,shipments", "--all")
	if got := strings.Count(all, "\n    shipments/"); got != holes+1 || strings.Contains(all, "more findings: --limit") {
		t.Errorf("--all details %d findings, want %d", got, holes+1)
	}
	_, three, _ := run(t, "", "check", "-f", file, "--scope", "orders,shipments", "--limit", "3")
	if got := strings.Count(three, "\n    shipments/"); got != 3 {
		t.Errorf("--limit 3 details %d findings", got)
	}

	_, js, _ := run(t, "", "check", "-f", file, "--scope", "orders,shipments", "-o", "json")
	var rep struct {
		Findings []struct {
			Kind string `json:"kind"`
			Root struct {
				Channel string `json:"channel"`
				Offset  int64  `json:"offset"`
				Claim   *struct {
					Channel  string `json:"channel"`
					Position int64  `json:"position"`
				} `json:"claim"`
			} `json:"root"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		r := f.Root
		if r.Claim == nil || fmt.Sprintf("%s@%d", r.Channel, r.Offset) != m[1] || fmt.Sprintf("%s=%d", r.Claim.Channel, r.Claim.Position) != m[2] {
			t.Errorf("%s finding rooted at %+v, want %s claiming %s", f.Kind, r, m[1], m[2])
		}
	}
	if len(rep.Findings) != holes+1 {
		t.Errorf("%d JSON findings, want %d", len(rep.Findings), holes+1)
	}
}
