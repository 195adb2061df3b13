package process

import (
	"context"
	"slices"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/upstream"
)

// Upstream resolves the upstream root of every summarised process
// (upstream.Graph.Resolve): the writers of the topics their heads wait on
// are learned from the cluster (kafka.Client.Writers) and from fleet, the
// fleet file's (nil when none), which adds to what the cluster tells.
func Upstream(ctx context.Context, cl *kafka.Client, rows []inspect.ProcessSummary, fleet upstream.Writers) (map[string]upstream.Root, error) {
	nodes := make([]upstream.Node, 0, len(rows))
	var apps, waited []string
	for i := range rows {
		nodes = append(nodes, upstream.NodeOf(&rows[i]))
		apps = append(apps, rows[i].App)
		waited = append(waited, rows[i].WaitsOn...)
	}
	slices.Sort(waited)
	writers := upstream.Writers{}
	if len(waited) > 0 {
		found, err := cl.Writers(ctx, slices.Compact(waited), apps)
		if err != nil {
			return nil, err
		}
		writers.Merge(found)
	}
	writers.Merge(fleet)
	return upstream.New(nodes, writers).Resolve(), nil
}

// RootsFirst orders rows with the processes that are another's upstream
// root first — the stuck ones to look at — each group in its order.
func RootsFirst(rows []inspect.ProcessSummary, roots map[string]upstream.Root) {
	first := upstream.Roots(roots)
	slices.SortStableFunc(rows, func(a, b inspect.ProcessSummary) int {
		switch {
		case first[a.App] == first[b.App]:
			return 0
		case first[a.App]:
			return -1
		}
		return 1
	})
}

// RootOf is app's upstream root, nil when it has none: every process of
// the cluster read and summarised (Summarize, at most concurrency at
// once) and resolved (Upstream) — what a process waits on is known only
// from the others.
func RootOf(ctx context.Context, cl *kafka.Client, app string, fleet upstream.Writers, txnWait time.Duration, concurrency int, now time.Time) (*upstream.Root, error) {
	rows, err := Summarize(ctx, cl, Selection{}, txnWait, concurrency, now)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(rows, func(r inspect.ProcessSummary) bool { return r.App == app }) {
		// Its changelog is gone: it is still a node waiting on nothing.
		rows = append(rows, inspect.ProcessSummary{App: app})
	}
	roots, err := Upstream(ctx, cl, rows, fleet)
	if err != nil {
		return nil, err
	}
	if r, ok := roots[app]; ok {
		return &r, nil
	}
	return nil, nil
}
