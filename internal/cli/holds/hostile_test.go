package holds

import (
	"testing"

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
