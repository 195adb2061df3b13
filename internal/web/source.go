package web

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/process"
)

// Source answers the pages' two questions in the CLI's documents: every
// process as `processes -o json` lists them, and one process's holds as
// `holds --app APP -o json` reports them.
type Source interface {
	Processes(ctx context.Context) (render.ProcessesJSON, error)
	Process(ctx context.Context, app string) (render.HoldsJSON, error)
}

// ErrNoProcess is Process's error for an application id the cluster has
// no ordering changelog of.
var ErrNoProcess = errors.New("no such Parsley process")

// Cluster is a Source reading the cluster through one client with the
// commands' own readers (process.Summarize; process.ReadAttach, ReadOn and
// inspect.DiagnoseTask as holds --app), each answer reused for MaxAge so
// that open pages polling for updates do not multiply the reads.
type Cluster struct {
	Client      *kafka.Client
	Select      process.Selection
	TxnWait     time.Duration
	Concurrency int
	// RetentionWarn is holds' --retention-warn default.
	RetentionWarn time.Duration
	MaxAge        time.Duration
	Now           func() time.Time

	mu    sync.Mutex // one read at a time: the broker load of one reader
	list  cached[render.ProcessesJSON]
	procs map[string]cached[render.HoldsJSON]
}

type cached[T any] struct {
	at  time.Time
	doc T
	ok  bool
}

func (c *Cluster) fresh(at time.Time) bool { return c.Now().Sub(at) < c.MaxAge }

// Processes lists every process selected, as `processes -o json`.
func (c *Cluster) Processes(ctx context.Context) (render.ProcessesJSON, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list.ok && c.fresh(c.list.at) {
		return c.list.doc, nil
	}
	now := c.Now()
	rows, err := process.Summarize(ctx, c.Client, c.Select, c.TxnWait, max(c.Concurrency, 1), now)
	if err != nil {
		return render.ProcessesJSON{}, err
	}
	// The upstream roots as processes finds them; without them the rows
	// stand (processes says so on stderr; a page has no stderr).
	roots, _ := process.Upstream(ctx, c.Client, rows, nil)
	if ctx.Err() != nil {
		return render.ProcessesJSON{}, ctx.Err()
	}
	process.RootsFirst(rows, roots)
	doc := render.ProcessesReport{Now: now, Rows: rows, Roots: roots}.JSON()
	c.list = cached[render.ProcessesJSON]{at: now, doc: doc, ok: true}
	return doc, nil
}

// Process reads app and diagnoses each of its tasks as `holds --app`
// does, into holds' document.
func (c *Cluster) Process(ctx context.Context, app string) (render.HoldsJSON, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.procs[app]; ok && c.fresh(p.at) {
		return p.doc, nil
	}
	if c.Select.App != "" && app != c.Select.App || len(app) < len(c.Select.Prefix) || app[:len(c.Select.Prefix)] != c.Select.Prefix {
		return render.HoldsJSON{}, ErrNoProcess
	}
	now := c.Now()
	names := &clock.Names{}
	h, err := process.ReadHolds(ctx, c.Client, app, process.HoldsOptions{ReadOn: process.ReadOnOptions{MaxHeaderSize: clock.DefaultMaxSize},
		TxnWait: c.TxnWait, RetentionWarn: c.RetentionWarn, Names: names, Now: now})
	if err != nil {
		return render.HoldsJSON{}, err
	}
	if h.Process.ChangelogMissing {
		return render.HoldsJSON{}, ErrNoProcess
	}
	var tasks []render.TaskHolds
	for _, t := range h.Tasks {
		tasks = append(tasks, render.TaskHolds{Task: t.Task, Scope: t.Scope, Rep: t.Diagnosis.Report, Failed: t.Diagnosis.FailedClosed(),
			BehindFrom: t.BehindFrom, Ready: t.Ready})
	}
	doc := render.HoldsTasks(app, tasks, render.UpstreamOf(h.Root), now, names, render.HoldsOptions{RetentionWarn: c.RetentionWarn})
	if c.procs == nil {
		c.procs = map[string]cached[render.HoldsJSON]{}
	}
	c.procs[app] = cached[render.HoldsJSON]{at: now, doc: doc, ok: true}
	return doc, nil
}
