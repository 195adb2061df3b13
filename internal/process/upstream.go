package process

import (
	"context"
	"slices"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
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

// RootOf is app's upstream root, nil when it has none. Only the processes
// on its way upstream are read and summarised (at most concurrency at
// once): app, the writers of the topics its held heads wait on, theirs,
// and so on, the writers learned as in Upstream. The others cannot be on
// the way, so the root is the one Upstream gives over every process, at
// the cost of the processes upstream of app rather than of the cluster's
// (docs/performance.md).
//
// self, when not nil, is app's summary from what the caller has already
// read and diagnosed (Read and ReadOnAll with the default options, from
// app's own changelog; inspect.SummarizeDiagnosed): app is not read
// again, which halves what `state --app` and `holds --app` read, and the
// root follows from the very snapshot the rest of their report shows.
func RootOf(ctx context.Context, cl *kafka.Client, app string, self *inspect.ProcessSummary, fleet upstream.Writers, txnWait time.Duration, concurrency int, now time.Time) (*upstream.Root, error) {
	r, _, err := rootOf(ctx, cl, app, self, fleet, txnWait, concurrency, now)
	return r, err
}

// rootOf is RootOf, also saying which processes it read or summarised, in
// that order.
func rootOf(ctx context.Context, cl *kafka.Client, app string, self *inspect.ProcessSummary, fleet upstream.Writers, txnWait time.Duration, concurrency int, now time.Time) (*upstream.Root, []string, error) {
	changelogs, listing, err := Discover(ctx, cl, "")
	if err != nil {
		return nil, nil, err
	}
	changelogOf := map[string]string{}
	var apps []string
	for _, name := range changelogs {
		if a, ok := parsley.AppOf(name); ok {
			changelogOf[a] = name
			apps = append(apps, a)
		}
	}
	writers := upstream.Writers{}
	writers.Merge(fleet)
	var nodes []upstream.Node
	var read []string
	seen := map[string]bool{app: true}
	asked := map[string]bool{}
	for next := []string{app}; len(next) > 0; {
		var logs []string
		var rows []inspect.ProcessSummary
		for _, a := range next {
			read = append(read, a)
			name, ok := changelogOf[a]
			switch {
			case ok && a == app && self != nil && self.Err == nil && self.Changelog == name:
				rows = append(rows, *self)
			case ok:
				logs = append(logs, name)
			case a == app:
				// Its changelog is gone: it is still a node waiting on nothing.
				nodes = append(nodes, upstream.NodeOf(&inspect.ProcessSummary{App: a}))
			}
		}
		more, err := summarize(ctx, cl, logs, listing, ReadOnOptions{}, txnWait, concurrency, now)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, more...)
		var waited []string
		for i := range rows {
			nodes = append(nodes, upstream.NodeOf(&rows[i]))
			for _, topic := range rows[i].WaitsOn {
				if !asked[topic] {
					asked[topic] = true
					waited = append(waited, topic)
				}
			}
		}
		slices.Sort(waited)
		if len(waited) > 0 {
			found, err := cl.Writers(ctx, waited, apps)
			if err != nil {
				return nil, nil, err
			}
			writers.Merge(found)
		}
		next = nil
		for _, topic := range waited {
			for _, w := range writers[topic] {
				if _, ok := changelogOf[w]; ok && !seen[w] {
					seen[w] = true
					next = append(next, w)
				}
			}
		}
		slices.Sort(next)
	}
	if r, ok := upstream.New(nodes, writers).Resolve()[app]; ok {
		return &r, read, nil
	}
	return nil, read, nil
}
