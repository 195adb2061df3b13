package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/view"
)

// bigSnapshot is a live snapshot of n channels (topics of 100 partitions),
// every tenth holding a record.
func bigSnapshot(n int) view.Snapshot {
	s := view.Snapshot{State: engine.StateRunning, Taken: time.Unix(1700000000, 0), Scope: n}
	for k := range n {
		topic := "topic-" + strconv.Itoa(k/100)
		row := view.ChannelRow{Channel: topic + "/" + strconv.Itoa(k%100), TopicID: fmt.Sprintf("00000000-0000-0000-0000-%012d", k/100),
			Partition: int32(k % 100), Settled: int64(k), ReceivedUpTo: int64(k), LogEnd: int64(k + 1), HighWatermark: int64(k + 1), Head: -1}
		if k%10 == 0 {
			row.Held, row.Blocked, row.Head = 1, true, len(s.Heads)
			s.Heads = append(s.Heads, view.HeadDetail{Head: inspect.Head{Channel: row.Channel, Cause: inspect.CauseLagging}})
			s.HeldChannels++
		}
		s.Channels = append(s.Channels, row)
	}
	return s
}

// bigProcesses is an exporter snapshot of n processes of 8 tasks, each
// task consuming two topics of 8 partitions (a partition a task).
func bigProcesses(n int) *fleet.Snapshot {
	s := &fleet.Snapshot{Taken: time.Unix(1700000000, 0), Followed: n}
	for p := range n {
		proc := fleet.Process{App: "app-" + strconv.Itoa(p), Members: 1}
		for t := range 8 {
			task := fleet.Task{Task: int32(t), Assigned: true, Heads: map[inspect.Cause]int{inspect.CauseLagging: 1}}
			for _, topic := range []string{"in-" + strconv.Itoa(p), "side-" + strconv.Itoa(p)} {
				task.Topics = append(task.Topics, fleet.TopicHolds{Topic: topic, Held: 1, OldestWritten: time.Unix(1699999000, 0)})
				task.Channels = append(task.Channels, fleet.Channel{Topic: topic, Partition: int32(t), FedLag: 3, CommittedLag: 4})
			}
			proc.Tasks = append(proc.Tasks, task)
		}
		s.Processes = append(s.Processes, proc)
	}
	return s
}

// discard is a ResponseWriter that keeps only the body's size.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// scrapeAll runs parallel scrapes of h at once, as Prometheus asks
// (OpenMetrics, gzip), and returns the bodies' sizes.
func scrapeAll(h http.Handler, parallel int) []int {
	sizes := make([]int, parallel)
	var wg sync.WaitGroup
	for i := range parallel {
		wg.Go(func() {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
			req.Header.Set("Accept-Encoding", "gzip")
			w := &discard{h: http.Header{}}
			h.ServeHTTP(w, req)
			sizes[i] = w.n
		})
	}
	wg.Wait()
	return sizes
}

// BenchmarkScrape scrapes watch's endpoint over 20 000 channels (120 000
// per-channel series without a cap) and the exporter's over 500 processes
// of 8 tasks (8 000 task channels), one scrape at a time and 10 at once,
// without a series cap and at the default one. One op is the whole round,
// over a snapshot no round before it scraped; B/op is what the round
// allocates.
func BenchmarkScrape(b *testing.B) {
	lives := []view.Snapshot{bigSnapshot(20000), bigSnapshot(20000)}
	procs := []*fleet.Snapshot{bigProcesses(500), bigProcesses(500)}
	for _, name := range []string{"watch", "exporter"} {
		for _, limit := range []int{0, DefaultMaxChannels} {
			for _, parallel := range []int{1, 10} {
				b.Run(fmt.Sprintf("%s/max=%d/parallel=%d", name, limit, parallel), func(b *testing.B) {
					live, proc := &fixed{}, &fixedProcesses{}
					h := http.Handler(NewEndpoint(LiveSource(live, Options{MaxChannels: limit}, nil), "causalctl", nil))
					if name == "exporter" {
						h = NewEndpoint(FleetSource(proc, HealthBounds{Failing: time.Minute}, nil, Options{MaxChannels: limit}), "causalctl exporter", nil)
					}
					b.ReportAllocs()
					var sizes []int
					round := 0
					for b.Loop() {
						live.set(lives[round%2])
						proc.set(procs[round%2])
						round++
						sizes = scrapeAll(h, parallel)
					}
					b.ReportMetric(float64(sizes[0]), "body-B")
				})
			}
		}
	}
}

