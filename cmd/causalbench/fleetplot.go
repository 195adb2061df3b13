package main

import (
	"fmt"
	"math"
)

// curve is one line of the fleet plot: a value per process count.
type curve struct {
	name, color string
	x, y        []float64
}

// fleetCurves are the fleet scenarios' costs per process, in milliseconds:
// flat lines are costs that grow linearly with the number of processes.
func fleetCurves(fl []fleetSize) []curve {
	s := []curve{
		{name: "processes: wall per process", color: "#1f77b4"},
		{name: "processes: CPU per process", color: "#ff7f0e"},
		{name: "exporter: CPU per idle refresh, per process", color: "#2ca02c"},
		{name: "exporter: scrape per process", color: "#d62728"},
		{name: "exporter: first refresh (every changelog read), per process", color: "#9467bd"},
	}
	for _, fs := range fl {
		n := float64(fs.Procs)
		add := func(i int, ms float64) {
			s[i].x = append(s[i].x, n)
			s[i].y = append(s[i].y, ms/n)
		}
		if r := fs.Processes; r != nil {
			add(0, median(r.wall())*1e3)
			add(1, median(r.cpu())*1e3)
		}
		if sr := fs.Scrape; sr != nil {
			add(2, float64(sr.IdleCPU)/1e6)
			add(3, median(scrapeMillis(sr)))
			add(4, float64(sr.FirstRefresh)/1e6)
		}
	}
	out := s[:0]
	for _, l := range s {
		if len(l.x) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// writeFleetPlot writes the fleet costs as an SVG line chart, both axes
// logarithmic.
func writeFleetPlot(path string, fl []fleetSize) error {
	return fleetSVG(fleetCurves(fl)).save(path)
}

// fleetSVG draws cs on log–log axes with a legend.
func fleetSVG(cs []curve) *svgDoc {
	const w, h, left, right, top, bottom = 720.0, 420.0, 70.0, 20.0, 30.0, 130.0
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		for i := range c.x {
			if c.y[i] <= 0 {
				continue
			}
			minX, maxX = math.Min(minX, c.x[i]), math.Max(maxX, c.x[i])
			minY, maxY = math.Min(minY, c.y[i]), math.Max(maxY, c.y[i])
		}
	}
	if math.IsInf(minX, 1) {
		minX, maxX, minY, maxY = 1, 10, 1, 10
	}
	// Whole decades around the data.
	x0, x1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	y0, y1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	x1, y1 = math.Max(x1, x0+1), math.Max(y1, y0+1)
	px := func(x float64) float64 { return left + (math.Log10(x)-x0)/(x1-x0)*(w-left-right) }
	py := func(y float64) float64 { return h - bottom - (math.Log10(y)-y0)/(y1-y0)*(h-top-bottom) }

	d := newSVG(w, h, left, fmt.Sprintf("Cost per process as the fleet grows (%d tasks a process; log–log)", fleetTasks))
	for e := x0; e <= x1; e++ {
		x := px(math.Pow(10, e))
		d.printf(`<path d="M%.1f %.1f V%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n", x, top, h-bottom, x, h-bottom+16, math.Pow(10, e))
	}
	for e := y0; e <= y1; e++ {
		y := py(math.Pow(10, e))
		d.printf(`<path d="M%.1f %.1f H%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%g ms</text>`+"\n", left, y, w-right, left-6, y+4, math.Pow(10, e))
	}
	d.printf(`<text x="%.1f" y="%.1f" text-anchor="middle">Parsley processes</text>`+"\n", (left+w-right)/2, h-bottom+34)
	for i, c := range cs {
		var pts [][2]float64
		for j := range c.x {
			if c.y[j] > 0 { // no place on a log axis
				pts = append(pts, [2]float64{px(c.x[j]), py(c.y[j])})
			}
		}
		d.line(pts, c.color, false)
		d.key(left, h-bottom+52+18*float64(i), c.color, c.name)
	}
	return d
}
