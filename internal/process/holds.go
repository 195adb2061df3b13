package process

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/upstream"
)

// Holds is one Parsley process as `holds --app` reads it (and the web
// pages, which must say the same): attached from its ordering state, each
// task read on from the committed offsets to the log end and diagnosed
// (inspect.DiagnoseTask), and the stuck process upstream its holds wait
// on.
type Holds struct {
	Process *inspect.Process
	// Tasks are the changelog's partitions' tasks, in order.
	Tasks []TaskHolds
	// Root is the upstream root (RootOf); nil when there is none, or when
	// finding it failed: RootErr then says why, and the holds stand.
	Root    *upstream.Root
	RootErr error
	// Warnings are the attach's and the read on's (Attach.Warnings,
	// Attach.Missing), to be said on stderr.
	Warnings []string
}

// TaskHolds is one task of Holds.
type TaskHolds struct {
	Task int32
	// Scope are the task's channels (partition Task of what it receives),
	// named, sorted.
	Scope []string
	// Diagnosis is the task's (inspect.DiagnoseTask).
	Diagnosis *inspect.Task
	// BehindFrom is where the task's changelog read stopped behind an
	// open transaction; nil when it reached the end.
	BehindFrom *int64
	// Ready are the store's held heads nothing blocks any more,
	// CHANNEL@OFFSET, sorted: delivered as soon as the task runs.
	Ready []string
}

// HoldsOptions are how ReadHolds reads.
type HoldsOptions struct {
	ReadOn  ReadOnOptions
	TxnWait time.Duration
	// Fleet adds to the writers the cluster names (--fleet); nil: none.
	Fleet upstream.Writers
	// RetentionWarn flags held records with less headroom.
	RetentionWarn time.Duration
	Names         *clock.Names
	Now           time.Time
}

// ReadHolds reads process app through cl as `holds --app` does.
func ReadHolds(ctx context.Context, cl *kafka.Client, app string, o HoldsOptions) (*Holds, error) {
	att, err := ReadAttach(ctx, cl, app, o.TxnWait, o.Names)
	if err != nil {
		return nil, err
	}
	p := att.Process
	h := &Holds{Process: p, Warnings: slices.Clone(att.Warnings)}
	if p.ReadOn, err = att.ReadOn(ctx, cl, o.ReadOn); err != nil {
		return nil, fmt.Errorf("%s: %w", app, err)
	}
	h.Warnings = append(h.Warnings, att.Missing...)
	if w := p.ReadOnPartialWarning(); w != "" {
		h.Warnings = append(h.Warnings, w)
	}
	p.RetentionWarn = o.RetentionWarn
	var diagnosed []*inspect.Task
	for _, part := range p.Changelog.Partitions() {
		t, err := inspect.DiagnoseTask(p, part, o.Now)
		if err != nil {
			return nil, err
		}
		diagnosed = append(diagnosed, t)
		th := TaskHolds{Task: part, Diagnosis: t, Scope: []string{}}
		if pr := p.Changelog.Partition(part); pr.BehindTransaction() {
			th.BehindFrom = &pr.ReadTo
		}
		for ch := range t.Ready {
			if head, ok := t.State.Channel(ch).Head(); ok {
				th.Ready = append(th.Ready, p.Names.Channel(ch)+"@"+strconv.FormatInt(head.Offset, 10))
			}
		}
		slices.Sort(th.Ready)
		for _, ch := range t.Scope {
			if ch.Partition == part {
				th.Scope = append(th.Scope, p.Names.Channel(ch))
			}
		}
		slices.Sort(th.Scope)
		h.Tasks = append(h.Tasks, th)
	}
	var self *inspect.ProcessSummary
	if o.ReadOn == (ReadOnOptions{}) { // read as RootOf reads the others
		s := inspect.SummarizeDiagnosed(p.Changelog.Topic, int32(len(diagnosed)), p, diagnosed, o.Now)
		self = &s
	}
	if h.Root, h.RootErr = RootOf(ctx, cl, app, self, o.Fleet, o.TxnWait, DefaultConcurrency, o.Now); ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return h, nil
}
