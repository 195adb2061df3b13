package processes

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"
)

// hostileRows are processes whose application id and received topics
// are the hostile strings, plus a space and tabwriter's escape byte.
func hostileRows() []inspect.ProcessSummary {
	var rows []inspect.ProcessSummary
	for _, s := range append(slices.Clone(testutil.Hostile), "EVIL two words", "EVIL\xff\tTAB") {
		rows = append(rows, inspect.ProcessSummary{App: s, Changelog: s + "-__parsley.ordering-changelog", Tasks: 1,
			Receives: []string{s, "orders"}, ReceivesFrom: "state", NextStart: inspect.NextStartOK})
	}
	return rows
}

// TestHostileNamesInTheTable: APP and RECEIVES cells are escaped on a
// terminal and in a pipe; in a pipe every row keeps its 12 fields, so no
// \xff (text/tabwriter's escape byte), tab or space in a name breaks the
// layout.
func TestHostileNamesInTheTable(t *testing.T) {
	rep := report{Now: time.Unix(0, 0), Rows: hostileRows()}
	for _, tty := range []bool{true, false} {
		ios, _, out, _ := iostreams.Test()
		ios.OutTTY = tty
		if err := write(rep, ios, "text"); err != nil {
			t.Fatal(err)
		}
		testutil.NoRawHostile(t, "processes", out.String())
		if strings.Contains(out.String(), "\t") {
			t.Errorf("tty=%v: a raw tab reaches the table:\n%q", tty, out.String())
		}
		if tty {
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(rep.Rows)+1 {
			t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(rep.Rows), out)
		}
		for _, l := range lines {
			if n := len(strings.Fields(l)); n != len(view.ProcessColumns) {
				t.Errorf("%d fields: %q", n, l)
			}
		}
	}
}

// TestJSONKeepsNonUTF8Names: a name that is not UTF-8 is not rewritten
// silently: app writes the invalid byte \xff, app_base64 holds the exact
// bytes; a UTF-8 name has app_base64 null.
func TestJSONKeepsNonUTF8Names(t *testing.T) {
	rep := report{Now: time.Unix(0, 0), Rows: []inspect.ProcessSummary{
		{App: "bad\xffutf", Changelog: "bad\xffutf-__parsley.ordering-changelog", NextStart: inspect.NextStartOK},
		{App: "good", Changelog: "good-__parsley.ordering-changelog", NextStart: inspect.NextStartOK},
	}}
	ios, _, out, _ := iostreams.Test()
	if err := write(rep, ios, "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Processes []struct {
			App             string  `json:"app"`
			AppBase64       *string `json:"app_base64"`
			ChangelogBase64 *string `json:"changelog_base64"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	bad := got.Processes[0]
	if bad.App != `bad\xffutf` || bad.AppBase64 == nil || bad.ChangelogBase64 == nil {
		t.Fatalf("bad name: %+v", bad)
	}
	if raw, _ := base64.StdEncoding.DecodeString(*bad.AppBase64); string(raw) != "bad\xffutf" {
		t.Errorf("app_base64 decodes to %q", raw)
	}
	if raw, _ := base64.StdEncoding.DecodeString(*bad.ChangelogBase64); string(raw) != "bad\xffutf-__parsley.ordering-changelog" {
		t.Errorf("changelog_base64 decodes to %q", raw)
	}
	if g := got.Processes[1]; g.App != "good" || g.AppBase64 != nil {
		t.Errorf("good name: %+v", g)
	}
}
