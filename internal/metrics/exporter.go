package metrics

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/upstream"
)

// Processes gives the latest snapshot of the Parsley processes `causalctl
// exporter` follows; *fleet.Refresher is one.
type Processes interface {
	// Latest returns the latest snapshot, false before the first. The
	// snapshot is shared: it is read, never changed.
	Latest() (*fleet.Snapshot, bool)
}

// ProcessCollector is a prometheus.Collector over the latest snapshot of
// every Parsley process the exporter follows: per process and task (the
// app and task labels) what the ordering changelog holds, and the
// exporter's own health. It renders the snapshot and decides nothing; the
// one computation at collection is a held record's age, the clock's now
// less the record's timestamp (ProcessMux collects once a snapshot).
type ProcessCollector struct {
	src  Processes
	now  func() time.Time
	opts Options

	held, heldAge, heads, ready, assigned, corrupt, behind, failed, partial *prometheus.Desc
	fedLag, committedLag, members, entries, refused, gap                    *prometheus.Desc
	refusedTotal, upstreamRoot, restartClears, headroomSecs, headroomPos    *prometheus.Desc
	lastSuccess, errors, followed, refreshDuration                          *prometheus.Desc
	diagnosed, dropped, folded, refusalsFolded, escaped, webInfo            *prometheus.Desc
}

