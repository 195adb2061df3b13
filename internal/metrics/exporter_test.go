package metrics

import (
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
)

// fixedProcesses serves whatever tracker snapshot the test sets.
type fixedProcesses struct {
	mu sync.Mutex
	s  *fleet.Snapshot
}

func (f *fixedProcesses) Latest() (*fleet.Snapshot, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, f.s != nil
}

func (f *fixedProcesses) set(s *fleet.Snapshot) {
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
}

// scrapeTime is the collector's clock in these tests.
var scrapeTime = time.Unix(1700000600, 0)

// notifierSnapshot is a snapshot of one process, notifier: task 0 holds
// nothing and is assigned; task 1 holds 2 payments (the oldest written
// 10 minutes before the scrape) and 5 shipments (the oldest without a
// timestamp), its heads one beyond the log end and one ready, and no
// member runs it; payments/1's lags are known, shipments/1's log end not;
// its next start would meet two POSITIONS_DISCARDED_UNREAD refusals.
func notifierSnapshot() *fleet.Snapshot {
	return &fleet.Snapshot{
		Taken:           time.Unix(1700000595, 0),
		LastSuccess:     time.Unix(1700000595, 0),
		Errors:          3,
		RefreshDuration: 250 * time.Millisecond,
		Followed:        1,
		Diagnosed:       7,
		Processes: []fleet.Process{{
			App: "notifier", Changelog: "notifier-__parsley.ordering-changelog", GroupState: "Stable", Members: 1, EntriesRead: 42,
			StartRefusals: map[parsley.Reason]int{parsley.ReasonPositionsDiscarded: 2},
			Retention: []fleet.RetentionClock{
				{Topic: "orders", Partition: 0, Read: 40, Headroom: 30, DeletesAt: scrapeTime.Add(90 * time.Minute), Known: true},
				{Topic: "orders", Partition: 1, Read: 3, Headroom: -2},
			},
			Tasks: []fleet.Task{
				{Task: 0, Assigned: true, Topics: []fleet.TopicHolds{{Topic: "payments"}}, Heads: map[inspect.Cause]int{},
					Channels: []fleet.Channel{{Topic: "payments", Partition: 0, FedLag: 0, CommittedLag: 0}}},
				{Task: 1, Topics: []fleet.TopicHolds{
					{Topic: "payments", Held: 2, OldestWritten: scrapeTime.Add(-10 * time.Minute)},
					{Topic: "shipments", Held: 5},
				}, Heads: map[inspect.Cause]int{inspect.CauseBeyondLogEnd: 1, inspect.CauseReady: 1},
					Channels: []fleet.Channel{
						{Topic: "payments", Partition: 1, FedLag: 4, CommittedLag: 6},
						{Topic: "shipments", Partition: 1, FedLag: -1, CommittedLag: -1},
					},
					Corrupt: 2, BehindTransaction: true, ReadOnPartial: true},
			},
		}},
	}
}

