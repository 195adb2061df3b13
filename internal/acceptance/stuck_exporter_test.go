package acceptance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/causalctl/causalctl/internal/parsley"
)

// TestExporterStuckPartition: one changelog partition whose offsets the
// broker stops listing (NOT_LEADER_FOR_PARTITION for good) fails its
// process's refresh after --txn-wait, said on stderr naming the partition,
// and no other: a process that appears meanwhile is published, the others'
// series stay. /healthz is 200 within --unhealthy-after (on the test's
// clock) and 503 past it; once the partition answers, the refreshes
// succeed again.
func TestExporterStuckPartition(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c, ww := worldCluster(t, "stuck", now)
	addr := c.ListenAddrs()[0]
	stuck, other := ww.write(1), ww.write(2)
	series := func(app string) string { return fmt.Sprintf("parsley_changelog_entries_read_total{app=%q}", app) }
	published := func(body, app string) bool { _, ok := metricValue(body, series(app)); return ok }

	clk := newTestClock(now)
	e := startExporter(t, addr, clk)
	e.await(t, "both processes", func(b string) bool { return published(b, stuck.App) && published(b, other.App) })

	fault := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: parsley.ChangelogTopic(stuck.App), Partitions: []int32{0},
		Err: kerr.NotLeaderForPartition, Count: -1})
	line := e.stderr.Wait(t, 20*time.Second, "the stuck partition on stderr", func(s string) bool {
		return strings.Contains(s, "listing offsets of "+parsley.ChangelogTopic(stuck.App)+"/0: still failing after 1s: NOT_LEADER_FOR_PARTITION")
	})
	if !strings.Contains(line, "causalctl: exporter: "+stuck.App+": ") {
		t.Errorf("stderr %q: want the process named", line)
	}
	if code, why := e.health(t); code != 200 || !strings.HasPrefix(why, "ok: refreshes failing for ") {
		t.Errorf("/healthz within --unhealthy-after: %d %q", code, why)
	}
	// A process written while the partition is stuck is found and read
	// by the same refreshes.
	late := ww.write(3)
	e.await(t, "the process written meanwhile", func(b string) bool { return published(b, late.App) && published(b, other.App) })
	clk.add(2 * time.Minute)
	if code, why := e.health(t); code != 503 || !strings.HasPrefix(why, "refreshes failing for 2m0s: ") {
		t.Errorf("/healthz past --unhealthy-after: %d %q", code, why)
	}
	fault.Remove()
	e.await(t, "a successful refresh once the partition answers", func(b string) bool { return refreshedAt(b, clk) })
	if code, why := e.health(t); code != 200 || why != "ok\n" {
		t.Errorf("/healthz healed: %d %q", code, why)
	}
}
