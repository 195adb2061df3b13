package acceptance

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/testutil"
)

// The JSON output of the commands is documented by JSON Schemas in
// docs/schemas. These tests check real output against them, so the
// documentation fails the build when it drifts: a new field must be
// documented there (the schemas forbid undeclared properties).

const schemaDir = "../../docs/schemas"

func loadSchemas(t *testing.T) *testutil.Schemas {
	t.Helper()
	return testutil.LoadSchemas(t, schemaDir)
}

// lines splits NDJSON output into its objects.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// TestJSONOutputMatchesTheSchemas runs the commands over the replay test
// captures (healthy, and with every fault: an undecodable header, a cycle,
// a chain) and checks every object they print against docs/schemas.
func TestJSONOutputMatchesTheSchemas(t *testing.T) {
	s := loadSchemas(t)
	type schemaRun struct {
		schema string
		args   []string
	}
	var runs []schemaRun
	for _, capture := range []string{basicCapture, faultsCapture} {
		runs = append(runs,
			schemaRun{"decode.schema.json", []string{"decode", "-f", capture, "-o", "json"}},
			schemaRun{"replay-summary.schema.json", []string{"replay", "-f", capture, "-o", "json"}},
			schemaRun{"replay-summary.schema.json", []string{"replay", "-f", capture, "-o", "json", "--undecodable", "hold"}},
			schemaRun{"replay-event.schema.json", []string{"replay", "-f", capture, "-o", "ndjson"}},
			schemaRun{"replay-event.schema.json", []string{"replay", "-f", capture, "-o", "ndjson", "--undecodable", "hold", "--interleave", "random:3"}},
			schemaRun{"replay-summary.schema.json", []string{"replay", "-f", capture, "-o", "json", "--tasks", "--undecodable", "hold"}},
			schemaRun{"replay-event.schema.json", []string{"replay", "-f", capture, "-o", "ndjson", "--tasks", "--undecodable", "hold"}},
			schemaRun{"replay-summary.schema.json", []string{"replay", "-f", capture, "-o", "json", "--tasks", "--shard", "1/2"}},
			schemaRun{"replay-event.schema.json", []string{"replay", "-f", capture, "-o", "ndjson", "--tasks", "--shard", "0/3"}},
		)
	}
	runs = append(runs,
		schemaRun{"decode.schema.json", []string{"decode", "--hex", golden, "--topic-id", ordersID, "-o", "json"}},
		schemaRun{"decode.schema.json", []string{"decode", "--hex", "0100", "-o", "json"}},
		schemaRun{"version.schema.json", []string{"version", "-o", "json"}},
	)
	seen := map[string]bool{} // event types and optional fields met, so the runs cover them
	for _, r := range runs {
		_, out, stderr := run(t, false, "", r.args...)
		objs := lines(out)
		if len(objs) == 0 {
			t.Errorf("%q printed no JSON (stderr %q)", r.args, stderr)
		}
		for _, o := range objs {
			for _, e := range s.Validate(r.schema, o) {
				t.Errorf("%q against %s: %s\n%s", r.args, r.schema, e, o)
			}
			for _, key := range []string{`"type":"deliver"`, `"type":"hold"`, `"behind":`, `"undecodable":`, `"type":"summary"`, `"failed":`, `"cyclic":true`, `"root":`, `"code":`, `"topic":`, `"task":`} {
				if strings.Contains(o, key) {
					seen[key] = true
				}
			}
		}
	}
	for _, key := range []string{`"type":"deliver"`, `"type":"hold"`, `"behind":`, `"undecodable":`, `"type":"summary"`, `"failed":`, `"cyclic":true`, `"root":`, `"code":`, `"topic":`, `"task":`} {
		if !seen[key] {
			t.Errorf("no run printed %s: the schema test does not cover it", key)
		}
	}
}

