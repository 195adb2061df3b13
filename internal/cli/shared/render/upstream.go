package render

import (
	"fmt"
	"strings"

	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/upstream"
)

// Upstream is a process's upstream root (upstream.Root) as JSON: the
// `upstream` object of processes and state (docs/fleet.md).
type Upstream struct {
	App    *string  `json:"app"` // null for a cycle
	Kind   string   `json:"kind"`
	Code   *string  `json:"code"`
	Reason string   `json:"reason"`
	Topic  string   `json:"topic"`
	Via    []string `json:"via"`
	Cycle  []string `json:"cycle"`
}

// UpstreamOf is r as JSON; nil for none.
func UpstreamOf(r *upstream.Root) *Upstream {
	if r == nil {
		return nil
	}
	j := &Upstream{Kind: string(r.Kind), Reason: r.Reason(), Topic: r.Topic, Via: append([]string{}, r.Via...), Cycle: append([]string{}, r.Cycle...)}
	if r.App != "" {
		j.App = &r.App
	}
	if r.Code != "" {
		j.Code = &r.Code
	}
	return j
}

// Text is the root in a sentence, ending in a newline; "" for none:
// "Upstream root: enricher, refusing POSITIONS_DISCARDED_UNREAD (waiting on enriched, via enricher)."
func (u *Upstream) Text() string {
	if u == nil {
		return ""
	}
	via := escape.Text(strings.Join(u.Via, " → "))
	if u.App == nil {
		return fmt.Sprintf("Upstream: a cycle of processes holding on each other's output: %s (waiting on %s).\n",
			escape.Text(strings.Join(u.Cycle, " → ")), escape.Text(u.Topic))
	}
	return fmt.Sprintf("Upstream root: %s, %s (waiting on %s, via %s).\n", escape.Text(*u.App), escape.Text(u.Reason), escape.Text(u.Topic), via)
}
