package web

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
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
	doc := render.ProcessesReport{Now: now, Rows: rows}.JSON()
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
	names := &clock.Names{}
	att, err := process.ReadAttach(ctx, c.Client, app, c.TxnWait, names)
	if err != nil {
		return render.HoldsJSON{}, err
	}
	p := att.Process
	if p.ChangelogMissing {
		return render.HoldsJSON{}, ErrNoProcess
	}
	if p.ReadOn, err = att.ReadOn(ctx, c.Client, process.ReadOnOptions{MaxHeaderSize: clock.DefaultMaxSize}); err != nil {
		return render.HoldsJSON{}, fmt.Errorf("%s: %w", app, err)
	}
	p.RetentionWarn = c.RetentionWarn
	now := c.Now()
	var tasks []render.TaskHolds
	for _, part := range p.Changelog.Partitions() {
		t, err := inspect.DiagnoseTask(p, part, now)
		if err != nil {
			return render.HoldsJSON{}, err
		}
		th := render.TaskHolds{Task: part, Scope: []string{}, Rep: t.Report, Failed: t.FailedClosed()}
		for _, ch := range t.Scope {
			if ch.Partition == part {
				th.Scope = append(th.Scope, p.Names.Channel(ch))
			}
		}
		slices.Sort(th.Scope)
		tasks = append(tasks, th)
	}
	doc := render.HoldsTasks(app, tasks, nil, now, p.Names, render.HoldsOptions{RetentionWarn: c.RetentionWarn})
	if c.procs == nil {
		c.procs = map[string]cached[render.HoldsJSON]{}
	}
	c.procs[app] = cached[render.HoldsJSON]{at: now, doc: doc, ok: true}
	return doc, nil
}
