package metrics

import (
	"net/http"
	"time"

	"github.com/causalctl/causalctl/internal/view"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Source is what the one metrics surface serves, whichever runtime feeds
// it: the live driver of watch and demo (LiveSource) or the exporter's
// fleet refresher (FleetSource). Endpoint serves any Source the same way
// (/metrics, /healthz, /), and both collectors follow one rule for series
// of nothing (docs/metrics.md, "Zero and absent").
type Source interface {
	// Collector renders the latest snapshot as series.
	Collector() prometheus.Collector
	// Health says whether the runtime works now, and why not.
	Health() (ok bool, why string)
	// Snapshot identifies what a render of the series shows (comparable);
	// nil when there is nothing to share. Scrapes of one Snapshot share
	// one render.
	Snapshot() any
}

// LiveSource serves a live gate (*live.Driver): the causalctl_ series of
// its snapshots, healthy while the gate runs (Health). Its snapshots
// carry no age, so a render serves the scrapes of one second.
func LiveSource(src Snapshots, opts Options, now func() time.Time) Source {
	if now == nil {
		now = time.Now
	}
	return &liveSource{src: src, opts: opts, now: now}
}

type liveSource struct {
	src  Snapshots
	opts Options
	now  func() time.Time
}

func (l *liveSource) Collector() prometheus.Collector { return NewCollector(l.src, l.opts) }
func (l *liveSource) Health() (bool, string)          { return Health(l.src) }

func (l *liveSource) Snapshot() any {
	// A snapshot's rows are made afresh for it: their address tells one
	// snapshot from the next.
	type key struct {
		rows          *view.ChannelRow
		n             int
		taken, second int64
	}
	s, ok := l.src.Latest()
	if !ok || len(s.Channels) == 0 {
		return nil
	}
	return key{&s.Channels[0], len(s.Channels), s.Taken.UnixNano(), l.now().Unix()}
}

// FleetSource serves the exporter's refresher (*fleet.Refresher): the
// parsley_ and causalctl_exporter_ series of its snapshots, healthy while
// its refreshes work within b (ProcessHealth). A render serves every
// scrape of one refresh's snapshot; ages are measured by now at the render.
func FleetSource(src Processes, b HealthBounds, now func() time.Time, opts Options) Source {
	if now == nil {
		now = time.Now
	}
	return &fleetSource{src: src, b: b, now: now, opts: opts}
}

type fleetSource struct {
	src  Processes
	b    HealthBounds
	now  func() time.Time
	opts Options
}

func (f *fleetSource) Collector() prometheus.Collector {
	return NewProcessCollector(f.src, f.now, f.opts)
}
func (f *fleetSource) Health() (bool, string) { return ProcessHealth(f.src, f.b, f.now()) }

func (f *fleetSource) Snapshot() any {
	s, ok := f.src.Latest()
	if !ok {
		return nil
	}
	return s
}

// NewRegistry returns a registry of its own holding src's collector and
// the standard Go and process collectors.
func NewRegistry(src Source) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		src.Collector(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// Endpoint is the one metrics surface: the series of a Source at /metrics
// — OpenMetrics to a scraper that asks for it (Prometheus does), the
// Prometheus text format otherwise — its health at /healthz (200 "ok",
// else 503 with the reason; unhealthy too while the latest render dropped
// a series), and a line naming both at /. Scrapes of one snapshot share
// one render (sharedRenders); Prepare renders ahead of them.
type Endpoint struct {
	*http.ServeMux
	renders *sharedRenders
}

// NewEndpoint serves src under name (what / says it is). now is the
// clock renders are shared by; nil is the wall clock.
func NewEndpoint(src Source, name string, now func() time.Time) *Endpoint {
	if now == nil {
		now = time.Now
	}
	reg := NewRegistry(src)
	g := &gatherWatch{Gatherer: reg}
	renders := shareRenders(promHandler(reg, g), src.Snapshot)
	health := func() (bool, string) {
		ok, why := src.Health()
		if dropped := g.lastDropped(); ok && dropped != "" {
			return false, "the latest render dropped series: " + dropped
		}
		return ok, why
	}
	return &Endpoint{ServeMux: serveMux(renders, health, name), renders: renders}
}

// Prepare renders the latest snapshot for each kind of scrape seen so far
// (their Accept and Accept-Encoding headers), so that the next scrapes
// are served at once; nothing when no scrape came since the last Prepare.
// The exporter calls it after each refresh.
func (e *Endpoint) Prepare() { e.renders.prepare() }