// NewProcessCollector returns a ProcessCollector over src; ages are
// measured to now (time.Now when nil). opts.MaxChannels bounds the
// channels (of every process's tasks, in order) with lag series,
// opts.MaxSeries the series by task and topic or channel.
func NewProcessCollector(src Processes, now func() time.Time, opts Options) *ProcessCollector {
	if now == nil {
		now = time.Now
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	task := []string{"app", "task"}
	with := func(labels ...string) []string { return append(slices.Clone(task), labels...) }
	return &ProcessCollector{
		src:  src,
		now:  now,
		opts: opts,

		held:          desc("parsley_records_held", "Records the task holds in its ordering state, per topic (Parsley 0.1: records-held).", with("topic")...),
		heldAge:       desc("parsley_records_held_age_max_seconds", "Age of the task's oldest held record of the topic, since it was written (0 when none is held; Parsley 0.1: records-held-age-max-ms).", with("topic")...),
		heads:         desc("parsley_held_heads", "Held heads of the task by their own cause (inspect's classifier), as state and processes count them: those that stay held when the task is read on from its committed offsets. Only causes with a head are exported.", with("cause")...),
		ready:         desc("parsley_task_ready_heads", "Heads of the task's store that nothing blocks any more: the process delivers them as soon as the task runs (stopped, or unassigned); no held heads.", task...),
		assigned:      desc("parsley_task_assigned", "1 when a member of the process's group is assigned the task, else 0.", task...),
		corrupt:       desc("parsley_task_corrupt_entries", "Entries of the task's store that cannot be read.", task...),
		failed:        desc("parsley_task_failed_closed", "1 when the task, read on from the process's committed offsets, fails closed on a record whose parsley.causes header is undecodable (its next start is refused, UNDECODABLE_METADATA), else 0.", task...),
		upstreamRoot:  desc("parsley_task_upstream_root", "1 for the stuck process upstream that the task's held heads wait on (docs/fleet.md): upstream is its application id (the processes of a cycle, joined by >), reason why it is stuck (refusing REASON, failed-closed CODE, stopped, holding, cycle); no series when there is none.", with("upstream", "reason")...),
		partial:       desc("parsley_task_read_on_partial", "1 when the task's read on from the process's committed offsets stopped at --read-on-max-records before the log end at its last diagnosis: its held heads and causes are of what was read, not guessed past (PARTIAL), else 0.", task...),
		behind:        desc("parsley_task_behind_transaction", "1 when the task's changelog partition could not be read to its end at the last refresh (an open transaction), else 0.", task...),
		fedLag:        desc("parsley_channel_fed_lag_records", "Records written to the channel (below its last stable offset) that the task was not fed yet.", with("topic", "partition")...),
		committedLag:  desc("parsley_channel_committed_lag_records", "The channel's last stable offset less the process's committed offset: a consumer-lag exporter's lag.", with("topic", "partition")...),
		members:       desc("parsley_group_members", "Members of the process's consumer group.", "app"),
		entries:       desc("parsley_changelog_entries_read_total", "Entries of the process's ordering changelog the exporter read, tombstones included.", "app"),
		refused:       desc("parsley_process_start_refusals", "Refusals of this reason the process's next start would meet (parsley.CheckStart, docs/refusals.md); every reason has a series, 0 when none, except beyond --max-series: there only the reasons met.", "app", "reason"),
		refusedTotal:  desc("parsley_process_start_refusals_all", "Refusals of every reason the process's next start would meet, for a process beyond --max-series, whose start refusals are exported only by the reasons met (0: it would start).", "app"),
		restartClears: desc("parsley_process_start_refusal_restart_clears", "For each reason the process's next start would meet: 1 when a restart alone clears it as things stand (the runbook's triage table: PARTITION_ADDED, COVERED_POSITION_FED), 0 when an operator must act first (fix the cluster, the declaration or the code, or reset; docs/refusals.md).", "app", "reason"),
		headroomSecs:  desc("parsley_channel_retention_headroom_seconds", "Time until retention may delete the record at the process's read position on the partition (its timestamp plus retention.ms, less now): the retention clock of a stopped or lagging process (docs/refusals.md); negative once it may go. Only partitions with records past the read position, on topics with a time limit, whose record's timestamp is known.", "app", "topic", "partition"),
		headroomPos:   desc("parsley_channel_retention_headroom_positions", "The process's read position on the partition less its log start: the positions retention may still delete before the next fetch refuses (POSITIONS_DISCARDED_UNREAD); negative once it has passed. Only partitions with records past the read position.", "app", "topic", "partition"),
		gap:           desc("parsley_changelog_gap", "1 when entries of the process's ordering changelog were deleted before the exporter read them (retention or DeleteRecords): its store cannot be rebuilt from the changelog and its task series are not exported; else 0.", "app"),

		lastSuccess:     desc("causalctl_exporter_last_refresh_success_timestamp_seconds", "When the exporter last read every process without error (Unix time)."),
		errors:          desc("causalctl_exporter_refresh_errors_total", "Failed reads of the cluster (discoveries and process refreshes)."),
		followed:        desc("causalctl_exporter_changelogs_followed", "Ordering changelogs the exporter follows."),
		refreshDuration: desc("causalctl_exporter_refresh_duration_seconds", "How long the exporter's latest refresh of every process took."),
		diagnosed:       desc("causalctl_exporter_tasks_diagnosed_total", "Task diagnoses: a refresh diagnoses only the tasks whose store, group or log facts changed."),
		folded:          desc("causalctl_exporter_tasks_folded", "Tasks this scrape folds, beyond --max-series (series by task and topic or channel, counted over the processes by application id and their tasks in order): their holds are one series pair of topic \"_other\" (the task's totals), without per-topic or lag series."),
		refusalsFolded:  desc("causalctl_exporter_refusals_folded", "Processes this scrape exports the start refusals of only by the reasons met, with a total (parsley_process_start_refusals_all), beyond --max-series."),
		escaped:         desc("causalctl_exporter_series_escaped", "Series this scrape exports with a label value escaped (an application id or topic name that is not valid UTF-8 or holds control characters, written as Go escapes such as \\xff)."),
		webInfo:         desc("causalctl_exporter_web_info", "1, with external_url where people reach the exporter's pages (--web.external-url): the alert rules link each alert to its process's page with it. No series without --web.external-url.", "external_url"),
		dropped:         desc("causalctl_exporter_channels_dropped", "Task channels this scrape exports no lag series of: beyond --metrics-max-channels, counted over the processes by application id, their tasks and channels in order."),
	}
}

// Describe sends the descriptions of every metric the collector exports.
func (c *ProcessCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.held, c.heldAge, c.heads, c.ready, c.assigned, c.corrupt, c.behind, c.failed, c.partial, c.fedLag, c.committedLag, c.members, c.entries, c.refused, c.gap,
		c.refusedTotal, c.upstreamRoot, c.restartClears, c.headroomSecs, c.headroomPos, c.lastSuccess, c.errors, c.followed, c.refreshDuration, c.diagnosed, c.dropped, c.folded, c.refusalsFolded, c.escaped, c.webInfo,
	} {
		ch <- d
	}
}

