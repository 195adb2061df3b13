package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

func judgeFile(t *testing.T, path string, opts Options) (*Export, []Verdict) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ParseExport(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	vs, err := Judge(ex, opts)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ex, vs
}

// Each directed scenario of testdata/histories replays exactly with every
// rule, and diverges without the one it is named after.
func TestDirectedScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "histories", "*.edn"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	rules := map[Rule]bool{}
	for _, f := range files {
		rule := Rule(strings.TrimSuffix(filepath.Base(f), ".edn"))
		rules[rule] = true
		t.Run(string(rule), func(t *testing.T) {
			_, vs := judgeFile(t, f, Options{})
			for _, v := range vs {
				if v.Divergence != nil {
					t.Fatalf("with every rule, %s diverges: %+v", v.Unit, *v.Divergence)
				}
			}
			_, vs = judgeFile(t, f, Options{without: map[Rule]bool{rule: true}})
			diverged := false
			for _, v := range vs {
				diverged = diverged || v.Divergence != nil
			}
			if !diverged {
				t.Fatalf("without rule %s the scenario still replays exactly: it does not test the rule", rule)
			}
		})
	}
	for _, r := range []Rule{RuleScope, RuleResume, RuleRemovedHeld, RuleDeleted, RuleIdentity, RuleTruncated, RuleRefusalResume,
		RuleJoinClamp, RuleStepPaced} {
		if !rules[r] {
			t.Errorf("rule %s has no directed scenario in testdata/histories", r)
		}
	}
}

// The public Parsley exports: the honest one replays exactly unit by unit,
// the sabotaged one diverges at the unit and record the sabotage acted on.
func TestPublicExports(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "parsley-exports")
	ex, vs := judgeFile(t, filepath.Join(dir, "honest-dead-holds-scenario.edn"), Options{})
	if ex.Sabotage != "NONE" || len(vs) != 2 {
		t.Fatalf("sabotage %q, %d units", ex.Sabotage, len(vs))
	}
	for _, v := range vs {
		if v.Divergence != nil {
			t.Errorf("honest unit %s diverges: %+v", v.Unit, *v.Divergence)
		}
	}
	ex, vs = judgeFile(t, filepath.Join(dir, "DELIVER_PAST_DEAD_HOLDS-scenario.edn"), Options{})
	if ex.Sabotage != "DELIVER_PAST_DEAD_HOLDS" {
		t.Fatalf("sabotage %q", ex.Sabotage)
	}
	for _, v := range vs {
		switch v.Unit.Process {
		case "q":
			if v.Divergence != nil {
				t.Errorf("q, which the sabotage does not touch, diverges: %+v", *v.Divergence)
			}
		case "p":
			d := v.Divergence
			if d == nil || d.Position != 0 || d.Rule != RuleDeleted || v.Parsley != 4 || v.Shadow != 0 {
				t.Errorf("p: want a divergence at its first delivery decided by %s, got %+v (%+v)", RuleDeleted, d, v)
			}
		}
	}
	// Without the dead-channel rule the shadow delivers past the dead
	// holds exactly as the sabotaged Parsley does: the rule is what
	// catches it.
	_, vs = judgeFile(t, filepath.Join(dir, "DELIVER_PAST_DEAD_HOLDS-scenario.edn"), Options{without: map[Rule]bool{RuleDeleted: true}})
	for _, v := range vs {
		if v.Unit.Process == "p" && (v.Shadow != 4 || v.Refusal != nil || v.Divergence != nil) {
			t.Errorf("without the rule, p: %+v %+v", v, v.Divergence)
		}
	}
}

// honest-seed-1 is a simulator run of four processes over 420 events:
// declarations that add and drop channels, rewinds, truncations, two
// recreations of a topic, a deletion and corrupt headers. Every unit
// replays exactly as Parsley delivered it, and each rule its deliveries
// depend on is needed: without it some unit diverges.
func TestPublicExportSeed1(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "parsley-exports", "honest-seed-1.edn")
	ex, vs := judgeFile(t, path, Options{})
	if ex.Sabotage != "NONE" || ex.Seed != 1 {
		t.Fatalf("sabotage %q, seed %d", ex.Sabotage, ex.Seed)
	}
	want := map[string]int{"p0": 2, "p1": 10, "p2": 4, "p3": 13} // the trace's deliveries per unit
	if len(vs) != len(want) {
		t.Fatalf("%d units, want %d", len(vs), len(want))
	}
	for _, v := range vs {
		if v.Divergence != nil {
			t.Errorf("%s diverges: %+v", v.Unit, *v.Divergence)
		}
		if n, ok := want[v.Unit.Process]; !ok || v.Parsley != n || v.Shadow != n {
			t.Errorf("%s: parsley %d, shadow %d deliveries, want %d", v.Unit, v.Parsley, v.Shadow, n)
		}
	}
	// No refusal the export's statuses do not show for that process.
	shown := map[string]bool{}
	for _, st := range ex.History.Steps {
		if st.Kind == StepStatus && st.Reason != "" {
			shown[st.Unit.Process+" "+st.Reason] = true
		}
	}
	if len(shown) == 0 {
		t.Fatal("no refusal in the statuses: they were not read")
	}
	outs, err := Replay(&ex.History, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		for _, r := range o.Refusals {
			if !shown[o.Unit.Process+" "+string(r.Reason)] {
				t.Errorf("%s refuses %s (%s), which Parsley's statuses never show", o.Unit, r.Reason, r.Detail)
			}
		}
	}
	for _, rule := range []Rule{RuleResume, RuleScope, RuleStepPaced} {
		t.Run("without "+string(rule), func(t *testing.T) {
			_, vs := judgeFile(t, path, Options{without: map[Rule]bool{rule: true}})
			for _, v := range vs {
				if v.Divergence != nil {
					return
				}
			}
			t.Errorf("without rule %s every unit still replays exactly", rule)
		})
	}
}