// TestProcessCollector: a fixture snapshot renders as exactly these
// series — per task and topic the held records and the oldest's age to
// the scrape's clock, heads only for the causes they have, lags only
// where known, a start-refusal series per reason (0 for those it has not),
// the exporter's health.
func TestProcessCollector(t *testing.T) {
	src := &fixedProcesses{}
	src.set(notifierSnapshot())
	c := NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{})
	want := `
# HELP causalctl_exporter_channels_dropped Task channels this scrape exports no lag series of: beyond --metrics-max-channels, counted over the processes by application id, their tasks and channels in order.
# TYPE causalctl_exporter_channels_dropped gauge
causalctl_exporter_channels_dropped 0
# HELP causalctl_exporter_changelogs_followed Ordering changelogs the exporter follows.
# TYPE causalctl_exporter_changelogs_followed gauge
causalctl_exporter_changelogs_followed 1
# HELP causalctl_exporter_last_refresh_success_timestamp_seconds When the exporter last read every process without error (Unix time).
# TYPE causalctl_exporter_last_refresh_success_timestamp_seconds gauge
causalctl_exporter_last_refresh_success_timestamp_seconds 1.700000595e+09
# HELP causalctl_exporter_refresh_duration_seconds How long the exporter's latest refresh of every process took.
# TYPE causalctl_exporter_refresh_duration_seconds gauge
causalctl_exporter_refresh_duration_seconds 0.25
# HELP causalctl_exporter_refusals_folded Processes this scrape exports the start refusals of only by the reasons met, with a total (parsley_process_start_refusals_all), beyond --max-series.
# TYPE causalctl_exporter_refusals_folded gauge
causalctl_exporter_refusals_folded 0
# HELP causalctl_exporter_refresh_errors_total Failed reads of the cluster (discoveries and process refreshes).
# TYPE causalctl_exporter_refresh_errors_total counter
causalctl_exporter_refresh_errors_total 3
# HELP causalctl_exporter_series_escaped Series this scrape exports with a label value escaped (an application id or topic name that is not valid UTF-8 or holds control characters, written as Go escapes such as \\xff).
# TYPE causalctl_exporter_series_escaped gauge
causalctl_exporter_series_escaped 0
# HELP causalctl_exporter_tasks_diagnosed_total Task diagnoses: a refresh diagnoses only the tasks whose store, group or log facts changed.
# TYPE causalctl_exporter_tasks_diagnosed_total counter
causalctl_exporter_tasks_diagnosed_total 7
# HELP causalctl_exporter_tasks_folded Tasks this scrape folds, beyond --max-series (series by task and topic or channel, counted over the processes by application id and their tasks in order): their holds are one series pair of topic "_other" (the task's totals), without per-topic or lag series.
# TYPE causalctl_exporter_tasks_folded gauge
causalctl_exporter_tasks_folded 0
# HELP parsley_changelog_entries_read_total Entries of the process's ordering changelog the exporter read, tombstones included.
# TYPE parsley_changelog_entries_read_total counter
parsley_changelog_entries_read_total{app="notifier"} 42
# HELP parsley_changelog_gap 1 when entries of the process's ordering changelog were deleted before the exporter read them (retention or DeleteRecords): its store cannot be rebuilt from the changelog and its task series are not exported; else 0.
# TYPE parsley_changelog_gap gauge
parsley_changelog_gap{app="notifier"} 0
# HELP parsley_channel_committed_lag_records The channel's last stable offset less the process's committed offset: a consumer-lag exporter's lag.
# TYPE parsley_channel_committed_lag_records gauge
parsley_channel_committed_lag_records{app="notifier",partition="0",task="0",topic="payments"} 0
parsley_channel_committed_lag_records{app="notifier",partition="1",task="1",topic="payments"} 6
# HELP parsley_channel_fed_lag_records Records written to the channel (below its last stable offset) that the task was not fed yet.
# TYPE parsley_channel_fed_lag_records gauge
parsley_channel_fed_lag_records{app="notifier",partition="0",task="0",topic="payments"} 0
parsley_channel_fed_lag_records{app="notifier",partition="1",task="1",topic="payments"} 4
# HELP parsley_group_members Members of the process's consumer group.
# TYPE parsley_group_members gauge
parsley_group_members{app="notifier"} 1
# HELP parsley_held_heads Held heads of the task by their own cause (inspect's classifier), as state and processes count them: those that stay held when the task is read on from its committed offsets. Only causes with a head are exported.
# TYPE parsley_held_heads gauge
parsley_held_heads{app="notifier",cause="beyond-log-end",task="1"} 1
parsley_held_heads{app="notifier",cause="ready",task="1"} 1
# HELP parsley_channel_retention_headroom_positions The process's read position on the partition less its log start: the positions retention may still delete before the next fetch refuses (POSITIONS_DISCARDED_UNREAD); negative once it has passed. Only partitions with records past the read position.
# TYPE parsley_channel_retention_headroom_positions gauge
parsley_channel_retention_headroom_positions{app="notifier",partition="0",topic="orders"} 30
parsley_channel_retention_headroom_positions{app="notifier",partition="1",topic="orders"} -2
# HELP parsley_channel_retention_headroom_seconds Time until retention may delete the record at the process's read position on the partition (its timestamp plus retention.ms, less now): the retention clock of a stopped or lagging process (docs/refusals.md); negative once it may go. Only partitions with records past the read position, on topics with a time limit, whose record's timestamp is known.
# TYPE parsley_channel_retention_headroom_seconds gauge
parsley_channel_retention_headroom_seconds{app="notifier",partition="0",topic="orders"} 5400
# HELP parsley_process_start_refusal_restart_clears For each reason the process's next start would meet: 1 when a restart alone clears it as things stand (the runbook's triage table: PARTITION_ADDED, COVERED_POSITION_FED), 0 when an operator must act first (fix the cluster, the declaration or the code, or reset; docs/refusals.md).
# TYPE parsley_process_start_refusal_restart_clears gauge
parsley_process_start_refusal_restart_clears{app="notifier",reason="POSITIONS_DISCARDED_UNREAD"} 0
# HELP parsley_process_start_refusals Refusals of this reason the process's next start would meet (parsley.CheckStart, docs/refusals.md); every reason has a series, 0 when none, except beyond --max-series: there only the reasons met.
# TYPE parsley_process_start_refusals gauge
parsley_process_start_refusals{app="notifier",reason="CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES"} 0
parsley_process_start_refusals{app="notifier",reason="CHANNEL_IDENTITY_CHANGED"} 0
parsley_process_start_refusals{app="notifier",reason="CHANNEL_REMOVED_WITH_HELD_MESSAGES"} 0
parsley_process_start_refusals{app="notifier",reason="METADATA_BUDGET_EXCEEDED"} 0
parsley_process_start_refusals{app="notifier",reason="ORDERING_STATE_LOST"} 0
parsley_process_start_refusals{app="notifier",reason="OUT_OF_ORDER_FEED"} 0
parsley_process_start_refusals{app="notifier",reason="PARTITION_ADDED"} 0
parsley_process_start_refusals{app="notifier",reason="POSITIONS_DISCARDED_UNREAD"} 2
parsley_process_start_refusals{app="notifier",reason="SOURCE_TOPIC_MISSING"} 0
parsley_process_start_refusals{app="notifier",reason="SUBSTRATE_MISCONFIGURED"} 0
parsley_process_start_refusals{app="notifier",reason="UNDECODABLE_METADATA"} 0
parsley_process_start_refusals{app="notifier",reason="TASK_WIDTH_CHANGED"} 0
parsley_process_start_refusals{app="notifier",reason="UNKNOWN_ORDERING_STATE_FORMAT"} 0
# HELP parsley_records_held Records the task holds in its ordering state, per topic (Parsley 0.1: records-held).
# TYPE parsley_records_held gauge
parsley_records_held{app="notifier",task="0",topic="payments"} 0
parsley_records_held{app="notifier",task="1",topic="payments"} 2
parsley_records_held{app="notifier",task="1",topic="shipments"} 5
# HELP parsley_records_held_age_max_seconds Age of the task's oldest held record of the topic, since it was written (0 when none is held; Parsley 0.1: records-held-age-max-ms).
# TYPE parsley_records_held_age_max_seconds gauge
parsley_records_held_age_max_seconds{app="notifier",task="0",topic="payments"} 0
parsley_records_held_age_max_seconds{app="notifier",task="1",topic="payments"} 600
parsley_records_held_age_max_seconds{app="notifier",task="1",topic="shipments"} 0
# HELP parsley_task_assigned 1 when a member of the process's group is assigned the task, else 0.
# TYPE parsley_task_assigned gauge
parsley_task_assigned{app="notifier",task="0"} 1
parsley_task_assigned{app="notifier",task="1"} 0
# HELP parsley_task_behind_transaction 1 when the task's changelog partition could not be read to its end at the last refresh (an open transaction), else 0.
# TYPE parsley_task_behind_transaction gauge
parsley_task_behind_transaction{app="notifier",task="0"} 0
parsley_task_behind_transaction{app="notifier",task="1"} 1
# HELP parsley_task_corrupt_entries Entries of the task's store that cannot be read.
# TYPE parsley_task_corrupt_entries gauge
parsley_task_corrupt_entries{app="notifier",task="0"} 0
parsley_task_corrupt_entries{app="notifier",task="1"} 2
# HELP parsley_task_ready_heads Heads of the task's store that nothing blocks any more: the process delivers them as soon as the task runs (stopped, or unassigned); no held heads.
# TYPE parsley_task_ready_heads gauge
parsley_task_ready_heads{app="notifier",task="0"} 0
parsley_task_ready_heads{app="notifier",task="1"} 0
# HELP parsley_task_failed_closed 1 when the task, read on from the process's committed offsets, fails closed on a record whose parsley.causes header is undecodable (its next start is refused, UNDECODABLE_METADATA), else 0.
# TYPE parsley_task_failed_closed gauge
parsley_task_failed_closed{app="notifier",task="0"} 0
parsley_task_failed_closed{app="notifier",task="1"} 0
# HELP parsley_task_read_on_partial 1 when the task's read on from the process's committed offsets stopped at --read-on-max-records before the log end at its last diagnosis: its held heads and causes are of what was read, not guessed past (PARTIAL), else 0.
# TYPE parsley_task_read_on_partial gauge
parsley_task_read_on_partial{app="notifier",task="0"} 0
parsley_task_read_on_partial{app="notifier",task="1"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestProcessCollectorBeforeFirstRefresh: nothing is exported before the
// tracker's first snapshot — no zero that would read as "nothing held".
func TestProcessCollectorBeforeFirstRefresh(t *testing.T) {
	c := NewProcessCollector(&fixedProcesses{}, func() time.Time { return scrapeTime }, Options{})
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series before the first refresh", n)
	}
}

// TestProcessHealth: /healthz is 503 before the first refresh, 200 while
// refreshes work and while they have failed for at most the bound, 503
// once they have failed for longer, and 200 again after a success.
func TestProcessHealth(t *testing.T) {
	src := &fixedProcesses{}
	now := scrapeTime
	h := NewEndpoint(FleetSource(src, HealthBounds{Failing: time.Minute}, func() time.Time { return now }, Options{}), "causalctl exporter", func() time.Time { return now })
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	check := func(what string, wantCode int, wantBody string) {
		t.Helper()
		if code, body := get(); code != wantCode || !strings.HasPrefix(body, wantBody) {
			t.Errorf("%s: %d %q, want %d %q…", what, code, body, wantCode, wantBody)
		}
	}
	check("before the first refresh", 503, "starting: no refresh yet")

	s := notifierSnapshot()
	src.set(s)
	check("refreshing", 200, "ok")

	failing := *s
	failing.FailingSince, failing.LastError = now.Add(-30*time.Second), "notifier: describing group: broken"
	src.set(&failing)
	check("failing within the bound", 200, "ok: refreshes failing for 30s: notifier: describing group: broken")
	now = now.Add(31 * time.Second)
	check("failing past the bound", 503, "refreshes failing for 1m1s: notifier: describing group: broken")

	never := fleet.Snapshot{FailingSince: now.Add(-10 * time.Second), LastError: "dial: refused"}
	src.set(&never)
	check("never refreshed, failing", 503, "starting: dial: refused")

	src.set(s)
	check("refreshing again", 200, "ok")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `parsley_records_held{app="notifier",task="1",topic="shipments"} 5`) {
		t.Errorf("/metrics lacks the held shipments:\n%s", rec.Body.String())
	}
}

// TestProcessCollectorGap: a process whose changelog lost entries before
// they were read exports that, and nothing of the tasks it had; the
// others are exported as usual.
func TestProcessCollectorGap(t *testing.T) {
	src := &fixedProcesses{}
	s := notifierSnapshot()
	s.Processes = append([]fleet.Process{{App: "gapped", Changelog: "gapped-__parsley.ordering-changelog", Members: 1, EntriesRead: 9,
		Gap: "offsets 0 to 99 … were deleted", Tasks: []fleet.Task{{Task: 0, Topics: []fleet.TopicHolds{{Topic: "orders", Held: 3}}}}}}, s.Processes...)
	src.set(s)
	c := NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{})
	want := `
