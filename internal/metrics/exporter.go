package metrics

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/tracker"
)

// Processes gives the latest snapshot of the Parsley processes `causalctl
// exporter` follows; *tracker.Tracker is one.
type Processes interface {
	// Latest returns the latest snapshot, false before the first. The
	// snapshot is shared: it is read, never changed.
	Latest() (*tracker.Snapshot, bool)
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

	held, heldAge, heads, ready, assigned, corrupt, behind, failed *prometheus.Desc
	fedLag, committedLag, members, entries, refused, gap           *prometheus.Desc
	lastSuccess, errors, followed, refreshDuration                 *prometheus.Desc
	diagnosed, dropped, folded                                     *prometheus.Desc
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

		held:         desc("parsley_records_held", "Records the task holds in its ordering state, per topic (Parsley 0.1: records-held).", with("topic")...),
		heldAge:      desc("parsley_records_held_age_max_seconds", "Age of the task's oldest held record of the topic, since it was written (0 when none is held; Parsley 0.1: records-held-age-max-ms).", with("topic")...),
		heads:        desc("parsley_held_heads", "Held heads of the task by their own cause (inspect's classifier), as state and processes count them: those that stay held when the task is read on from its committed offsets. Only causes with a head are exported.", with("cause")...),
		ready:        desc("parsley_task_ready_heads", "Heads of the task's store that nothing blocks any more: the process delivers them as soon as the task runs (stopped, or unassigned); no held heads.", task...),
		assigned:     desc("parsley_task_assigned", "1 when a member of the process's group is assigned the task, else 0.", task...),
		corrupt:      desc("parsley_task_corrupt_entries", "Entries of the task's store that cannot be read.", task...),
		failed:       desc("parsley_task_failed_closed", "1 when the task, read on from the process's committed offsets, fails closed on a record whose parsley.causes header is undecodable (its next start is refused, UNDECODABLE_METADATA), else 0.", task...),
		behind:       desc("parsley_task_behind_transaction", "1 when the task's changelog partition could not be read to its end at the last refresh (an open transaction), else 0.", task...),
		fedLag:       desc("parsley_channel_fed_lag_records", "Records written to the channel (below its last stable offset) that the task was not fed yet.", with("topic", "partition")...),
		committedLag: desc("parsley_channel_committed_lag_records", "The channel's last stable offset less the process's committed offset: a consumer-lag exporter's lag.", with("topic", "partition")...),
		members:      desc("parsley_group_members", "Members of the process's consumer group.", "app"),
		entries:      desc("parsley_changelog_entries_read_total", "Entries of the process's ordering changelog the exporter read, tombstones included.", "app"),
		refused:      desc("parsley_process_start_refusals", "Refusals of this reason the process's next start would meet (parsley.CheckStart, docs/refusals.md); every reason has a series, 0 when none.", "app", "reason"),
		gap:          desc("parsley_changelog_gap", "1 when entries of the process's ordering changelog were deleted before the exporter read them (retention or DeleteRecords): its store cannot be rebuilt from the changelog and its task series are not exported; else 0.", "app"),

		lastSuccess:     desc("causalctl_exporter_last_refresh_success_timestamp_seconds", "When the exporter last read every process without error (Unix time)."),
		errors:          desc("causalctl_exporter_refresh_errors_total", "Failed reads of the cluster (discoveries and process refreshes)."),
		followed:        desc("causalctl_exporter_changelogs_followed", "Ordering changelogs the exporter follows."),
		refreshDuration: desc("causalctl_exporter_refresh_duration_seconds", "How long the exporter's latest refresh of every process took."),
		diagnosed:       desc("causalctl_exporter_tasks_diagnosed_total", "Task diagnoses: a refresh diagnoses only the tasks whose store, group or log facts changed."),
		folded:          desc("causalctl_exporter_tasks_folded", "Tasks this scrape folds, beyond --max-series (series by task and topic or channel, counted over the processes by application id and their tasks in order): their holds are one series pair of topic \"_other\" (the task's totals), without per-topic or lag series."),
		dropped:         desc("causalctl_exporter_channels_dropped", "Task channels this scrape exports no lag series of: beyond --metrics-max-channels, counted over the processes by application id, their tasks and channels in order."),
	}
}

// Describe sends the descriptions of every metric the collector exports.
func (c *ProcessCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.held, c.heldAge, c.heads, c.ready, c.assigned, c.corrupt, c.behind, c.failed, c.fedLag, c.committedLag, c.members, c.entries, c.refused, c.gap,
		c.lastSuccess, c.errors, c.followed, c.refreshDuration, c.diagnosed, c.dropped, c.folded,
	} {
		ch <- d
	}
}

