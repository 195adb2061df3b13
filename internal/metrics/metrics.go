// Package metrics exports what a live shadow node's gate sees — held
// records, the oldest hold's age, blocked heads by cause, settled positions
// against the log ends — as Prometheus metrics, for `watch --metrics-addr`
// and `demo --metrics-addr`.
//
// A Collector reads the latest snapshot of a live driver at every scrape
// and turns it into metrics; it keeps no state of its own beyond the
// highest counter values seen, so a scrape costs one snapshot's worth of
// series and never touches the gate. NewRegistry puts it beside the Go and
// process collectors on a registry of its own (never the global one), and
// Handler serves that registry at /metrics, in the Prometheus text format
// or OpenMetrics as the scraper asks, with /healthz beside it.
//
// docs/metrics.md documents every metric.
package metrics

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/view"
)

// Snapshots gives the latest snapshot of a live gate; *live.Driver is one.
type Snapshots interface {
	// Latest returns the latest snapshot, false before the first. The
	// snapshot is shared: it is read, never changed.
	Latest() (view.Snapshot, bool)
}

// Causes of a blocked head, the values of the cause label of
// causalctl_blocked_heads: inspect's causes (inspect.Causes, one
// classifier everywhere), then CauseUnclassified. Every one is exported,
// at 0 when no head has it, so that alerts and graphs over them see a
// series from the first scrape.
var Causes = causeLabels()

func causeLabels() []string {
	var out []string
	for _, c := range inspect.Causes() {
		out = append(out, string(c))
	}
	return append(out, CauseUnclassified)
}

// The causes a test or an alert names most; see inspect.Cause for all.
const (
	CauseHeld         = string(inspect.CauseHeld)
	CauseLagging      = string(inspect.CauseLagging)
	CauseBeyondLogEnd = string(inspect.CauseBeyondLogEnd)
	CauseNotReceived  = string(inspect.CauseNotReceived)
	CauseUndecodable  = string(inspect.CauseUndecodable)
	CauseCycle        = string(inspect.CauseCycle)
	// CauseUnclassified: a held head beyond the snapshot's detail cap
	// (view.DefaultMaxHeads), counted but not looked into.
	CauseUnclassified = "unclassified"
)

// channelLabels are the labels of every per-channel metric; with per-task
// gates (Options.Tasks) task follows them.
var channelLabels = []string{"topic", "partition", "topic_id"}

// DefaultMaxChannels is how many channels have per-channel series by
// default (--metrics-max-channels): six series each, 30 000 at most.
const DefaultMaxChannels = 5000

// Options say what a collector exports.
type Options struct {
	// MaxChannels is how many channels get per-channel series, held ones
	// first, then in channel order; the rest are counted by
	// causalctl_metrics_channels_dropped (or, for the exporter,
	// causalctl_exporter_channels_dropped). 0 is no bound.
	MaxChannels int
	// Tasks is for a driver that runs one gate per task
	// (live.Config.Tasks): every per-channel metric gains a task label,
	// the channel's task.
	Tasks bool
	// MaxSeries (the exporter's) bounds the series per task and topic or
	// channel: the held and age series by topic and the lag series. Over
	// the processes by application id and their tasks in order, the first
	// task that would pass it, and every one after it, is folded: its
	// holds are one pair of series of topic OtherTopic, its totals, and it
	// has no lag series; causalctl_exporter_tasks_folded counts them. A
	// process's start-refusal series (one per reason), counted after its
	// tasks, fold too: only the reasons met and a total. 0 is no bound.
	MaxSeries int
	// Folded, when set, is told after each scrape that folded anything how
	// many tasks it folded and how many processes' start refusals it
	// exported only by the reasons met (the exporter warns on stderr).
	Folded func(tasks, refusals int)
	// ExternalURL (the exporter's --web.external-url) is where people reach
	// the pages served beside /metrics: exported as the external_url label
	// of causalctl_exporter_web_info, which the alert rules' annotations
	// read to link each alert to its process's page. "" exports no series
	// (the annotations then link to the scraped instance).
	ExternalURL string
}

