package render

import (
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
)

// HoldsSchema names the JSON document `holds -o json` and the web API's
// /api/v1/processes/APP write, and its version (docs/schemas/holds.schema.json).
const HoldsSchema = "causalctl.holds/v3"

// The JSON schema (docs/holds.md). Field names are stable; a field is
// null when unknown, never left out, except the optional ones marked so.
type HoldsJSON struct {
	// Schema names the document's schema and its version (docs/json-output.md).
	Schema          string     `json:"schema"`
	Now             string     `json:"now"`
	PositionAdvance bool       `json:"position_advance"`
	OlderThanMs     int64      `json:"older_than_ms"`
	RetentionWarnMs int64      `json:"retention_warn_ms"`
	HeldHeads       int        `json:"held_heads"`
	HeldRecords     int64      `json:"held_records"`
	Roots           []RootJSON `json:"roots"`
	Heads           []HeadJSON `json:"heads"`
	Cycles          [][]string `json:"cycles"`
	// With --tasks or --app only: the process and the tasks.
	App   string      `json:"app,omitempty"`
	Tasks []HoldsTask `json:"tasks,omitempty"`
	// With --app only, when there is one: the stuck process upstream its
	// holds wait on (docs/fleet.md).
	Upstream *Upstream `json:"upstream,omitempty"`
}

// HoldsTask is one task's gate: its scope and what it holds.
type HoldsTask struct {
	Task        int32    `json:"task"`
	Scope       []string `json:"scope"`
	HeldHeads   int      `json:"held_heads"`
	HeldRecords int64    `json:"held_records"`
	// FailedClosed is the record the task fails closed on (--app); left
	// out when none.
	FailedClosed *TaskFailedClosed `json:"failed_closed,omitempty"`
	// BehindTransactionFrom is where the changelog's read stopped behind a
	// transaction still open (--app): the state is partial, as of there
	// (SPEC §6); left out when the read reached the end.
	BehindTransactionFrom *int64 `json:"behind_transaction_from,omitempty"`
	// Ready are the store's held heads nothing blocks any more (--app),
	// channel@offset; left out when none.
	Ready []string `json:"ready,omitempty"`
}

