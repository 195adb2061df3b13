package upstream

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
)

// ParseFleet reads a fleet file (docs/fleet.md): what each application
// sends, for the writers the cluster cannot tell. One application a line,
//
//	APP: TOPIC, TOPIC, …
//
// blank lines and lines starting with # are skipped; an application may
// have several lines. An error names the file (name) and the line.
func ParseFleet(name string, r io.Reader) (Writers, error) {
	w := Writers{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		app, topics, ok := strings.Cut(line, ":")
		app = strings.TrimSpace(app)
		if !ok || app == "" {
			return nil, fmt.Errorf("%s line %d: %q: want APP: TOPIC, TOPIC, …", name, n, escape.Text(line))
		}
		if strings.ContainsAny(app, " \t") {
			return nil, fmt.Errorf("%s line %d: application id %q holds a blank", name, n, escape.Text(app))
		}
		sent := 0
		for t := range strings.SplitSeq(topics, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if err := clock.CheckTopicName(t); err != nil {
				return nil, fmt.Errorf("%s line %d: application %s: %w", name, n, escape.Text(app), err)
			}
			w.Add(t, app)
			sent++
		}
		if sent == 0 {
			return nil, fmt.Errorf("%s line %d: application %s sends no topic", name, n, escape.Text(app))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return w, nil
}