// OtherTopic is the topic label of a folded task's holds (MaxSeries).
const OtherTopic = "_other"

// DefaultMaxSeries is the exporter's --max-series.
const DefaultMaxSeries = 100000

// Collector is a prometheus.Collector over the latest snapshot of a live
// gate. Make one with NewCollector; it is safe for concurrent scrapes.
type Collector struct {
	src  Snapshots
	opts Options

	received, delivered, dropped *prometheus.Desc
	held, oldestHold, blocked    *prometheus.Desc
	failedClosed, lastSnapshot   *prometheus.Desc
	scope, disconnected          *prometheus.Desc

	chHeld, chHeadAge, chSettled, chReceived *prometheus.Desc
	chLogEnd, chLastStable                   *prometheus.Desc
	chDropped                                *prometheus.Desc

	// The highest counters exported: a counter never goes down, even if a
	// snapshot older than the last one were ever read.
	mu                      sync.Mutex
	maxRecv, maxDel, maxDro int64
}

// NewCollector returns a Collector over src.
func NewCollector(src Snapshots, opts Options) *Collector {
	node := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("causalctl_"+name, help, labels, nil)
	}
	labels := channelLabels
	if opts.Tasks {
		labels = append(slices.Clip(labels), "task")
	}
	channel := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("causalctl_channel_"+name, help, labels, nil)
	}
	c := &Collector{
		src:  src,
		opts: opts,

		received:     node("records_received_total", "Records the shadow node's gate received."),
		delivered:    node("records_delivered_total", "Records the gate delivered."),
		dropped:      node("records_dropped_total", "Records the gate dropped: received again at or below a position already delivered (the replay guard)."),
		held:         node("held_records", "Records held now, in every hold queue."),
		oldestHold:   node("oldest_hold_age_seconds", "Age of the oldest held head: how long ago it was received (0 when nothing is held)."),
		blocked:      node("blocked_heads", "Held heads (one per channel whose hold queue is not empty) by the cause of their wait.", "cause"),
		failedClosed: node("failed_closed", "1 once the gate failed closed on an undecodable header (its reason code the label), else 0.", "reason"),
		lastSnapshot: node("last_snapshot_timestamp_seconds", "When the snapshot this scrape reports was taken (Unix time)."),
		scope:        node("scope_channels", "Channels the shadow node consumes."),
		disconnected: node("disconnected_seconds", "How long the shadow node has been unable to reach its brokers, retrying (0 while connected)."),

		chHeld:       channel("held_records", "Records held in the channel's hold queue."),
		chHeadAge:    channel("head_age_seconds", "Age of the channel's held head (0 when nothing is held)."),
		chSettled:    channel("settled_offset", "The channel's settled position: every record at or below it is delivered; absent while none is."),
		chReceived:   channel("received_offset", "The highest position received or advanced past on the channel; absent while none is."),
		chLogEnd:     channel("log_end_offset", "The channel's high watermark: the offset the next record written gets (absent until known)."),
		chLastStable: channel("last_stable_offset", "The channel's last stable offset: the end a read_committed reader reads up to (absent until known)."),
		chDropped:    node("metrics_channels_dropped", "Channels in scope this scrape exports no per-channel series of: over --metrics-max-channels (held channels are kept first), or beyond the snapshot's row cap."),
	}
	return c
}

// Describe sends the descriptions of every metric the Collector exports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.received, c.delivered, c.dropped, c.held, c.oldestHold, c.blocked, c.failedClosed, c.lastSnapshot, c.scope, c.disconnected,
		c.chHeld, c.chHeadAge, c.chSettled, c.chReceived, c.chLogEnd, c.chLastStable, c.chDropped,
	} {
		ch <- d
	}
}

