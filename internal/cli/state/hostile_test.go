package state

import (
	"testing"

	"github.com/causalctl/causalctl/internal/testutil"
)

// TestHostileGroupStringsEscaped: the group's name and state and each
// member's id, client id and host, all the brokers', reach the text
// escaped.
func TestHostileGroupStringsEscaped(t *testing.T) {
	for _, s := range testutil.Hostile {
		assigned := s
		rep := jsonReport{Group: &jsonGroup{Group: s, State: s, Members: []jsonMember{{MemberID: s, ClientID: s, Host: s}}},
			Tasks: []jsonTask{{AssignedTo: &assigned}}}
		testutil.NoRawHostile(t, "state text", text(rep, 0))
	}
}