// TaskFailedClosed is the record a task fails closed on, in every
// document that reports one (holds, state).
type TaskFailedClosed struct {
	Channel string `json:"channel"`
	// Topic is the channel's topic name, null when only its id is known.
	Topic     *string `json:"topic"`
	TopicID   string  `json:"topic_id"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Code      string  `json:"code"`
	Detail    string  `json:"detail"`
	NextStep  string  `json:"next_step"`
}

// FailedClosedOf is f as the documents write it, its channel named by names.
func FailedClosedOf(f *inspect.FailedClosed, names *clock.Names) *TaskFailedClosed {
	out := failedClosed(f, names.Channel(f.Channel))
	return &out
}

// failedClosed is f, its channel named at (NAME/P, or UUID/P when no name
// is known).
func failedClosed(f *inspect.FailedClosed, at string) TaskFailedClosed {
	out := TaskFailedClosed{Channel: at, TopicID: f.Channel.Topic.String(), Partition: f.Channel.Partition, Offset: f.Offset,
		Code: string(f.Code), Detail: f.Detail, NextStep: inspect.FailedClosedStep(at, f)}
	if i := strings.LastIndexByte(at, '/'); i >= 0 && at[:i] != out.TopicID {
		name := at[:i]
		out.Topic = &name
	}
	return out
}

// RootJSON is a root of the wait chains, in every document that reports
// one (holds, state).
type RootJSON struct {
	Channel  string        `json:"channel"`
	Offset   int64         `json:"offset"`
	Cause    inspect.Cause `json:"cause"`
	NextStep string        `json:"next_step"`
	Heads    []string      `json:"heads"`
	Cycle    []string      `json:"cycle,omitempty"`
	Task     *int32        `json:"task,omitempty"` // --tasks, --app
}

// HeadJSON is a held head (or, in state, a ready one), in every document
// that reports one: holds' heads, state's channels[].head and
// behind_ready (docs/schemas/report.schema.json#/$defs/head).
type HeadJSON struct {
	Channel   string  `json:"channel"`
	TopicID   string  `json:"topic_id"`
	Offset    int64   `json:"offset"`
	Timestamp *string `json:"timestamp"`
	// WrittenMsAgo is now − the record's timestamp.
	WrittenMsAgo *int64 `json:"written_ms_ago"`
	// KeySize and ValueSize are the record's key and value sizes when the
	// reader kept the record (the ordering store does); null when the key
	// or value is null or the reader saw headers only.
	KeySize   *int `json:"key_size"`
	ValueSize *int `json:"value_size"`
	// Headers are the record's headers' keys and value sizes, in record
	// order (never their values); null when the reader saw no record.
	Headers []HeaderSizeJSON `json:"headers"`
	// Queued counts the records held on the channel, the head included.
	Queued int `json:"queued"`
	// Causes is the record's parsley.causes clock, names resolved.
	Causes      string        `json:"causes"`
	Undecodable string        `json:"undecodable,omitempty"`
	Cause       inspect.Cause `json:"cause"`
	// Root is where the head's wait chain ends; null for a ready head.
	Root        *RootRef       `json:"root"`
	Chain       []string       `json:"chain"`
	ChainLength int            `json:"chain_length"`
	Cycle       []string       `json:"cycle,omitempty"`
	CycleLength int            `json:"cycle_length,omitempty"`
	Blockers    []BlockerJSON  `json:"blockers"`
	Retention   *RetentionJSON `json:"retention"`
	NextStep    string         `json:"next_step"`
	Task        *int32         `json:"task,omitempty"` // --tasks, --app
}

// HeaderSizeJSON is one header of a held record: its key and its
// value's size (null for a null value).
type HeaderSizeJSON struct {
	Key  string `json:"key"`
	Size *int   `json:"size"`
}

// RootRef names a root: the head a wait chain ends at and its cause.
type RootRef struct {
	Channel string        `json:"channel"`
	Offset  int64         `json:"offset"`
	Cause   inspect.Cause `json:"cause"`
}

// String is the root as CHANNEL@OFFSET, as text output names it; "" for nil.
func (r *RootRef) String() string {
	if r == nil {
		return ""
	}
	return r.Channel + "@" + strconv.FormatInt(r.Offset, 10)
}

// BlockerJSON is one unmet entry of a head's clock.
type BlockerJSON struct {
	Channel  string        `json:"channel"`
	Required int64         `json:"required"`
	Settled  *int64        `json:"settled"`
	Cause    inspect.Cause `json:"cause"`
	// Root is, for a held blocker, the channel its wait chain ends at;
	// null when the blocker holds nothing.
	Root     *string       `json:"root"`
	Log      *LogJSON      `json:"log,omitempty"`
	Producer *ProducerJSON `json:"producer,omitempty"`
}

// ProducerJSON is the open transaction pinning the blocking channel's last
// stable offset; pins_last_stable is false when its first offset is not
// that offset (the facts were read at two moments).
type ProducerJSON struct {
	record.OpenTransaction
	PinsLastStable bool `json:"pins_last_stable"`
}

type LogJSON struct {
	LogStart      int64 `json:"log_start"`
	LastStable    int64 `json:"last_stable"`
	HighWatermark int64 `json:"high_watermark"`
}

type RetentionJSON struct {
	RetentionMs int64  `json:"retention_ms"`
	DeletesAt   string `json:"deletes_at"`
	HeadroomMs  int64  `json:"headroom_ms"`
	Warn        bool   `json:"warn"`
}

// HoldsOptions are the settings a holds document states.
type HoldsOptions struct {
	ReceiptOnly   bool
	OlderThan     time.Duration
	RetentionWarn time.Duration
}

// Holds is one gate's diagnosis as the holds document.
func Holds(rep *inspect.Report, opts HoldsOptions) HoldsJSON {
	out := HoldsJSON{
		Schema: HoldsSchema,
		Now:    Time(rep.Now), PositionAdvance: !opts.ReceiptOnly,
		OlderThanMs: opts.OlderThan.Milliseconds(), RetentionWarnMs: opts.RetentionWarn.Milliseconds(),
		HeldHeads: len(rep.Heads), HeldRecords: rep.RecordsHeld,
		Roots: []RootJSON{}, Heads: []HeadJSON{}, Cycles: rep.Cycles,
	}
	if out.Cycles == nil {
		out.Cycles = [][]string{}
	}
	for i := range rep.Roots {
		out.Roots = append(out.Roots, RootOf(&rep.Roots[i]))
	}
	for i := range rep.Heads {
		out.Heads = append(out.Heads, HeadOf(&rep.Heads[i]))
	}
	return out
}

// HeadOf is the diagnosed held head h as every document writes it.
func HeadOf(h *inspect.Head) HeadJSON {
	jh := HeadJSON{Channel: h.Channel, TopicID: h.TopicID, Offset: h.Offset, Queued: h.Queued, Causes: h.Clock,
		Undecodable: h.Undecodable, Cause: h.Cause, Chain: h.Chain, ChainLength: h.ChainLen, Blockers: []BlockerJSON{}, NextStep: h.NextStep,
		Root: &RootRef{Channel: h.Root, Offset: h.RootOffset, Cause: h.RootCause}}
	if jh.Chain == nil {
		jh.Chain = []string{}
	}
	if h.Cycle != nil {
		// Each head names at most MaxChain members of its cycle, as of
		// its chain; the root's cycle and the report's cycles list it
		// whole, once.
		jh.Cycle, jh.CycleLength = h.Cycle[:min(len(h.Cycle), inspect.MaxChain)], len(h.Cycle)
	}
	if !h.Timestamp.IsZero() {
		s := Time(h.Timestamp)
		jh.Timestamp = &s
	}
	if h.Age.Known {
		ms := h.Age.D.Milliseconds()
		jh.WrittenMsAgo = &ms
	}
	jh.KeySize, jh.ValueSize = size(h.KeySize), size(h.ValueSize)
	if h.Headers != nil {
		jh.Headers = make([]HeaderSizeJSON, len(h.Headers))
		for i, hd := range h.Headers {
			jh.Headers[i] = HeaderSizeJSON{Key: hd.Key, Size: size(hd.Size)}
		}
	}
	for _, b := range h.Blockers {
		jb := BlockerJSON{Channel: b.Channel, Required: b.Required, Cause: b.Cause}
		if b.Root != "" {
			r := b.Root
			jb.Root = &r
		}
		if t := b.Producer; t != nil {
			jb.Producer = &ProducerJSON{OpenTransaction: *t, PinsLastStable: b.Log != nil && b.Log.PinAgrees(t)}
		}
		if b.Settled >= 0 {
			s := b.Settled
			jb.Settled = &s
		}
		if b.Log != nil {
			jb.Log = &LogJSON{LogStart: b.Log.LogStart, LastStable: b.Log.LastStable, HighWatermark: b.Log.HighWatermark}
		}
		jh.Blockers = append(jh.Blockers, jb)
	}
	if r := h.Retention; r != nil {
		jh.Retention = &RetentionJSON{RetentionMs: r.RetentionMs, DeletesAt: Time(r.DeletesAt), HeadroomMs: r.Left.Milliseconds(), Warn: r.Warn}
	}
	return jh
}

// size is n, or nil for −1 (null or unknown).
func size(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
}

// RootOf is the root r as every document writes it.
func RootOf(r *inspect.Root) RootJSON {
	return RootJSON{Channel: r.Channel, Offset: r.Offset, Cause: r.Cause, NextStep: r.NextStep, Heads: r.Heads, Cycle: r.Cycle}
}

// TaskHolds is one task's diagnosis, for HoldsTasks.
type TaskHolds struct {
	Task  int32
	Scope []string
	Rep   *inspect.Report
	// Failed is the record the task fails closed on; nil when none.
	Failed *inspect.FailedClosed
	// BehindFrom is where the task's changelog read stopped behind an
	// open transaction; nil when it reached the end.
	BehindFrom *int64
	// Ready are the store's heads nothing blocks any more, CH@OFFSET.
	Ready []string
}

// HoldsTasks is a process's per-task diagnoses as one holds document
// (`holds --app`, `--tasks`, and the web pages): its roots and heads say
// their task. names names a failed-closed record's channel.
func HoldsTasks(app string, reps []TaskHolds, up *Upstream, now time.Time, names *clock.Names, opts HoldsOptions) HoldsJSON {
	merged := Holds(&inspect.Report{Now: now}, opts)
	merged.App, merged.Upstream = app, up
	merged.Tasks = []HoldsTask{}
	for _, r := range reps {
		j := Holds(r.Rep, opts)
		task := r.Task
		for i := range j.Roots {
			j.Roots[i].Task = &task
		}
		for i := range j.Heads {
			j.Heads[i].Task = &task
		}
		merged.HeldHeads += j.HeldHeads
		merged.HeldRecords += j.HeldRecords
		merged.Roots = append(merged.Roots, j.Roots...)
		merged.Heads = append(merged.Heads, j.Heads...)
		merged.Cycles = append(merged.Cycles, j.Cycles...)
		jt := HoldsTask{Task: task, Scope: r.Scope, HeldHeads: j.HeldHeads, HeldRecords: j.HeldRecords, BehindTransactionFrom: r.BehindFrom, Ready: r.Ready}
		if f := r.Failed; f != nil {
			jt.FailedClosed = FailedClosedOf(f, names)
		}
		merged.Tasks = append(merged.Tasks, jt)
	}
	return merged
}
