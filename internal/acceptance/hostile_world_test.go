package acceptance

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
)

// hostileTopics carries every byte of testutil.Hostile that a Parsley
// store can bind a name to (names are UTF-8) at once; hostileApp adds an
// invalid byte. Kafka refuses both as topic names; a proxy or a broker
// that does not check does not.
const (
	hostileTopics = "EVIL\x1b[2J\x1b]0;pwned\x07\r\u202e\u009b\nforged line-"
	hostileApp    = "EVIL\x1b[2J\x07\r\u202e\xff\u009b\nforged line-app"
)

// TestHostileWorldEveryRenderer walks every renderer a person reads with
// one hostile world — random Parsley processes whose every name a broker
// or store controls is hostilePrefix-something, with heads of every shape
// — and checks that no raw control byte, bidi override or invalid byte
// reaches a person and no newline forges a line: each command's text and
// its stderr (errors and warnings), and the exporter's stderr, /healthz
// and pages. The live view's renderer is walked the same way in
// internal/tui (TestHostileSnapshot). JSON and /metrics are for programs, which get the exact
// bytes (escaped as their formats say).
func TestHostileWorldEveryRenderer(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	// Three worlds whose business topics are hostile, and one whose
	// application id (its changelog) is hostile too: --app refuses that
	// name, discovery (processes, the exporter) finds it.
	c, ww := worldCluster(t, "hw", now)
	addr := c.ListenAddrs()[0]
	ww.topicPrefix = hostileTopics
	var worlds []*world
	shapes := map[string]int{}
	for seed := uint64(1); seed <= 4; seed++ {
		if seed == 4 {
			ww.prefix = hostileApp
		}
		wd := ww.write(seed)
		worlds = append(worlds, wd)
		for s, n := range wd.Shapes {
			shapes[s] += n
		}
	}
	// The walk reads heads of the shapes that name the most.
	for _, s := range []string{"dangling", "chain", "open-txn", "undecodable"} {
		if shapes[s] == 0 {
			t.Fatalf("no world has %s: the walk would miss its renderer (%v)", s, shapes)
		}
	}
	wait := "--txn-wait=" + worldTxnWait.String()
	// named says the walk met the hostile names where the renderer shows
	// them (elsewhere causalctl shows a topic whose name is not a Kafka
	// topic name by its UUID, which is safe by construction).
	named := func(what, out string) {
		t.Helper()
		if !strings.Contains(out, "EVIL") {
			t.Errorf("%s names nothing of the world: the walk checked nothing there:\n%s", what, out)
		}
	}
	read := func(what, out string) {
		t.Helper()
		testutil.NoRawHostile(t, what, out)
	}
	var commands string
	for _, wd := range worlds[:3] {
		for _, args := range [][]string{
			{"state", "--app", wd.App, wait},
			{"holds", "--app", wd.App, wait},
			{"holds", "-t", strings.Join(wd.Topics, ","), "--from-group", wd.App, wait},
			{"processes", "--app", wd.App, wait},
			{"replay", "--app", wd.App, wait, "-o", "text"},
		} {
			// The exit codes vary with the world (a corrupt entry is exit 1).
			_, out, stderr := runAt(t, addr, now, args...)
			read(args[0]+" of "+wd.String(), out+stderr)
			commands += out + stderr
		}
	}
	named("the commands of every world (a running group's subscriptions)", commands)
	for _, args := range [][]string{{"processes", wait}, {"topics"}} {
		code, out, stderr := runAt(t, addr, now, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
		}
		read(args[0]+" of every world", out+stderr)
		named(args[0]+" of every world", out)
	}

	clk := newTestClock(now)
	e := startExporter(t, addr, clk)
	e.await(t, "every world's series", func(body string) bool {
		return strings.Count(body, "parsley_changelog_entries_read_total{") >= len(worlds)
	})
	for _, path := range []string{"/", "/processes/" + url.PathEscape(worlds[0].App), "/processes/" + url.PathEscape(worlds[0].App) + "/tasks/0"} {
		code, body := httpGet(t, e.url+path)
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		// A newline in HTML text is a space on the page (the templates'
		// own newlines cannot be told from a name's): it forges no line.
		read("the exporter's page "+path, strings.ReplaceAll(body, "\nforged line", " forged line"))
		if path == "/" {
			named("the exporter's page /", body)
		}
	}
	clk.add(2 * time.Minute) // past --unhealthy-after, so that /healthz says why
	_, body := e.health(t)
	testutil.NoRawHostile(t, "/healthz", body)
	e.stop()
	testutil.NoRawHostile(t, "the exporter's stderr", e.stderr.String())
}