// TestCollectorMaxChannels: over the cap, the held channels get their
// series first, then the others in channel order, and the gauge counts
// the channels left out — the snapshot's omitted rows too.
func TestCollectorMaxChannels(t *testing.T) {
	s := bigSnapshot(30) // rows 0, 10 and 20 hold a record
	s.Scope = 35         // five more beyond the snapshot's row cap
	src := &fixed{}
	src.set(s)
	for _, c := range []struct {
		max     int
		want    []string // partitions of topic-0 with series
		dropped float64
	}{
		{0, nil, 5},
		{40, nil, 5},
		{4, []string{"0", "1", "10", "20"}, 31},
		{2, []string{"0", "10"}, 33},
	} {
		mfs, err := NewRegistry(LiveSource(src, Options{MaxChannels: c.max}, nil)).Gather()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		var dropped float64
		for _, mf := range mfs {
			switch mf.GetName() {
			case "causalctl_channel_settled_offset":
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == "partition" {
							parts = append(parts, l.GetValue())
						}
					}
				}
			case "causalctl_metrics_channels_dropped":
				dropped = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if c.want == nil && len(parts) != 30 || c.want != nil && !slices.Equal(parts, c.want) || dropped != c.dropped {
			t.Errorf("max %d: series of partitions %v, %v dropped; want %v, %v", c.max, parts, dropped, c.want, c.dropped)
		}
	}
}

// TestProcessCollectorMaxChannels: lag series stop at the cap, in the
// processes' order, and the rest are counted.
func TestProcessCollectorMaxChannels(t *testing.T) {
	src := &fixedProcesses{}
	src.set(notifierSnapshot()) // three channels: payments/0, payments/1, shipments/1
	c := NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{MaxChannels: 2})
	want := `
# HELP causalctl_exporter_channels_dropped Task channels this scrape exports no lag series of: beyond --metrics-max-channels, counted over the processes by application id, their tasks and channels in order.
# TYPE causalctl_exporter_channels_dropped gauge
causalctl_exporter_channels_dropped 1
# HELP parsley_channel_fed_lag_records Records written to the channel (below its last stable offset) that the task was not fed yet.
# TYPE parsley_channel_fed_lag_records gauge
parsley_channel_fed_lag_records{app="notifier",partition="0",task="0",topic="payments"} 0
parsley_channel_fed_lag_records{app="notifier",partition="1",task="1",topic="payments"} 4
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "causalctl_exporter_channels_dropped", "parsley_channel_fed_lag_records"); err != nil {
		t.Error(err)
	}
}

// TestScrapesShareARender: scrapes of one snapshot get the same bytes
// from one render — ten at once, one after them, one a second later — as
// the endpoint's own request counter shows (it counts renders); the next
// snapshot renders afresh; a scrape asking for another format is rendered
// for itself; Prepare renders a new snapshot for each kind of scrape seen,
// and the scrapes that follow render nothing; Prepare with no scrape since
// the last renders nothing.
func TestScrapesShareARender(t *testing.T) {
	now := time.Unix(1700000000, 100_000_000)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	src := &fixedProcesses{}
	src.set(notifierSnapshot())
	h := NewEndpoint(FleetSource(src, HealthBounds{Failing: time.Minute}, clock, Options{}), "causalctl exporter", clock)
	scrape := func(accept string) string {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Body.String()
	}
	const om = "application/openmetrics-text;version=1.0.0"
	renders := func(body string) float64 {
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, `promhttp_metric_handler_requests_total{code="200"}`) {
				v, err := strconv.ParseFloat(strings.Fields(l)[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("no request counter in %q", body)
		return 0
	}
	bodies := make([]string, 10)
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() { bodies[i] = scrape(om) })
	}
	wg.Wait()
	bodies = append(bodies, scrape(om))
	for _, b := range bodies {
		if b != bodies[0] || renders(b) != 0 {
			t.Fatalf("scrapes of one snapshot in one second differ, or rendered more than once:\n%s\n%s", bodies[0], b)
		}
	}
	if b := scrape("text/plain"); renders(b) != 1 || strings.Contains(b, "# EOF") {
		t.Errorf("a text scrape shares the OpenMetrics render: %s", b)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if b := scrape(om); b != bodies[0] {
		t.Errorf("a second later, the same snapshot rendered afresh: %v renders before", renders(b))
	}
	src.set(notifierSnapshot())
	if b := scrape(om); renders(b) != 2 {
		t.Errorf("the next snapshot did not render afresh: %v", renders(b))
	}
	src.set(notifierSnapshot())
	h.Prepare() // renders 3 and 4, one a kind
	prepared := scrape(om)
	if n := renders(prepared); n != 3 && n != 4 {
		t.Errorf("Prepare did not render the OpenMetrics scrape: %v renders before", n)
	}
	if b := scrape("text/plain"); renders(b) != 3 && renders(b) != 4 || renders(b) == renders(prepared) {
		t.Errorf("Prepare did not render the text scrape: %v renders before", renders(b))
	}
	if b := scrape(om); b != prepared {
		t.Error("a scrape after Prepare rendered again")
	}
	// No scrape since the last Prepare: nobody is scraping, nothing is
	// rendered.
	src.set(notifierSnapshot())
	h.Prepare() // the scrapes above asked
	if b := scrape(om); renders(b) != 5 && renders(b) != 6 {
		t.Errorf("%v renders before, want Prepare's 5 or 6", renders(b))
	}
	h.Prepare()
	latest, _ := src.Latest()
	src.set(notifierSnapshot())
	h.Prepare()
	h.renders.mu.Lock()
	defer h.renders.mu.Unlock()
	if h.renders.at != any(latest) {
		t.Error("Prepare rendered with no scrape since the last")
	}
}

// TestProcessCollectorMaxSeries: the first task whose series by topic and
// channel would pass --max-series, and every one after it, is folded: its
// holds are one "_other" pair carrying its totals (the held count and the
// oldest's age), it has no lag series, the gauge counts it and the
// exporter is told; the held totals stay those of the uncapped scrape.
func TestProcessCollectorMaxSeries(t *testing.T) {
	src := &fixedProcesses{}
	src.set(notifierSnapshot()) // task 0: 1 topic, 1 channel; task 1: 2 topics, 2 channels, 7 held
	var told []int
	c := NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{MaxSeries: 5, Folded: func(n, _ int) { told = append(told, n) }})
	want := `
