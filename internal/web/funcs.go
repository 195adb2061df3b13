package web

import (
	"html/template"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
)

// funcs are the templates' helpers. None returns template.HTML: every
// string reaches the page through html/template's escaping.
var funcs = template.FuncMap{
	"age":       ageText,
	"since":     since,
	"abs":       func(t time.Time) string { return render.Time(t) },
	"iso":       func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"stamp":     stamp,
	"deref":     func(p *int64) int64 { return *p },
	"causes":    causeList,
	"topic":     func(ch string) string { t, _ := splitChannel(ch); return t },
	"partition": func(ch string) string { _, p := splitChannel(ch); return p },
	"path":      url.PathEscape,
	"query":     url.QueryEscape,
	"stuck":     Stuck,
	"add":       func(a, b int) int { return a + b },
	"taskOf":    func(p *int32) int32 { return *p },
	"soonest":   soonest,
}

// soonest is the retention clock that runs out first: the one whose
// position has passed, else the least time left, else the fewest
// positions left; nil when there is none.
func soonest(clocks []render.RetentionClock) *render.RetentionClock {
	var best *render.RetentionClock
	for i := range clocks {
		c := &clocks[i]
		switch {
		case best == nil, c.Passed && !best.Passed:
			best = c
		case c.Passed != best.Passed:
		case c.LeftMs != nil && (best.LeftMs == nil || *c.LeftMs < *best.LeftMs):
			best = c
		case c.LeftMs == nil && best.LeftMs == nil && c.Headroom < best.Headroom:
			best = c
		}
	}
	return best
}

// ageText says a duration in milliseconds the way the CLI does: 4m12s.
func ageText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	default:
		return d.Round(time.Minute).String()
	}
}

// since is the instant ms before now.
func since(now time.Time, ms int64) time.Time {
	return now.Add(-time.Duration(ms) * time.Millisecond)
}

// stamp parses a document's instant; zero when absent.
func stamp(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, *s)
	return t
}

type causeCount struct {
	Cause string
	N     int
}

func causeList(m map[string]int) []causeCount {
	out := []causeCount{}
	for _, c := range slices.Sorted(maps.Keys(m)) {
		out = append(out, causeCount{c, m[c]})
	}
	return out
}

// splitChannel is "topic/partition" as its two parts.
func splitChannel(ch string) (topic, partition string) {
	i := strings.LastIndexByte(ch, '/')
	if i < 0 {
		return ch, ""
	}
	if _, err := strconv.Atoi(ch[i+1:]); err != nil {
		return ch, ""
	}
	return ch[:i], ch[i+1:]
}
