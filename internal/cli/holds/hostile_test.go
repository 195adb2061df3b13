package holds

import (
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// TestHostileTransactionalIDEscaped: a transactional id from the brokers
// (or a capture's log facts) reaches the text of a head escaped.
func TestHostileTransactionalIDEscaped(t *testing.T) {
	for _, s := range testutil.Hostile {
		h := &inspect.Head{Channel: "orders/0", Offset: 3, Blockers: []inspect.Blocker{{Channel: "payments/0", Required: 5, Cause: inspect.CauseOpenTransaction,
			Producer: &record.OpenTransaction{ProducerID: 7, TransactionalID: s}}}}
		testutil.NoRawHostile(t, "holds head line", headLine(h))
	}
}

// TestHostileScopeInTaskHeadings: holds --app's task headings name the
// task's scope, topics the cluster named: escaped.
func TestHostileScopeInTaskHeadings(t *testing.T) {
	for _, s := range testutil.Hostile {
		var b strings.Builder
		reps := []render.TaskHolds{{Task: 0, Scope: []string{s + "/0", "orders/0"}, Rep: &inspect.Report{}}}
		if err := writeTasks(&b, "text", reps, nil, time.Unix(0, 0), &Options{}); err != nil {
			t.Fatal(err)
		}
		testutil.NoRawHostile(t, "holds task heading", b.String())
	}
}
