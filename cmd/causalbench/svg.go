package main

import (
	"fmt"
	"os"
	"strings"
)

// svgDoc is the minimal SVG writer both plots share: a white page with a
// title, then lines drawn with a dot at each point and keyed by colour.
type svgDoc struct {
	b strings.Builder
}

// newSVG starts a w × h document titled title, the title at x.
func newSVG(w, h, x float64, title string) *svgDoc {
	d := &svgDoc{}
	d.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	d.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	d.printf(`<text x="%.0f" y="20" font-size="14">%s</text>`+"\n", x, title)
	return d
}

// printf writes one element, or several, as given.
func (d *svgDoc) printf(format string, args ...any) {
	fmt.Fprintf(&d.b, format, args...)
}

// line draws the points (x, y pairs, in the document's coordinates) joined
// in colour, dashed when dash is set, with a dot at each.
func (d *svgDoc) line(pts [][2]float64, colour string, dash bool) {
	var p strings.Builder
	for i, pt := range pts {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&p, "%s%.1f %.1f ", cmd, pt[0], pt[1])
	}
	style := ""
	if dash {
		style = ` stroke-dasharray="5 4"`
	}
	d.printf(`<path class="line" d="%s" stroke="%s" stroke-width="2" fill="none"%s/>`+"\n", strings.TrimSpace(p.String()), colour, style)
	for _, pt := range pts {
		d.printf(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", pt[0], pt[1], colour)
	}
}

// key writes one entry of the legend: a short stroke of colour at (x, y)
// and name beside it.
func (d *svgDoc) key(x, y float64, colour, name string) {
	d.printf(`<path d="M%.1f %.1f h20" stroke="%s" stroke-width="2"/><text x="%.1f" y="%.1f">%s</text>`+"\n", x, y, colour, x+25, y+4, name)
}

// save ends the document and writes it to path.
func (d *svgDoc) save(path string) error {
	d.b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(d.b.String()), 0o644)
}

// String is the document so far, unended.
func (d *svgDoc) String() string { return d.b.String() }
