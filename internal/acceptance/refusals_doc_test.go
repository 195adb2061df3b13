package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/parsley"
)

// TestRefusalsDocListsEveryReason: docs/refusals.md has a section for every
// reason the start check predicts, and its triage table gives every reason
// — those the cluster can show and those it cannot — with the answers
// parsley.Reason.Triage gives, so the page and the output cannot drift.
func TestRefusalsDocListsEveryReason(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "refusals.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	rows := map[parsley.Reason]string{}
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		name, _, _ := strings.Cut(strings.TrimSpace(cells[1]), " ")
		if r := parsley.Reason(strings.Trim(name, "`")); len(cells) == 6 && rows[r] == "" {
			rows[r] = line // the triage table's: the first table of four columns
		}
	}
	for _, r := range parsley.Reasons() {
		if !strings.Contains(doc, "### `"+string(r)+"`") {
			t.Errorf("docs/refusals.md has no section for %s", r)
		}
		checkTriageRow(t, r, rows[r], false)
	}
	for _, r := range parsley.Unshowable() {
		checkTriageRow(t, r, rows[r], true)
		if !strings.Contains(doc, "`"+string(r)+"`") {
			t.Errorf("docs/refusals.md does not name %s", r)
		}
	}
}

func checkTriageRow(t *testing.T, r parsley.Reason, row string, unshown bool) {
	t.Helper()
	if row == "" {
		t.Errorf("docs/refusals.md's triage table has no row for %s", r)
		return
	}
	tr := r.Triage()
	cells := strings.Split(row, "|")
	if len(cells) < 5 || strings.TrimSpace(cells[2]) != tr.Restart || strings.TrimSpace(cells[3]) != tr.Reset ||
		strings.HasPrefix(strings.TrimSpace(cells[4]), "**no**") != unshown {
		t.Errorf("docs/refusals.md's triage row for %s:\n%s\nwant restart %q, reset %q, not shown %v", r, row, tr.Restart, tr.Reset, unshown)
	}
}
