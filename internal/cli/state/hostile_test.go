package state

import (
	"testing"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
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

// TestHostileNamesInStateText: the header's application id and
// changelog, the members' subscriptions and assignments, channels, heads
// and the refusal lines reach the text escaped.
func TestHostileNamesInStateText(t *testing.T) {
	for _, s := range testutil.Hostile {
		app, ch := s, s+"/0"
		rep := jsonReport{App: &app, Changelog: s + "-__parsley.ordering-changelog",
			Group:     &jsonGroup{Group: "g", Members: []jsonMember{{Subscription: []string{s, "orders"}, Assignment: map[string][]int32{s: {0}}}}},
			NextStart: &render.NextStart{Refused: true, Refusals: []render.Refusal{{Reason: parsley.Reason(s), Topic: &app, Channels: []string{ch}, Detail: s, NextStep: s}}},
			Tasks:     []jsonTask{{Channels: []jsonChannel{{Channel: ch, Head: &render.HeadJSON{Offset: 1, Cause: inspect.CauseReady}}}, CatchingUp: []string{ch}}}}
		testutil.NoRawHostile(t, "state text", text(rep, 200))
	}
}