// TestCheckJSONMatchesTheSchemas: check's report (-o json) and lines
// (-o ndjson) against check.schema.json and check-line.schema.json, over
// the check fixture (a hole, a claim on a marker, a self-cycle, an
// undecodable header) and the faults capture, every finding with its root.
func TestCheckJSONMatchesTheSchemas(t *testing.T) {
	s := loadSchemas(t)
	fixture := "../cli/check/testdata/fixture.ndjson"
	seen := map[string]bool{}
	for _, args := range [][]string{
		{"-f", fixture, "--scope", "a,c"},
		{"-f", fixture},
		{"-f", faultsCapture},
	} {
		for format, schema := range map[string]string{"json": "check.schema.json", "ndjson": "check-line.schema.json"} {
			code, out, stderr := run(t, false, "", append(append([]string{"check"}, args...), "-o", format)...)
			objs := lines(out)
			if (code != 0 && code != 4) || len(objs) == 0 {
				t.Fatalf("check %q -o %s: exit %d, stderr %q", args, format, code, stderr)
			}
			for _, o := range objs {
				for _, e := range s.Validate(schema, o) {
					t.Errorf("check %q -o %s against %s: %s\n%s", args, format, schema, e, o)
				}
				for _, key := range []string{`"kind":"hole"`, `"kind":"undecodable"`, `"root":{`, `"kind":"summary"`} {
					seen[key] = seen[key] || strings.Contains(o, key)
				}
			}
		}
	}
	for _, key := range []string{`"kind":"hole"`, `"kind":"undecodable"`, `"root":{`, `"kind":"summary"`} {
		if !seen[key] {
			t.Errorf("no run printed %s: the schema test does not cover it", key)
		}
	}
	if errs := s.Validate("check-line.schema.json", `{"kind":"self-cycle","channel":"c/0","topic_id":"x","offset":2,"producer":"c/0"}`); len(errs) == 0 {
		t.Error("a finding without its root passes check-line.schema.json")
	}
}

// TestSchemaCheckCatchesDrift: the validator above rejects what the
// schemas do not describe — an undocumented field, a missing one, a wrong
// type, an unknown event — so the test above can fail.
func TestSchemaCheckCatchesDrift(t *testing.T) {
	s := loadSchemas(t)
	good := `{"received":1,"delivered":1,"dropped":0,"held":0,"skipped":0,"channels":[{"channel":"a/0","topic_id":"x","settled":0,"received_up_to":0,"held":0}],"cycles":[]}`
	if errs := s.Validate("replay-summary.schema.json", good); len(errs) != 0 {
		t.Fatalf("a valid summary fails: %v", errs)
	}
	for name, bad := range map[string]struct{ schema, doc, want string }{
		"undocumented field": {"replay-summary.schema.json", strings.Replace(good, `"held":0}]`, `"held":0,"lag":3}]`, 1), `"lag" is not documented`},
		"missing field":      {"replay-summary.schema.json", strings.Replace(good, `"skipped":0,`, "", 1), `missing required property "skipped"`},
		"wrong type":         {"replay-summary.schema.json", strings.Replace(good, `"settled":0`, `"settled":"0"`, 1), `is not of type`},
		"unknown event":      {"replay-event.schema.json", `{"type":"teleport","channel":"a/0","offset":1}`, "matches 0 of the oneOf"},
		"bad uuid":           {"decode.schema.json", `{"format":"parsley.causes","size":2,"entries":[{"topic_id":"XYZ","partition":0,"position":1}]}`, "does not match"},
		"bad format":         {"decode.schema.json", `{"format":"avro","size":2,"entries":[]}`, "is not one of"},
		"negative offset":    {"replay-event.schema.json", `{"type":"drop","channel":"a/0","offset":-1}`, "below the minimum"},
		"float count":        {"version.schema.json", `{"version":1.5,"commit":null,"date":null,"go_version":"go","os":"linux","arch":"amd64"}`, "is not of type"},
	} {
		errs := s.Validate(bad.schema, bad.doc)
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, bad.want) }) {
			t.Errorf("%s: errors %q, want one with %q", name, errs, bad.want)
		}
	}
}