// Collect sends the metrics of the latest snapshot; nothing before the
// first snapshot.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.src.Latest()
	if !ok {
		return
	}
	e := &emitter{ch: ch} // topic names and codes come from outside: no Must*
	gauge := e.gauge
	recv, del, dro := c.counters(&s)
	e.counter(c.received, float64(recv))
	e.counter(c.delivered, float64(del))
	e.counter(c.dropped, float64(dro))
	gauge(c.held, float64(s.Held))
	gauge(c.oldestHold, ageSeconds(s.OldestHold))
	gauge(c.scope, float64(s.Scope))
	retrying := 0.0
	if s.State == engine.StateDisconnected {
		retrying = max(s.RetryingFor, 0).Seconds()
	}
	gauge(c.disconnected, retrying)
	e.position(c.lastSnapshot, float64(s.Taken.UnixNano())/1e9, !s.Taken.IsZero())
	failed, reason := 0.0, ""
	if s.Failure != nil {
		failed, reason = 1, s.Failure.Code
	}
	gauge(c.failedClosed, failed, reason)

	counts := BlockedByCause(&s)
	for _, cause := range Causes {
		gauge(c.blocked, float64(counts[cause]), cause)
	}

	rows := exportedRows(s.Channels, c.opts.MaxChannels)
	gauge(c.chDropped, float64(max(s.Scope, len(s.Channels))-len(rows)))
	for _, row := range rows {
		labels := []string{topicOf(row), strconv.Itoa(int(row.Partition)), row.TopicID}
		if c.opts.Tasks {
			labels = append(labels, strconv.Itoa(int(row.Task)))
		}
		gauge(c.chHeld, float64(row.Held), labels...)
		gauge(c.chHeadAge, ageSeconds(row.HeadAge), labels...)
		e.position(c.chSettled, float64(row.Settled), row.Settled >= 0, labels...)
		e.position(c.chReceived, float64(row.ReceivedUpTo), row.ReceivedUpTo >= 0, labels...)
		e.position(c.chLogEnd, float64(row.HighWatermark), row.HighWatermark >= 0, labels...)
		e.position(c.chLastStable, float64(row.LogEnd), row.LogEnd >= 0, labels...)
	}
}

// exportedRows are the rows that get per-channel series: every row within
// limit (0: no limit), else the held ones first, then the others, each in
// channel order, up to limit.
func exportedRows(rows []view.ChannelRow, limit int) []*view.ChannelRow {
	all := limit <= 0 || len(rows) <= limit
	if all {
		limit = len(rows)
	}
	out := make([]*view.ChannelRow, 0, limit)
	for _, held := range []bool{true, false} {
		for i := range rows {
			if len(out) < limit && (all || rows[i].Blocked == held) {
				out = append(out, &rows[i])
			}
		}
		if all {
			break
		}
	}
	return out
}

// counters returns the snapshot's counters, never below what was exported
// before.
func (c *Collector) counters(s *view.Snapshot) (recv, del, dro int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxRecv = max(c.maxRecv, s.Received)
	c.maxDel = max(c.maxDel, s.Delivered)
	c.maxDro = max(c.maxDro, s.Dropped)
	return c.maxRecv, c.maxDel, c.maxDro
}

func ageSeconds(a inspect.Age) float64 {
	if !a.Known {
		return 0
	}
	return max(a.D, 0).Seconds()
}

// topicOf is the row's topic: its name, or its UUID when unnamed.
func topicOf(row *view.ChannelRow) string {
	return strings.TrimSuffix(row.Channel, "/"+strconv.Itoa(int(row.Partition)))
}

// BlockedByCause counts the snapshot's held heads by cause (see Causes);
// the counts add up to the held channels.
func BlockedByCause(s *view.Snapshot) map[string]int {
	counts := make(map[string]int, len(Causes))
	for i := range s.Heads {
		counts[headCause(&s.Heads[i])]++
	}
	if n := s.HeldChannels - len(s.Heads); n > 0 {
		counts[CauseUnclassified] += n
	}
	return counts
}

// headCause is the one cause a held head is counted under: its own, as
// inspect classifies it (its undecodable header, a wait cycle, or its most
// telling blocker; a head waiting behind another is held, and that head is
// counted with its own cause).
func headCause(h *view.HeadDetail) string {
	if h.Cause == "" {
		return CauseUnclassified
	}
	return string(h.Cause)
}
