package acceptance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley/parsleytest"
)

// This file is the changing cluster under the commands that read a
// Parsley process's changelog (state, processes, exporter), each case
// with its answer in docs/troubleshooting.md.

// recreateChangelog deletes faultApp's changelog and creates it again
// (a new topic ID), empty, with 2 partitions.
func recreateChangelog(t *testing.T, adm *kadm.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.DeleteTopics(ctx, faultChangelog); err != nil {
		t.Error(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, faultChangelog); err != nil {
		t.Error(err)
	}
}

// deleteChangelogHead deletes the entries of faultApp's task 0 below 100.
func deleteChangelogHead(t *testing.T, adm *kadm.Client) { deleteBelow(t, adm, faultChangelog, 0, 100) }

// TestChangelogChangesMidRead: state and processes read a changelog from
// its start to the end listed when the read began; its topic deleted and
// recreated meanwhile is an identity change, and its head deleted before
// it was read is a gap — each exit 1 and one line, never the store of the
// part read.
func TestChangelogChangesMidRead(t *testing.T) {
	for _, tc := range []struct {
		change string
		do     func(*testing.T, *kadm.Client)
		want   string
	}{
		{"recreated", recreateChangelog, fmt.Sprintf(`channel-identity-changed: topic %q was `, faultChangelog)},
		{"head deleted", deleteChangelogHead, "offsets 0 to 99 of " + faultChangelog + "/0 were deleted before they were read"},
	} {
		for _, args := range [][]string{{"state", "--app", faultApp, "-o", "json"}, {"processes", "-o", "json"}} {
			t.Run(tc.change+"/"+args[0], func(t *testing.T) {
				fc := newFaultCluster(t)
				adm := kadm.NewClient(fc.writer(t))
				duringFirstFetch(fc.Cluster, func() { tc.do(t, adm) })
				code, out, stderr := faultRun(t, fc, args...)
				if code != cmdutil.ExitFailure || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
					t.Errorf("exit %d, stderr %q: want 1 and one line saying %q", code, stderr, tc.want)
				}
				if strings.Contains(out, `"held_records"`) && !strings.Contains(out, `"error"`) {
					t.Errorf("a report of the part read:\n%.600s", out)
				}
			})
		}
	}
}

// TestExporterChangelogRecreated: the changelog deleted and recreated
// under its name while the exporter follows it is reported as an identity
// change, and the process is then the new topic's alone: its entries and
// holds, none of the old store's (never merged, nothing counted twice).
func TestExporterChangelogRecreated(t *testing.T) {
	fc := newFaultCluster(t)
	clk := newTestClock(faultNow)
	e := startExporter(t, fc.brokers, clk)
	old := `parsley_records_held{app="shop",task="0",topic="payments"} 1`
	e.await(t, "the old store", func(b string) bool { return strings.Contains(b, old) })

	recreateChangelog(t, kadm.NewClient(fc.writer(t)))
	// The new store: task 1 holds orders/1@7, waiting for orders/0@8.
	held := parsleytest.Held{Channel: clock.Channel{Topic: fc.orders, Partition: 1}, Offset: 7, Timestamp: faultNow.Add(-time.Minute).UnixMilli(),
		Value: []byte("v"), Causes: []clock.Entry{{Channel: clock.Channel{Topic: fc.orders, Partition: 0}, Position: 8}}}
	names := map[string]clock.TopicID{"orders": fc.orders, "payments": fc.payments}
	recs := append(parsleytest.Bindings(faultApp, 1, names), held.Entry(faultApp, 1))
	kafkatest.Transact(t, fc.txnWriter(t, faultApp+"-new"), recs...)
	newHeld := `parsley_records_held{app="shop",task="1",topic="orders"} 1`
	body := e.await(t, "the new store alone", func(b string) bool {
		if strings.Contains(b, old) && strings.Contains(b, newHeld) {
			t.Fatalf("the old and the new store merged:\n%s", processLines(b))
		}
		return strings.Contains(b, newHeld)
	})
	if n, _ := metricValue(body, entriesSeries); n != float64(len(recs)) {
		t.Errorf("%s %v, want the new topic's %d entries", entriesSeries, n, len(recs))
	}
	if strings.Contains(body, `task="0",topic="payments"} 1`) {
		t.Errorf("the old store's hold still exported:\n%s", processLines(body))
	}
	e.stderr.Wait(t, 10*time.Second, "the identity change said", func(s string) bool {
		return strings.Contains(s, "causalctl: exporter: ") && strings.Contains(s, `channel-identity-changed: topic "`+faultChangelog+`"`)
	})
}