// Collect sends the metrics of the latest snapshot; nothing before the
// first. It cannot panic on what the snapshot holds (emitter).
func (c *ProcessCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.src.Latest()
	if !ok {
		return
	}
	now := c.now()
	e := &emitter{ch: ch}
	b := &seriesBudget{max: c.opts.MaxSeries}
	channels, dropped, folded, refusalsFolded := 0, 0, 0, 0
	reasons := parsley.Reasons()
	for _, p := range s.Processes {
		e.gauge(c.gap, flag(p.Gap != ""), p.App)
		if p.Gap != "" {
			continue // a store missing entries: nothing of it is exported
		}
		e.gauge(c.members, float64(p.Members), p.App)
		e.counter(c.entries, float64(p.EntriesRead), p.App)
		for i := range p.Tasks {
			t := &p.Tasks[i]
			task := strconv.Itoa(int(t.Task))
			if !b.fits(2*len(t.Topics) + 2*len(t.Channels)) {
				folded++
				c.foldedTask(e, p.App, task, t, now)
				continue
			}
			b.take(2 * len(t.Topics))
			for _, th := range t.Topics {
				e.gauge(c.held, float64(th.Held), p.App, task, th.Topic)
				age := 0.0
				if th.Held > 0 && !th.OldestWritten.IsZero() {
					age = max(now.Sub(th.OldestWritten), 0).Seconds()
				}
				e.gauge(c.heldAge, age, p.App, task, th.Topic)
			}
			c.taskSeries(e, p.App, task, t)
			for _, chn := range t.Channels {
				if channels++; c.opts.MaxChannels > 0 && channels > c.opts.MaxChannels {
					dropped++
					continue
				}
				part := strconv.Itoa(int(chn.Partition))
				b.take(2)
				e.position(c.fedLag, float64(chn.FedLag), chn.FedLag >= 0, p.App, task, chn.Topic, part)
				e.position(c.committedLag, float64(chn.CommittedLag), chn.CommittedLag >= 0, p.App, task, chn.Topic, part)
			}
		}
		for _, rc := range p.Retention {
			part := strconv.Itoa(int(rc.Partition))
			e.position(c.headroomPos, float64(rc.Headroom), true, p.App, rc.Topic, part)
			e.position(c.headroomSecs, rc.DeletesAt.Sub(now).Seconds(), rc.Known, p.App, rc.Topic, part)
		}
		for _, r := range reasons {
			if p.StartRefusals[r] > 0 {
				e.gauge(c.restartClears, flag(r.Triage().Clears), p.App, string(r))
			}
		}
		// Every reason, 0 included: an absent series must not read as ok.
		// Past --max-series (a series per reason of 5 000 processes is 35
		// 000), only the reasons met, and the process's total, which says
		// its 0.
		if b.fits(len(reasons)) {
			b.take(len(reasons))
			for _, r := range reasons {
				e.gauge(c.refused, float64(p.StartRefusals[r]), p.App, string(r))
			}
			continue
		}
		refusalsFolded++
		total := 0
		for _, r := range reasons {
			if n := p.StartRefusals[r]; n > 0 {
				e.gauge(c.refused, float64(n), p.App, string(r))
				total += n
			}
		}
		e.gauge(c.refusedTotal, float64(total), p.App)
	}
	e.position(c.lastSuccess, float64(s.LastSuccess.UnixNano())/1e9, !s.LastSuccess.IsZero())
	e.counter(c.errors, float64(s.Errors))
	e.counter(c.diagnosed, float64(s.Diagnosed))
	e.gauge(c.followed, float64(s.Followed))
	e.gauge(c.dropped, float64(dropped))
	e.gauge(c.folded, float64(folded))
	e.gauge(c.refusalsFolded, float64(refusalsFolded))
	if (folded > 0 || refusalsFolded > 0) && c.opts.Folded != nil {
		c.opts.Folded(folded, refusalsFolded)
	}
	e.gauge(c.refreshDuration, s.RefreshDuration.Seconds())
	e.gauge(c.escaped, float64(e.escaped))
	if u := c.opts.ExternalURL; u != "" {
		e.gauge(c.webInfo, 1, u)
	}
}

