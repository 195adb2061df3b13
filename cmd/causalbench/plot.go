package main

import (
	"fmt"
	"math"
)

// writePlot writes an SVG plot of the cost per record against the input
// size, one line of CPU time (solid) and one of wall time (dashed) per
// scenario measured at more than one size: flat lines are costs that do
// not grow with the input.
func writePlot(path string, cfg config, reps []sizeReport) error {
	type series struct {
		name      string
		cpu, wall []float64 // µs per record, by size
	}
	var all []series
	for _, name := range scenarioNames {
		s := series{name: name}
		for i := range reps {
			r := reps[i].find(name)
			if r == nil || len(r.Runs) == 0 {
				break
			}
			pick := median
			if cfg.Best {
				pick = func(v []float64) float64 { return v[0] }
			}
			n := float64(reps[i].Records)
			s.cpu = append(s.cpu, pick(r.cpu())/n*1e6)
			s.wall = append(s.wall, pick(r.wall())/n*1e6)
		}
		if len(s.cpu) == len(reps) && len(reps) > 1 {
			all = append(all, s)
		}
	}
	if len(all) == 0 {
		return fmt.Errorf("no scenario was measured at every size of -n (want two sizes or more)")
	}
	const w, h, left, right, top, bottom = 640.0, 400.0, 60.0, 150.0, 40.0, 50.0
	lo, hi := math.Log10(float64(reps[0].Records)), math.Log10(float64(reps[len(reps)-1].Records))
	if hi == lo {
		hi = lo + 1
	}
	ymax := 0.0
	for _, s := range all {
		for i := range s.cpu {
			ymax = max(ymax, s.cpu[i], s.wall[i])
		}
	}
	ymax = niceCeil(ymax)
	x := func(n int64) float64 { return left + (math.Log10(float64(n))-lo)/(hi-lo)*(w-left-right) }
	y := func(v float64) float64 { return h - bottom - v/ymax*(h-top-bottom) }
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

	stat := "median"
	if cfg.Best {
		stat = "best"
	}
	d := newSVG(w, h, left, fmt.Sprintf("Cost per record as the input grows (%s of %d runs, %d channels)", stat, cfg.Runs, cfg.Channels))
	// Axes, grid and ticks.
	d.printf(`<path d="M%.1f %.1f V%.1f H%.1f" stroke="black" fill="none"/>`+"\n", left, top, h-bottom, w-right)
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		d.printf(`<path d="M%.1f %.1f H%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%.2g</text>`+"\n", left, y(v), w-right, left-6, y(v)+4, v)
	}
	d.printf(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">µs per record</text>`+"\n", (top+h-bottom)/2)
	for _, rep := range reps {
		d.printf(`<path d="M%.1f %.1f v5" stroke="black"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n",
			x(rep.Records), h-bottom, x(rep.Records), h-bottom+18, millions(rep.Records))
	}
	d.printf(`<text x="%.1f" y="%.1f" text-anchor="middle">records in the input (log scale)</text>`+"\n", (left+w-right)/2, h-12)
	// One solid (CPU) and one dashed (wall) line per scenario, and the key.
	for i, s := range all {
		c := colors[i%len(colors)]
		for _, line := range []struct {
			v    []float64
			dash bool
		}{{s.cpu, false}, {s.wall, true}} {
			pts := make([][2]float64, len(line.v))
			for j, v := range line.v {
				pts[j] = [2]float64{x(reps[j].Records), y(v)}
			}
			d.line(pts, c, line.dash)
		}
		d.key(w-right+10, top+10+float64(i)*20, c, s.name)
	}
	ky := top + 10 + float64(len(all))*20 + 10
	d.printf(`<text x="%.1f" y="%.1f">solid: CPU</text><text x="%.1f" y="%.1f">dashed: wall</text>`+"\n", w-right+10, ky, w-right+10, ky+16)
	return d.save(path)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// millions names a record count: "1 M", "2.5 M", "4000".
func millions(n int64) string {
	if n < 1_000_000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%g M", float64(n)/1e6)
}
