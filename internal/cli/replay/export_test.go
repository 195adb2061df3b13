package replay

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/testutil"
)

func TestParsleyExport(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "parsley-exports")
	schemas := testutil.LoadSchemas(t, filepath.Join("..", "..", "..", "docs", "schemas"))

	err, out, errOut := exec(t, context.Background(), false, "", "--parsley-export", filepath.Join(dir, "honest-dead-holds-scenario.edn"), "-o", "json")
	if err != nil || errOut != "" {
		t.Fatalf("honest export: %v, stderr %q", err, errOut)
	}
	if errs := schemas.Validate("replay-export.schema.json", out); len(errs) > 0 {
		t.Fatalf("schema: %v\n%s", errs, out)
	}
	var rep exportReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Diverged != 0 || len(rep.Units) != 2 || rep.Sabotage != "NONE" {
		t.Fatalf("honest export: %+v", rep)
	}

	err, out, _ = exec(t, context.Background(), false, "", "--parsley-export", filepath.Join(dir, "DELIVER_PAST_DEAD_HOLDS-scenario.edn"), "-o", "json")
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitFound {
		t.Fatalf("sabotaged export: want exit %d, got %v", cmdutil.ExitFound, err)
	}
	if errs := schemas.Validate("replay-export.schema.json", out); len(errs) > 0 {
		t.Fatalf("schema: %v\n%s", errs, out)
	}
	rep = exportReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Diverged != 1 {
		t.Fatalf("sabotaged export: %d units diverge, want 1", rep.Diverged)
	}
	for _, u := range rep.Units {
		if u.Process == "p" {
			d := u.Divergence
			if d == nil || d.Channel != "c9/0" || d.Offset != 0 || d.Rule != "dead-channel" || u.RefusalChannel != "chanA/0" {
				t.Errorf("p: %+v %+v", u, d)
			}
		}
	}

	// Text names the divergence; the same verdicts as json.
	_, text, _ := exec(t, context.Background(), false, "", "--parsley-export", filepath.Join(dir, "DELIVER_PAST_DEAD_HOLDS-scenario.edn"), "-o", "text")
	if !strings.Contains(text, "1 of 2 units diverge") || !strings.Contains(text, "first divergence at delivery 0, c9/0@0") {
		t.Errorf("text:\n%s", text)
	}

	// The simulator run honest-seed-1: every unit exact, exit 0, and the
	// same verdicts in text.
	err, out, errOut = exec(t, context.Background(), false, "", "--parsley-export", filepath.Join(dir, "honest-seed-1.edn"), "-o", "json")
	if err != nil || errOut != "" {
		t.Fatalf("honest-seed-1: %v, stderr %q", err, errOut)
	}
	if errs := schemas.Validate("replay-export.schema.json", out); len(errs) > 0 {
		t.Fatalf("schema: %v\n%s", errs, out)
	}
	rep = exportReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Diverged != 0 || len(rep.Units) != 4 {
		t.Fatalf("honest-seed-1: %+v", rep)
	}
	for _, u := range rep.Units {
		if u.Verdict != "exact" || u.Shadow != u.Parsley || u.Parsley == 0 {
			t.Errorf("honest-seed-1 %s/%d: %+v", u.Process, u.Task, u)
		}
	}
	_, text, _ = exec(t, context.Background(), false, "", "--parsley-export", filepath.Join(dir, "honest-seed-1.edn"), "-o", "text")
	if !strings.Contains(text, "0 of 4 units diverge") || !strings.Contains(text, "p3/0  exact  parsley 13, shadow 13 deliveries") {
		t.Errorf("honest-seed-1 text:\n%s", text)
	}

	// Bad input: a one-line error naming the file.
	err, _, _ = exec(t, context.Background(), false, "", "--parsley-export", filepath.Join(dir, "PROVENANCE.md"))
	if err == nil || !strings.Contains(err.Error(), "PROVENANCE.md") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad export: %v", err)
	}
}

// The public IGNORE_CAUSES export through the command: exit 4, p0 exact,
// p1's first divergence at c1/1@0 by causal order, in JSON and text alike.
func TestParsleyExportIgnoreCauses(t *testing.T) {
	path := filepath.Join("..", "..", "..", "testdata", "parsley-exports", "IGNORE_CAUSES-seed-3.edn")
	err, out, _ := exec(t, context.Background(), false, "", "--parsley-export", path, "-o", "json")
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitFound {
		t.Fatalf("want exit %d, got %v", cmdutil.ExitFound, err)
	}
	schemas := testutil.LoadSchemas(t, filepath.Join("..", "..", "..", "docs", "schemas"))
	if errs := schemas.Validate("replay-export.schema.json", out); len(errs) > 0 {
		t.Fatalf("schema: %v\n%s", errs, out)
	}
	var rep exportReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sabotage != "IGNORE_CAUSES" || rep.Diverged != 1 || len(rep.Units) != 2 {
		t.Fatalf("%+v", rep)
	}
	var p1 *exportDivergence
	for _, u := range rep.Units {
		switch u.Process {
		case "p0":
			if u.Verdict != "exact" || u.Divergence != nil {
				t.Errorf("p0: %+v %+v", u, u.Divergence)
			}
		case "p1":
			p1 = u.Divergence
		}
	}
	if p1 == nil || p1.Position != 0 || p1.Channel != "c1/1" || p1.Offset != 0 || p1.Rule != "causal-order" {
		t.Fatalf("p1: %+v", p1)
	}
	_, text, _ := exec(t, context.Background(), false, "", "--parsley-export", path, "-o", "text")
	want := "first divergence at delivery 0, c1/1@0: " + "Parsley " + p1.Parsley + "; shadow " + p1.Shadow + " (rule " + p1.Rule + ")"
	if !strings.Contains(text, "1 of 2 units diverge") || !strings.Contains(text, want) {
		t.Errorf("text does not say what json says (%q):\n%s", want, text)
	}
}
