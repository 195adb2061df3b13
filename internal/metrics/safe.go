package metrics

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/causalctl/causalctl/internal/escape"
)

// emitter sends a collection's series. Label values come from brokers and
// stores (application ids, topic names), so none is trusted: each is
// escaped as escape.Text writes it (invalid UTF-8 as \xff, control bytes
// and bidi overrides as Go escapes), which Prometheus accepts, and a
// series that still cannot be built is sent as an invalid metric — the
// registry drops it, serves every other series and reports the error
// (promhttp_metric_handler_errors_total, /healthz). No Must* constructor
// runs on such data: client_golang recovers a collector's panic and drops
// every series after it.
type emitter struct {
	ch chan<- prometheus.Metric
	// escaped counts the series sent with a label value escaped.
	escaped int
}

// The one rule for series of nothing, both surfaces' (docs/metrics.md,
// "Zero and absent"): an amount — a count, an age, a duration, a 0/1
// flag — is sent always, 0 when there is none, so that alerts and graphs
// see it from the first scrape; a position — an offset, a lag, a
// timestamp — only when known, never as 0 or −1, which would read as a
// real position.

// gauge sends an amount.
func (e *emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.send(d, prometheus.GaugeValue, v, labels)
}

// position sends a position when known; nothing while it is not.
func (e *emitter) position(d *prometheus.Desc, v float64, known bool, labels ...string) {
	if known {
		e.send(d, prometheus.GaugeValue, v, labels)
	}
}

func (e *emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.send(d, prometheus.CounterValue, v, labels)
}

func (e *emitter) send(d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) {
	cloned := false
	for i, l := range labels {
		if s := escape.Text(l); s != l {
			if !cloned { // the caller's slice may be shared
				labels, cloned = slices.Clone(labels), true
				e.escaped++
			}
			labels[i] = s
		}
	}
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	e.ch <- m
}

// gatherWatch is a Gatherer that keeps whether its latest gathering
// dropped anything (a series that could not be built, two series of one
// name and labels): the exporter's /healthz says so until one drops
// nothing.
type gatherWatch struct {
	prometheus.Gatherer
	dropped atomic.Pointer[string] // the latest gathering's error; nil or "" when none
}

func (g *gatherWatch) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := g.Gatherer.Gather()
	why := ""
	if err != nil {
		why = firstLine(err)
	}
	g.dropped.Store(&why)
	return mfs, err
}

// lastDropped is what the latest gathering dropped, "" when nothing.
func (g *gatherWatch) lastDropped() string {
	if p := g.dropped.Load(); p != nil {
		return *p
	}
	return ""
}

// firstLine says a gathering's error in one line: how many, and the first
// line of the first (a recovered panic's carries its stack).
func firstLine(err error) string {
	var n int
	if me, ok := err.(prometheus.MultiError); ok && len(me) > 0 {
		n, err = len(me), me[0]
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	if n > 1 {
		return fmt.Sprintf("%d errors, the first: %s", n, line)
	}
	return line
}