# HELP causalctl_exporter_tasks_folded Tasks this scrape folds, beyond --max-series (series by task and topic or channel, counted over the processes by application id and their tasks in order): their holds are one series pair of topic "_other" (the task's totals), without per-topic or lag series.
# TYPE causalctl_exporter_tasks_folded gauge
causalctl_exporter_tasks_folded 1
# HELP parsley_channel_fed_lag_records Records written to the channel (below its last stable offset) that the task was not fed yet.
# TYPE parsley_channel_fed_lag_records gauge
parsley_channel_fed_lag_records{app="notifier",partition="0",task="0",topic="payments"} 0
# HELP parsley_records_held Records the task holds in its ordering state, per topic (Parsley 0.1: records-held).
# TYPE parsley_records_held gauge
parsley_records_held{app="notifier",task="0",topic="payments"} 0
parsley_records_held{app="notifier",task="1",topic="_other"} 7
# HELP parsley_records_held_age_max_seconds Age of the task's oldest held record of the topic, since it was written (0 when none is held; Parsley 0.1: records-held-age-max-ms).
# TYPE parsley_records_held_age_max_seconds gauge
parsley_records_held_age_max_seconds{app="notifier",task="0",topic="payments"} 0
parsley_records_held_age_max_seconds{app="notifier",task="1",topic="_other"} 600
# HELP parsley_task_assigned 1 when a member of the process's group is assigned the task, else 0.
# TYPE parsley_task_assigned gauge
parsley_task_assigned{app="notifier",task="0"} 1
parsley_task_assigned{app="notifier",task="1"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "causalctl_exporter_tasks_folded", "parsley_channel_fed_lag_records",
		"parsley_records_held", "parsley_records_held_age_max_seconds", "parsley_task_assigned"); err != nil {
		t.Error(err)
	}
	if !slices.Equal(told, []int{1}) {
		t.Errorf("the exporter was told %v, want [1]", told)
	}

	// A bound below the first task folds every task; no bound folds none.
	for _, c := range []struct{ max, folded int }{{3, 2}, {0, 0}, {12, 0}} {
		total := 0.0
		var folded float64
		mfs, err := registryOf(t, NewProcessCollector(src, func() time.Time { return scrapeTime }, Options{MaxSeries: c.max})).Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			switch mf.GetName() {
			case "parsley_records_held":
				for _, m := range mf.GetMetric() {
					total += m.GetGauge().GetValue()
				}
			case "causalctl_exporter_tasks_folded":
				folded = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if total != 7 || folded != float64(c.folded) {
			t.Errorf("max %d: %v held, %v tasks folded; want 7, %d", c.max, total, folded, c.folded)
		}
	}
}