// seriesBudget counts series against --max-series (0: no bound): the
// first group of series that would pass it, and every group after it, is
// folded.
type seriesBudget struct {
	max, used int
	over      bool
}

// fits reports whether n more series fit.
func (b *seriesBudget) fits(n int) bool {
	if b.max > 0 && b.used+n > b.max {
		b.over = true
	}
	return !b.over
}

func (b *seriesBudget) take(n int) { b.used += n }

// foldedTask sends a folded task's series: its holds as one pair of
// topic OtherTopic (the held total and the oldest's age), and the series
// of the task itself; no lag series.
func (c *ProcessCollector) foldedTask(e *emitter, app, task string, t *fleet.Task, now time.Time) {
	if len(t.Topics) > 0 {
		age := 0.0
		for _, th := range t.Topics {
			if th.Held > 0 && !th.OldestWritten.IsZero() {
				age = max(age, now.Sub(th.OldestWritten).Seconds())
			}
		}
		e.gauge(c.held, float64(t.HeldCount()), app, task, OtherTopic)
		e.gauge(c.heldAge, age, app, task, OtherTopic)
	}
	c.taskSeries(e, app, task, t)
}

// taskSeries sends the series of task t itself: its heads by cause and
// its flags.
func (c *ProcessCollector) taskSeries(e *emitter, app, task string, t *fleet.Task) {
	for _, cause := range inspect.Causes() {
		if n := t.Heads[cause]; n > 0 {
			e.gauge(c.heads, float64(n), app, task, string(cause))
		}
	}
	e.gauge(c.ready, float64(t.Ready), app, task)
	e.gauge(c.assigned, flag(t.Assigned), app, task)
	e.gauge(c.corrupt, float64(t.Corrupt), app, task)
	e.gauge(c.behind, flag(t.BehindTransaction), app, task)
	e.gauge(c.failed, flag(t.FailedClosed != nil), app, task)
	e.gauge(c.partial, flag(t.ReadOnPartial), app, task)
	if r := t.Upstream; r != nil {
		up := r.App
		if r.Kind == upstream.Cycle {
			up = strings.Join(r.Cycle, ">")
		}
		e.gauge(c.upstreamRoot, 1, app, task, up, r.Reason())
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// HealthBounds are what the exporter's /healthz measures against.
type HealthBounds struct {
	// Failing is how long refreshes may fail (--unhealthy-after).
	Failing time.Duration
	// Refresh is the refresh interval. A refresh is due Refresh after the
	// last one ended; one still running Failing after that is failing as
	// surely as one that returned an error — a broker that does not
	// answer holds a refresh for the whole request timeout, and each one
	// after it. 0 leaves it out.
	Refresh time.Duration
}

// ProcessHealth reports whether the exporter's refreshes work: "ok" while
// the latest succeeded or they have failed for at most b.Failing; not ok
// before the first refresh ends, once they have failed for longer, and
// once no refresh has ended for b.Refresh + b.Failing.
func ProcessHealth(src Processes, b HealthBounds, now time.Time) (ok bool, why string) {
	s, have := src.Latest()
	if !have {
		return false, "starting: no refresh yet"
	}
	failing := now.Sub(s.FailingSince)
	switch {
	case !s.FailingSince.IsZero() && s.LastSuccess.IsZero() && failing <= b.Failing:
		return false, "starting: " + s.LastError
	case !s.FailingSince.IsZero() && failing > b.Failing:
		return false, fmt.Sprintf("refreshes failing for %s: %s", failing.Round(time.Second), s.LastError)
	case b.Refresh > 0 && !s.Taken.IsZero() && now.Sub(s.Taken) > b.Refresh+b.Failing:
		return false, fmt.Sprintf("no refresh ended for %s (every %s is due): one is still running, a broker not answering", now.Sub(s.Taken).Round(time.Second), b.Refresh)
	case !s.FailingSince.IsZero():
		return true, fmt.Sprintf("ok: refreshes failing for %s: %s", failing.Round(time.Second), s.LastError)
	}
	return true, "ok"
}