# HELP parsley_changelog_gap 1 when entries of the process's ordering changelog were deleted before the exporter read them (retention or DeleteRecords): its store cannot be rebuilt from the changelog and its task series are not exported; else 0.
# TYPE parsley_changelog_gap gauge
parsley_changelog_gap{app="gapped"} 1
parsley_changelog_gap{app="notifier"} 0
# HELP parsley_group_members Members of the process's consumer group.
# TYPE parsley_group_members gauge
parsley_group_members{app="notifier"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "parsley_changelog_gap", "parsley_group_members"); err != nil {
		t.Error(err)
	}
	alone := &fixedProcesses{}
	alone.set(notifierSnapshot())
	count := func(src Processes) int {
		n, err := testutil.GatherAndCount(registryOf(t, NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{})),
			"parsley_records_held", "parsley_process_start_refusals", "parsley_group_members")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if with, without := count(src), count(alone); with != without {
		t.Errorf("%d held, refusal and member series with the gapped process, %d without: its series are exported", with, without)
	}
}

func registryOf(t *testing.T, c prometheus.Collector) *prometheus.Registry {
	t.Helper()
	r := prometheus.NewPedanticRegistry()
	if err := r.Register(c); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWebInfo: the exporter's pages' external URL is a label of
// causalctl_exporter_web_info, which the alert rules link with; no series
// without one.
func TestWebInfo(t *testing.T) {
	src := &fixedProcesses{s: &fleet.Snapshot{Processes: []fleet.Process{{App: "a"}}}}
	for _, u := range []string{"", "https://ops.example/causalctl"} {
		mfs, err := NewRegistry(FleetSource(src, HealthBounds{}, nil, Options{ExternalURL: u})).Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, mf := range mfs {
			if mf.GetName() == "causalctl_exporter_web_info" {
				for _, m := range mf.GetMetric() {
					got = append(got, m.GetLabel()[0].GetValue())
				}
			}
		}
		if want := []string{u}; (u == "" && len(got) != 0) || (u != "" && !slices.Equal(got, want)) {
			t.Errorf("external URL %q: web_info series %q", u, got)
		}
	}
}