// The public export IGNORE_CAUSES-seed-3.edn: its Parsley delivered
// p1's x10e50 (c1/1@0) while x10e50's cause x0 (c2/0@0), on a channel p1
// then received, was neither delivered nor settled (parsley-jepsen's
// index.edn names that record). p0, which the sabotage did not touch,
// replays exactly; p1 diverges at its first delivery, that record, where
// the replay delivers the cause first.
func TestIgnoreCausesExport(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "parsley-exports", "IGNORE_CAUSES-seed-3.edn")
	ex, vs := judgeFile(t, path, Options{})
	if ex.Sabotage != "IGNORE_CAUSES" || len(vs) != 2 {
		t.Fatalf("sabotage %q, %d units", ex.Sabotage, len(vs))
	}
	c1, err := clock.ParseTopicID("ee6ff052-8a5e-c5a4-4fe8-c97b2d2aff60")
	if err != nil {
		t.Fatal(err)
	}
	x10e50 := clock.Channel{Topic: c1, Partition: 1}
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v.Unit.Process] = true
		switch v.Unit {
		case Unit{"p0", 0}:
			if v.Divergence != nil || v.Parsley != 3 || v.Shadow != 3 {
				t.Errorf("p0, which the sabotage did not touch, does not replay exactly: %+v %+v", v, v.Divergence)
			}
		case Unit{"p1", 0}:
			d := v.Divergence
			if d == nil || d.Position != 0 || d.Channel != x10e50 || d.Offset != 0 || d.Rule != RuleCausal {
				t.Fatalf("p1: want the first divergence at delivery 0, %s@0, decided by %s; got %+v", x10e50, RuleCausal, d)
			}
			if !strings.Contains(d.Parsley, "delivered c1/1@0") || !strings.Contains(d.Shadow, "delivered c2/0@0") {
				t.Errorf("p1: Parsley %q, shadow %q", d.Parsley, d.Shadow)
			}
		default:
			t.Errorf("unexpected unit %s", v.Unit)
		}
	}
	if !seen["p0"] || !seen["p1"] {
		t.Fatalf("units %v", seen)
	}
	// Without the host's steps the replay delivers what p0 read and never
	// delivered (c4/0@2, held when c4 was deleted): p0 is exact only by
	// step-paced.
	_, vs = judgeFile(t, path, Options{without: map[Rule]bool{RuleStepPaced: true}})
	for _, v := range vs {
		if v.Unit.Process == "p0" && (v.Divergence == nil || v.Divergence.Position != 3) {
			t.Errorf("without %s, p0: %+v %+v", RuleStepPaced, v, v.Divergence)
		}
	}
}

func TestParseExportErrors(t *testing.T) {
	for name, in := range map[string]string{
		"not edn":      "{:format",
		"format":       "{:format 2}",
		"bad causes":   `{:format 1 :records [{:topic "00000000-0000-4000-8000-00000000000a" :partition 0 :offset 0 :causes "zz"}]}`,
		"bad channel":  `{:format 1 :reads [{:index 0 :process "p" :task 0 :exec-start {["x" 0] 0}}]}`,
		"duplicate":    `{:format 1 :records [{:topic "00000000-0000-4000-8000-00000000000a" :partition 0 :offset 0} {:topic "00000000-0000-4000-8000-00000000000a" :partition 0 :offset 0}]}`,
		"kill channel": `{:format 1 :faults [{:index 0 :kind :kill :details {:topic "a"}}]}`,
		"status":       `{:format 1 :statuses [{:index 3 :lifecycle :RUNNING :trace-ends {}}]}`,
		"read end":     `{:format 1 :reads [{:index 3 :process "p" :task 0 :ends-lo {"p" -1}}]}`,
		"status end":   `{:format 1 :statuses [{:index 3 :process "p" :lifecycle :RUNNING :trace-ends {"p" -2}}]}`,
	} {
		if _, err := ParseExport([]byte(in)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line error, got %v", name, err)
		}
	}
}
