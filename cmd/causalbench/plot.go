package main

import (
	"fmt"
	"math"
	"os"
	"strings"
)

// series is one line of the plot: a value per process count.
type series struct {
	name, color string
	x, y        []float64
}

// fleetSeries are the fleet scenarios' costs per process, in milliseconds:
// flat lines are costs that grow linearly with the number of processes.
func fleetSeries(fl []fleetSize) []series {
	s := []series{
		{name: "processes: wall per process", color: "#1f77b4"},
		{name: "processes: CPU per process", color: "#ff7f0e"},
		{name: "exporter: CPU per idle refresh, per process", color: "#2ca02c"},
		{name: "exporter: scrape per process", color: "#d62728"},
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

// writePlot writes the fleet costs as an SVG line chart, both axes
// logarithmic.
func writePlot(path string, fl []fleetSize) error {
	return os.WriteFile(path, []byte(plotSVG(fleetSeries(fl))), 0o644)
}

// plotSVG draws ss on log–log axes with a legend.
func plotSVG(ss []series) string {
	const w, h, left, right, top, bottom = 720, 420, 70, 20, 30, 130
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for i := range s.x {
			if s.y[i] <= 0 {
				continue
			}
			minX, maxX = math.Min(minX, s.x[i]), math.Max(maxX, s.x[i])
			minY, maxY = math.Min(minY, s.y[i]), math.Max(maxY, s.y[i])
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

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Cost per process as the fleet grows (%d tasks a process; log–log)</text>`+"\n", left, fleetTasks)
	for d := x0; d <= x1; d++ {
		x := px(math.Pow(10, d))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, h-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", x, h-bottom+16, math.Pow(10, d))
	}
	for d := y0; d <= y1; d++ {
		y := py(math.Pow(10, d))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, w-right, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%g ms</text>`+"\n", left-6, y+4, math.Pow(10, d))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">Parsley processes</text>`+"\n", (left+w-right)/2, h-bottom+34)
	for i, s := range ss {
		var pts []string
		for j := range s.x {
			if s.y[j] > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.x[j]), py(s.y[j])))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], s.color)
		}
		ly := h - bottom + 56 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", left, ly-4, left+24, ly-4, s.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", left+30, ly, s.name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