// TestExporterLeaderMoves: the leaders of the changelog's partitions
// moving to other brokers of a three-broker cluster — during the
// exporter's first read of it, and again while it follows — change
// nothing: the fault-free metrics, then the entry written after the
// second move, each entry counted once.
func TestExporterLeaderMoves(t *testing.T) {
	fc := newFaultCluster(t, kfake.NumBrokers(3))
	e := startExporter(t, fc.brokers, newTestClock(faultNow))
	want := processLines(e.await(t, "the fault-free metrics", func(b string) bool {
		n, _ := metricValue(b, entriesSeries)
		return n == faultEntries
	}))
	if code := e.stop(); code != cmdutil.ExitOK {
		t.Fatalf("exit %d, want %d", code, cmdutil.ExitOK)
	}

	moved := moveLeadersDuringFirstFetch(t, fc, faultChangelog)
	e = startExporter(t, fc.brokers, newTestClock(faultNow))
	e.await(t, "the fault-free metrics after the leaders moved", func(b string) bool { return processLines(b) == want })
	if len(moved) != 2 {
		t.Fatalf("the leaders did not move")
	}

	// Followed: move them again, then task 1 holds orders/1@7.
	moveLeaders(t, fc, faultChangelog, make(chan int32, 2))
	e.entries = faultEntries + 1
	held := parsleytest.Held{Channel: clock.Channel{Topic: fc.orders, Partition: 1}, Offset: 7, Timestamp: faultNow.Add(-time.Minute).UnixMilli(),
		Value: []byte("v"), Causes: []clock.Entry{{Channel: clock.Channel{Topic: fc.orders, Partition: 0}, Position: 1_000_000}}}
	kafkatest.Transact(t, fc.txnWriter(t, faultApp+"-1"), held.Entry(faultApp, 1))
	body := e.await(t, "the entry written after the second move", func(b string) bool {
		return strings.Contains(b, `parsley_records_held{app="shop",task="1",topic="orders"} 1`)
	})
	if n, _ := metricValue(body, entriesSeries); n != faultEntries+1 {
		t.Errorf("%s %v, want %d", entriesSeries, n, faultEntries+1)
	}
	if n := failedRefreshes(body); n != 0 {
		t.Errorf("%v failed refreshes: %s", n, e.stderr.String())
	}
	if code := e.stop(); code != cmdutil.ExitOK {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitOK)
	}
}

// TestExporterTaskWidthChanged: a partition added to a received topic
// while the exporter runs changes the process's task width — Parsley's
// next start would refuse with TASK_WIDTH_CHANGED — and the exporter says
// so at its next refresh.
func TestExporterTaskWidthChanged(t *testing.T) {
	fc := newFaultCluster(t)
	e := startExporter(t, fc.brokers, newTestClock(faultNow))
	refused := `parsley_process_start_refusals{app="shop",reason="TASK_WIDTH_CHANGED"} `
	e.await(t, "no refusal", func(b string) bool { return strings.Contains(b, refused+"0") })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(fc.writer(t)).CreatePartitions(ctx, 1, "orders"); err != nil {
		t.Fatal(err)
	}
	e.await(t, "TASK_WIDTH_CHANGED", func(b string) bool { return strings.Contains(b, refused+"1") })
}

// TestExporterChangelogGap: entries of the changelog deleted before the
// exporter read them are a gap: the store can no longer be rebuilt from
// the changelog. The exporter says so once (stderr, a refresh error),
// flags the process (parsley_changelog_gap 1) and exports nothing of a
// store missing entries — and does not follow it again from the new log
// start as if it were whole; its refreshes go on succeeding.
func TestExporterChangelogGap(t *testing.T) {
	fc := newFaultCluster(t)
	adm := kadm.NewClient(fc.writer(t))
	duringFirstFetch(fc.Cluster, func() { deleteChangelogHead(t, adm) })
	clk := newTestClock(faultNow)
	e := startExporter(t, fc.brokers, clk)
	gap := fmt.Sprintf(`parsley_changelog_gap{app=%q} 1`, faultApp)
	e.await(t, "the gap flagged", func(b string) bool { return strings.Contains(b, gap) })
	e.stderr.Wait(t, 10*time.Second, "the gap said", func(s string) bool {
		return strings.Contains(s, "causalctl: exporter: shop: offsets 0 to 99 of "+faultChangelog+"/0 were deleted before the exporter read them")
	})
	// Refreshes and rediscoveries after it (each refresh stamped with the
	// moved clock): still flagged, nothing else of the process exported.
	for range 6 {
		clk.add(time.Second)
		body := e.await(t, "a successful refresh", func(b string) bool { return refreshedAt(b, clk) })
		if !strings.Contains(body, gap) || processLines(body) != gap {
			t.Fatalf("after the gap:\n%s\nwant only %s", processLines(body), gap)
		}
	}
	if code, why := e.health(t); code != 200 || why != "ok\n" {
		t.Errorf("/healthz %d %q: the exporter works, the process's changelog is what is wrong", code, why)
	}
	if n := strings.Count(e.stderr.String(), "were deleted before"); n != 1 {
		t.Errorf("the gap said %d times, want once:\n%s", n, e.stderr.String())
	}
}