// Collect sends the metrics of the latest snapshot; nothing before the
// first.
func (c *ProcessCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.src.Latest()
	if !ok {
		return
	}
	now := c.now()
	channels, dropped, series, folded := 0, 0, 0, 0
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, p := range s.Processes {
		gauge(c.gap, flag(p.Gap != ""), p.App)
		if p.Gap != "" {
			continue // a store missing entries: nothing of it is exported
		}
		gauge(c.members, float64(p.Members), p.App)
		ch <- prometheus.MustNewConstMetric(c.entries, prometheus.CounterValue, float64(p.EntriesRead), p.App)
		// Every reason, 0 included: an absent series must not read as ok.
		for _, r := range parsley.Reasons() {
			gauge(c.refused, float64(p.StartRefusals[r]), p.App, string(r))
		}
		for i := range p.Tasks {
			t := &p.Tasks[i]
			task := strconv.Itoa(int(t.Task))
			if folded > 0 || c.opts.MaxSeries > 0 && series+2*len(t.Topics)+2*len(t.Channels) > c.opts.MaxSeries {
				folded++
				c.foldedTask(gauge, p.App, task, t, now)
				continue
			}
			series += 2 * len(t.Topics)
			for _, th := range t.Topics {
				gauge(c.held, float64(th.Held), p.App, task, th.Topic)
				age := 0.0
				if th.Held > 0 && !th.OldestWritten.IsZero() {
					age = max(now.Sub(th.OldestWritten), 0).Seconds()
				}
				gauge(c.heldAge, age, p.App, task, th.Topic)
			}
			c.taskSeries(gauge, p.App, task, t)
			for _, chn := range t.Channels {
				if channels++; c.opts.MaxChannels > 0 && channels > c.opts.MaxChannels {
					dropped++
					continue
				}
				part := strconv.Itoa(int(chn.Partition))
				series += 2
				if chn.FedLag >= 0 {
					gauge(c.fedLag, float64(chn.FedLag), p.App, task, chn.Topic, part)
				}
				if chn.CommittedLag >= 0 {
					gauge(c.committedLag, float64(chn.CommittedLag), p.App, task, chn.Topic, part)
				}
			}
		}
	}
	if !s.LastSuccess.IsZero() {
		gauge(c.lastSuccess, float64(s.LastSuccess.UnixNano())/1e9)
	}
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(s.Errors))
	ch <- prometheus.MustNewConstMetric(c.diagnosed, prometheus.CounterValue, float64(s.Diagnosed))
	gauge(c.followed, float64(s.Followed))
	gauge(c.dropped, float64(dropped))
	gauge(c.folded, float64(folded))
	if folded > 0 && c.opts.Folded != nil {
		c.opts.Folded(folded)
	}
	gauge(c.refreshDuration, s.RefreshDuration.Seconds())
}

// foldedTask sends a folded task's series: its holds as one pair of
// topic OtherTopic (the held total and the oldest's age), and the series
// of the task itself; no lag series.
func (c *ProcessCollector) foldedTask(gauge func(*prometheus.Desc, float64, ...string), app, task string, t *tracker.Task, now time.Time) {
	if len(t.Topics) > 0 {
		age := 0.0
		for _, th := range t.Topics {
			if th.Held > 0 && !th.OldestWritten.IsZero() {
				age = max(age, now.Sub(th.OldestWritten).Seconds())
			}
		}
		gauge(c.held, float64(t.HeldCount()), app, task, OtherTopic)
		gauge(c.heldAge, age, app, task, OtherTopic)
	}
	c.taskSeries(gauge, app, task, t)
}

// taskSeries sends the series of task t itself: its heads by cause and
// its flags.
func (c *ProcessCollector) taskSeries(gauge func(*prometheus.Desc, float64, ...string), app, task string, t *tracker.Task) {
	for _, cause := range inspect.Causes() {
		if n := t.Heads[cause]; n > 0 {
			gauge(c.heads, float64(n), app, task, string(cause))
		}
	}
	gauge(c.ready, float64(t.Ready), app, task)
	gauge(c.assigned, flag(t.Assigned), app, task)
	gauge(c.corrupt, float64(t.Corrupt), app, task)
	gauge(c.behind, flag(t.BehindTransaction), app, task)
	gauge(c.failed, flag(t.FailedClosed != nil), app, task)
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ProcessHealth reports whether the exporter's refreshes work: "ok" while
// the latest succeeded or they have failed for at most bound; not ok
// before the first refresh ends, and once they have failed for longer.
func ProcessHealth(src Processes, bound time.Duration, now time.Time) (ok bool, why string) {
	s, have := src.Latest()
	switch {
	case !have:
		return false, "starting: no refresh yet"
	case s.FailingSince.IsZero():
		return true, "ok"
	case s.LastSuccess.IsZero() && now.Sub(s.FailingSince) <= bound:
		return false, "starting: " + s.LastError
	case now.Sub(s.FailingSince) > bound:
		return false, fmt.Sprintf("refreshes failing for %s: %s", now.Sub(s.FailingSince).Round(time.Second), s.LastError)
	}
	return true, fmt.Sprintf("ok: refreshes failing for %s: %s", now.Sub(s.FailingSince).Round(time.Second), s.LastError)
}

// NewProcessRegistry returns a registry of its own holding a
// ProcessCollector over src and the standard Go and process collectors.
func NewProcessRegistry(src Processes, now func() time.Time, opts Options) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		NewProcessCollector(src, now, opts),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// ProcessMux serves the exporter's endpoints: reg at /metrics as Handler
// does, and the exporter's health at /healthz (ProcessHealth: 200 "ok",
// 503 with the reason). A render serves every scrape of its snapshot:
// between refreshes, scrapes cost no render, and the held records' ages
// are those of the render. Prepare renders a new snapshot ahead of the
// scrapes.
type ProcessMux struct {
	*http.ServeMux
	renders *sharedRenders
}

// ProcessHandler returns the exporter's endpoints over reg and src.
func ProcessHandler(reg *prometheus.Registry, src Processes, bound time.Duration, now func() time.Time) *ProcessMux {
	if now == nil {
		now = time.Now
	}
	renders := shareRenders(promHandler(reg), processesKey(src), now, false)
	return &ProcessMux{ServeMux: serveMux(renders, func() (bool, string) { return ProcessHealth(src, bound, now()) }, "causalctl exporter"), renders: renders}
}

// Prepare renders the latest snapshot for each kind of scrape seen so far
// (their Accept and Accept-Encoding headers), so that the next scrapes
// are served at once; nothing when no scrape came since the last Prepare.
// The exporter calls it after each refresh.
func (m *ProcessMux) Prepare() { m.renders.prepare() }