// TestCaptureFormatExamples: the examples of docs/capture-format.md are
// read by the reader they document.
func TestCaptureFormatExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/capture-format.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(?:json)?\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	var file []string
	for _, b := range blocks {
		body := strings.TrimSpace(b[1])
		if !strings.HasPrefix(body, "{") {
			continue
		}
		if strings.Contains(body, "\n ") { // one object spread over lines
			file = append(file, strings.Join(strings.Fields(body), " "))
			continue
		}
		file = append(file, strings.Split(body, "\n")...)
	}
	if len(file) < 6 {
		t.Fatalf("found %d example lines in capture-format.md, want the log-facts line and §7", len(file))
	}
	// The stopped line (§4b) ends a file: it goes last.
	slices.SortStableFunc(file, func(a, b string) int {
		return cmp.Compare(strings.Count(a, `{"stopped":`), strings.Count(b, `{"stopped":`))
	})
	path := filepath.Join(t.TempDir(), "example.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(file, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, false, "", "replay", "-f", path, "-o", "json")
	if code != 0 || !strings.Contains(out, `"delivered":2`) || !strings.Contains(stderr, "the range is partial: the capture stopped (interrupted)") {
		t.Errorf("replay of the documented examples: exit %d, %s %s", code, out, stderr)
	}
}

// TestSchemaCausesAreTheClassifiers: the cause enumeration of the summary
// schema is exactly inspect.Causes, in rank order.
func TestSchemaCausesAreTheClassifiers(t *testing.T) {
	s := loadSchemas(t)
	_, def := s.Resolve("replay-summary.schema.json", "#/$defs/cause")
	var want []string
	for _, c := range inspect.Causes() {
		want = append(want, string(c))
	}
	if got := testutil.AsStrings(def["enum"]); !slices.Equal(got, want) {
		t.Errorf("replay-summary.schema.json $defs.cause = %q, want inspect.Causes() %q", got, want)
	}
}

// TestProcessesJSONMatchesTheSchema checks the JSON goldens of processes —
// each the real output of a kfake cluster, compared byte for byte in
// internal/cli/processes — against processes.schema.json, and that the
// schema's causes are the classifier's.
func TestProcessesJSONMatchesTheSchema(t *testing.T) {
	s := loadSchemas(t)
	paths, err := filepath.Glob("../cli/processes/testdata/*json.golden")
	if err != nil || len(paths) < 2 {
		t.Fatalf("goldens %v: %v", paths, err)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range s.Validate("processes.schema.json", string(b)) {
			t.Errorf("%s: %s", p, e)
		}
		for _, key := range []string{`"error":"`, `"older_than":true`, `"older_than":null`, `"group":null`, `"receives_from":"subscription"`, `"oldest_written_ms_ago":4`} {
			seen[key] = seen[key] || strings.Contains(string(b), key)
		}
	}
	for key, ok := range seen {
		if !ok {
			t.Errorf("no golden holds %s: the schema test does not cover it", key)
		}
	}
	_, def := s.Resolve("processes.schema.json", "#/$defs/process/properties/causes/properties")
	var got []string
	for c := range def {
		got = append(got, c)
	}
	var want []string
	for _, c := range inspect.Causes() {
		want = append(want, string(c))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("processes.schema.json causes %q, want inspect.Causes() %q", got, want)
	}
}

// TestSchemaReasonsAreTheStartChecks: the refusal reasons state and
// processes declare are parsley.Reasons(), in order, in both schemas.
func TestSchemaReasonsAreTheStartChecks(t *testing.T) {
	s := loadSchemas(t)
	var want []string
	for _, r := range parsley.Reasons() {
		want = append(want, string(r))
	}
	for file, ptr := range map[string]string{
		"state.schema.json":     "#/properties/next_start/properties/refusals/items/properties/reason",
		"processes.schema.json": "#/$defs/next_start/properties/refusals/items/properties/reason",
	} {
		_, def := s.Resolve(file, ptr)
		if got := testutil.AsStrings(def["enum"]); !slices.Equal(got, want) {
			t.Errorf("%s reasons %q, want parsley.Reasons() %q", file, got, want)
		}
	}
}
