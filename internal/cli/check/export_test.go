package check

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
)

// scopeChangeExport is a Parsley export whose one task, u/0, first
// receives a and c, then (its declaration changed) a, b and c. c@0
// claims only b@0, which claims a@0 (a clock entry names the record it
// claims): while the task does not receive b,
// the gate does not make c@0 wait for a@0 — a hole of the first scope
// alone.
func scopeChangeExport(t *testing.T) string {
	t.Helper()
	id := func(c byte) string { return fmt.Sprintf("00000000-0000-4000-8000-00000000000%c", c) }
	causes := func(on byte, pos int64) string {
		tid, err := clock.ParseTopicID(id(on))
		if err != nil {
			t.Fatal(err)
		}
		c, err := clock.New(clock.Entry{Channel: clock.Channel{Topic: tid, Partition: 0}, Position: pos})
		if err != nil {
			t.Fatal(err)
		}
		return `"` + hex.EncodeToString(clock.Encode(c)) + `"`
	}
	at := func(cs string, pos int) string {
		var kv []string
		for _, c := range cs {
			kv = append(kv, fmt.Sprintf(`[%q 0] %d`, id(byte(c)), pos))
		}
		return "{" + strings.Join(kv, ", ") + "}"
	}
	edn := fmt.Sprintf(`{:format 1 :source :causalctl-test :seed 0 :sabotage :NONE
 :topics [{:id %[1]q :name "a" :log-start {0 0}} {:id %[2]q :name "b" :log-start {0 0}} {:id %[3]q :name "c" :log-start {0 0}}]
 :tasks [{:process "u" :task 0}]
 :records [{:topic %[1]q :partition 0 :offset 0 :uid "a0" :causes nil}
  {:topic %[2]q :partition 0 :offset 0 :uid "b0" :causes %[4]s}
  {:topic %[3]q :partition 0 :offset 0 :uid "c0" :causes %[5]s}]
 :trace []
 :reads [{:index 0 :process "u" :task 0 :exec-start %[6]s :next-read %[7]s}
  {:index 1 :process "u" :task 0 :exec-start %[6]s :next-read %[7]s}
  {:index 2 :process "u" :task 0 :exec-start %[8]s :next-read %[9]s}]
 :faults []}`, id('a'), id('b'), id('c'), causes('a', 0), causes('b', 0), at("ac", 0), at("ac", 1), at("abc", 0), at("abc", 1))
	path := filepath.Join(t.TempDir(), "scope-change.edn")
	if err := os.WriteFile(path, []byte(edn), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckParsleyExport: --parsley-export audits the export's records for
// each task's scope as its declarations changed it — one scope per
// execution whose scope differs from the one before, named PROCESS/TASK
// from step N — so the hole of the first declaration is found, and named
// by it alone.
func TestCheckParsleyExport(t *testing.T) {
	path := scopeChangeExport(t)
	code, out, errOut := exec(t, false, "", "--parsley-export", path, "-o", "json")
	if code != cmdutil.ExitFound {
		t.Fatalf("exit %d, want %d (a hole); stderr %s\n%s", code, cmdutil.ExitFound, errOut, out)
	}
	var rep struct {
		Scopes []struct {
			Name string `json:"name"`
		} `json:"scopes"`
		Findings []struct {
			Kind    string `json:"kind"`
			Channel string `json:"channel"`
			Offset  int64  `json:"offset"`
			Scope   string `json:"scope"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var names []string
	for _, s := range rep.Scopes {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "u/0 from step 0,u/0 from step 2" {
		t.Errorf("scopes %q, want one per declaration (the read of step 1 repeats step 0's)", got)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != "hole" || rep.Findings[0].Channel != "c/0" || rep.Findings[0].Offset != 0 ||
		rep.Findings[0].Scope != "u/0 from step 0" {
		t.Errorf("findings %+v, want c/0@0's hole for the first declaration only\n%s", rep.Findings, out)
	}

	// The text report names the scopes as the JSON does.
	code, out, _ = exec(t, false, "", "--parsley-export", path)
	if code != cmdutil.ExitFound || !strings.Contains(out, "for 2 nodes (u/0 from step 0, u/0 from step 2)") {
		t.Errorf("text: exit %d:\n%s", code, out)
	}

	// The public exports the project keeps: their stamps have no hole for
	// any task's scope.
	for _, f := range []string{"honest-dead-holds-scenario.edn", "DELIVER_PAST_DEAD_HOLDS-scenario.edn"} {
		if code, out, errOut := exec(t, false, "", "--parsley-export", filepath.Join("..", "..", "..", "testdata", "parsley-exports", f)); code != 0 {
			t.Errorf("%s: exit %d: %s%s", f, code, out, errOut)
		}
	}
}

// TestCheckParsleyExportUsage: the export is the input and its tasks the
// scopes; a bad export is exit 1 naming it.
func TestCheckParsleyExportUsage(t *testing.T) {
	path := scopeChangeExport(t)
	for _, extra := range [][]string{{"--scope", "a/0"}, {"--tasks"}, {"-f", path}} {
		if code, _, errOut := exec(t, false, "", append([]string{"--parsley-export", path}, extra...)...); code != cmdutil.ExitUsage || !strings.Contains(errOut, "--parsley-export") {
			t.Errorf("%v: exit %d %q, want a usage error", extra, code, errOut)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.edn")
	if err := os.WriteFile(bad, []byte("{:format 2}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := exec(t, false, "", "--parsley-export", bad); code != 1 || !strings.Contains(errOut, "bad.edn: export format 2") || strings.Contains(strings.TrimSpace(errOut), "\n") {
		t.Errorf("bad export: exit %d %q, want one line naming the file", code, errOut)
	}
}
