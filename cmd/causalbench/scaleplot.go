package main

import (
	"fmt"
	"math"
)

// writeScalePlot writes docs/scale.md's plot: hours of CPU (one core) a
// per-task replay takes as the input grows, measured (dots, the sizes of
// -n) and extrapolated to 10¹⁰ records at the largest size's cost per
// record (lines): replay-tasks on one core; the split over the one
// capture (replay-shards: every shard parses the whole file), as the wall
// time of one of -shards machines; and the split whose shards read only
// their own partitions (a broker range, or one capture per shard), as
// the wall time of 16 and 64 machines, assuming the per-record cost
// divides by the shards (not measured here).
func writeScalePlot(path string, cfg config, reps []sizeReport) error {
	perRecord := func(name string) (float64, [][2]float64, error) {
		var pts [][2]float64
		var last float64
		for _, rep := range reps {
			r := rep.find(name)
			if r == nil || len(r.Runs) == 0 {
				return 0, nil, fmt.Errorf("-scale-svg: %s was not measured at %d records (run it with -only replay-tasks,replay-shards)", name, rep.Records)
			}
			cpu := median(r.cpu())
			if cfg.Best {
				cpu = r.cpu()[0]
			}
			pts = append(pts, [2]float64{float64(rep.Records), cpu / 3600})
			last = cpu / float64(rep.Records)
		}
		return last, pts, nil
	}
	tasks, tasksPts, err := perRecord("replay-tasks")
	if err != nil {
		return err
	}
	shards, shardsPts, err := perRecord("replay-shards")
	if err != nil {
		return err
	}
	n := float64(cfg.Shards)
	for i := range shardsPts {
		shardsPts[i][1] /= n // one machine's share
	}
	const w, h, left, right, top, bottom = 720.0, 440.0, 70.0, 250.0, 40.0, 50.0
	const xlo, xhi, ylo, yhi = 6.0, 10.0, -4.0, 4.0 // log10 records, log10 hours
	x := func(r float64) float64 { return left + (math.Log10(r)-xlo)/(xhi-xlo)*(w-left-right) }
	y := func(hours float64) float64 {
		v := math.Max(ylo, math.Min(yhi, math.Log10(hours)))
		return h - bottom - (v-ylo)/(yhi-ylo)*(h-top-bottom)
	}
	d := newSVG(w, h, left, fmt.Sprintf("Hours of replay --tasks, %d tasks (lines at %.2f µs CPU a record)", cfg.Channels, tasks*1e6))
	d.printf(`<path d="M%.1f %.1f V%.1f H%.1f" stroke="black" fill="none"/>`+"\n", left, top, h-bottom, w-right)
	for e := ylo; e <= yhi; e++ {
		label := fmt.Sprintf("%g h", math.Pow(10, e))
		d.printf(`<path d="M%.1f %.1f H%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left, y(math.Pow(10, e)), w-right, left-6, y(math.Pow(10, e))+4, label)
	}
	for e := xlo; e <= xhi; e++ {
		d.printf(`<path d="M%.1f %.1f v5" stroke="black"/><text x="%.1f" y="%.1f" text-anchor="middle">10^%g</text>`+"\n", x(math.Pow(10, e)), h-bottom, x(math.Pow(10, e)), h-bottom+18, e)
	}
	d.printf(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">hours (log scale)</text>`+"\n", (top+h-bottom)/2)
	d.printf(`<text x="%.1f" y="%.1f" text-anchor="middle">records in the input (log scale)</text>`+"\n", (left+w-right)/2, h-12)
	extrapolate := func(cost, machines float64) [][2]float64 {
		var pts [][2]float64
		for e := xlo; e <= xhi; e += 0.5 {
			r := math.Pow(10, e)
			pts = append(pts, [2]float64{x(r), y(r * cost / machines / 3600)})
		}
		return pts
	}
	dots := func(pts [][2]float64, colour string) {
		for _, p := range pts {
			d.printf(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n", x(p[0]), y(p[1]), colour)
		}
	}
	lines := []struct {
		name, colour string
		pts          [][2]float64
		dash         bool
		measured     [][2]float64
	}{
		{"one core", "#1f77b4", extrapolate(tasks, 1), false, tasksPts},
		{fmt.Sprintf("%d shards, one capture", cfg.Shards), "#d62728", extrapolate(shards, n), false, shardsPts},
		{"16 shards, own partitions", "#2ca02c", extrapolate(tasks, 16), true, nil},
		{"64 shards, own partitions", "#9467bd", extrapolate(tasks, 64), true, nil},
	}
	for i, l := range lines {
		d.line(l.pts, l.colour, l.dash)
		dots(l.measured, l.colour)
		d.key(w-right+10, top+10+float64(i)*20, l.colour, l.name)
	}
	ky := top + 10 + float64(len(lines))*20 + 10
	d.printf(`<text x="%.1f" y="%.1f">big dots: measured CPU</text><text x="%.1f" y="%.1f">dashed: assumed, not measured</text>`+"\n", w-right+10, ky, w-right+10, ky+16)
	return d.save(path)
}
