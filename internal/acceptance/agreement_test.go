package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/tracker"
	"github.com/causalctl/causalctl/internal/view"
)

// The parts of the commands' JSON the agreement tests read.
type (
	// jsonAt is a record by channel and offset (a failed closed task's).
	jsonAt struct {
		Channel string
		Offset  int64
	}
	// jsonRoot is a root of held heads.
	jsonRoot struct {
		Channel string
		Offset  int64
		Cause   string
	}
	// jsonNextStart is a next start's prediction.
	jsonNextStart struct {
		Refusals []struct{ Reason string }
	}
)

// story is what every way into a Parsley process must say alike: its
// held heads and records, the heads by cause, the roots their chains end
// at (CHANNEL@OFFSET cause), the tasks failed closed and the next start's
// refusals.
type story struct {
	Heads, Records int
	Causes         map[string]int
	Roots          []string
	FailedClosed   []string
	Refusals       []string
}

func (s story) String() string {
	return fmt.Sprintf("heads %d, records %d, causes %v, roots %v, failed closed %v, refusals %v",
		s.Heads, s.Records, s.Causes, s.Roots, s.FailedClosed, s.Refusals)
}

// sameStory compares two stories; which says what is compared (the
// exporter knows no roots).
func sameStory(a, b story, roots bool) bool {
	if !roots {
		a.Roots, b.Roots = nil, nil
	}
	return a.Heads == b.Heads && a.Records == b.Records && maps.Equal(a.Causes, b.Causes) &&
		slices.Equal(a.Roots, b.Roots) && slices.Equal(a.FailedClosed, b.FailedClosed) && slices.Equal(a.Refusals, b.Refusals)
}

// TestEveryWayTellsOneStory: against the demo's notifier under every fault
// the demo has (none included), stopped once it has read what it can, the
// ways into a Parsley process — state --app, holds --app, holds
// --from-group (which reads a Parsley process as --app does), processes
// --app and the exporter's tracker — agree on the held heads, their
// causes, the roots, the records held, the tasks failed closed and the
// next start.
func TestEveryWayTellsOneStory(t *testing.T) {
	faults := []demo.Fault{"", demo.FaultUndecodable, demo.FaultDangling, demo.FaultSlow, demo.FaultCycle,
		demo.FaultUnfolded, demo.FaultOpenTxn, demo.FaultMarkerClaim}
	for _, fault := range faults {
		name := string(fault)
		if name == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			d, _ := demotest.Settled(ctx, t, demo.Config{Seed: 4, Fault: fault, FaultStep: 8, Steps: 30, Lags: map[string]time.Duration{}})
			now := time.Now()
			got := map[string]story{
				"state --app":        stateStory(t, d.Addr(), now),
				"holds --app":        holdsStory(t, d.Addr(), now, "holds", "--app", demo.NotifierApp),
				"holds --from-group": holdsStory(t, d.Addr(), now, "holds", "-t", "orders,payments,shipments", "--from-group", demo.NotifierApp),
				"processes --app":    processesStory(t, d.Addr(), now),
			}
			want := got["state --app"]
			t.Logf("state --app: %s", want)
			if fault == demo.FaultDangling && !slices.ContainsFunc(want.Roots, func(r string) bool { return strings.HasSuffix(r, " beyond-log-end") }) {
				t.Errorf("dangling: no beyond-log-end root: %s", want)
			}
			if fault == demo.FaultUndecodable && (len(want.FailedClosed) == 0 || !slices.Contains(want.Refusals, "UNDECODABLE_METADATA")) {
				t.Errorf("undecodable: not failed closed: %s", want)
			}
			for way, s := range got {
				if !sameStory(s, want, way != "processes --app") {
					t.Errorf("%s says\n  %s\nstate --app says\n  %s", way, s, want)
				}
			}
			if ex := exporterStory(t, ctx, d.Addr(), now); !sameStory(ex, want, false) {
				t.Errorf("the exporter says\n  %s\nstate --app says\n  %s", ex, want)
			}
			snap := watchSnapshotOf(t, "the demo", demo.NotifierApp, d.Addr(), now)
			if w := watchStory(snap, want); !sameStory(w, want, true) {
				t.Errorf("watch --app says\n  %s\nstate --app says\n  %s", w, want)
			}
			checkFaultGoldens(t, name, d.Addr(), now, snap)
		})
	}
}

func stateStory(t *testing.T, addr string, now time.Time) story {
	t.Helper()
	code, out, stderr := runAt(t, addr, now, "state", "--app", demo.NotifierApp, "-o", "json")
	var rep struct {
		HeldHeads   int `json:"held_heads"`
		HeldRecords int `json:"held_records"`
		Tasks       []struct {
			Channels []struct {
				Head *struct{ Cause string }
			}
			Roots        []jsonRoot
			FailedClosed *jsonAt `json:"failed_closed"`
		}
		NextStart jsonNextStart `json:"next_start"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("state: exit %d: %v: %s", code, err, stderr)
	}
	s := story{Heads: rep.HeldHeads, Records: rep.HeldRecords, Causes: map[string]int{}}
	for _, task := range rep.Tasks {
		for _, c := range task.Channels {
			if c.Head != nil && c.Head.Cause != "ready" {
				s.Causes[c.Head.Cause]++
			}
		}
		for _, r := range task.Roots {
			s.Roots = append(s.Roots, fmt.Sprintf("%s@%d %s", r.Channel, r.Offset, r.Cause))
		}
		if f := task.FailedClosed; f != nil {
			s.FailedClosed = append(s.FailedClosed, fmt.Sprintf("%s@%d", f.Channel, f.Offset))
		}
	}
	for _, r := range rep.NextStart.Refusals {
		s.Refusals = append(s.Refusals, r.Reason)
	}
	slices.Sort(s.Roots)
	slices.Sort(s.Refusals)
	return s
}

func holdsStory(t *testing.T, addr string, now time.Time, args ...string) story {
	t.Helper()
	code, out, stderr := runAt(t, addr, now, append(args, "-o", "json")...)
	var rep struct {
		HeldHeads   int `json:"held_heads"`
		HeldRecords int `json:"held_records"`
		Roots       []struct {
			Channel string
			Offset  int64
			Cause   string
		}
		Heads []struct{ Cause string }
		Tasks []struct {
			FailedClosed *jsonAt `json:"failed_closed"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: exit %d: %v: %s", args, code, err, stderr)
	}
	s := story{Heads: rep.HeldHeads, Records: rep.HeldRecords, Causes: map[string]int{}}
	for _, h := range rep.Heads {
		s.Causes[h.Cause]++
	}
	for _, r := range rep.Roots {
		s.Roots = append(s.Roots, fmt.Sprintf("%s@%d %s", r.Channel, r.Offset, r.Cause))
	}
	for _, task := range rep.Tasks {
		if f := task.FailedClosed; f != nil {
			s.FailedClosed = append(s.FailedClosed, fmt.Sprintf("%s@%d", f.Channel, f.Offset))
		}
	}
	// holds names no next start: the state's refusals stand in, so that
	// only what holds says is compared.
	s.Refusals = stateStory(t, addr, now).Refusals
	slices.Sort(s.Roots)
	return s
}

func processesStory(t *testing.T, addr string, now time.Time) story {
	t.Helper()
	code, out, stderr := runAt(t, addr, now, "processes", "--app", demo.NotifierApp, "-o", "json")
	var rep struct {
		Processes []struct {
			HeldRecords  int            `json:"held_records"`
			HeldHeads    int            `json:"held_heads"`
			Causes       map[string]int `json:"causes"`
			FailedClosed []struct {
				Channel string
				Offset  int64
			} `json:"failed_closed"`
			NextStart jsonNextStart `json:"next_start"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Processes) != 1 {
		t.Fatalf("processes: exit %d: %v: %s %s", code, err, out, stderr)
	}
	p := rep.Processes[0]
	s := story{Heads: p.HeldHeads, Records: p.HeldRecords, Causes: p.Causes}
	for _, f := range p.FailedClosed {
		s.FailedClosed = append(s.FailedClosed, fmt.Sprintf("%s@%d", f.Channel, f.Offset))
	}
	for _, r := range p.NextStart.Refusals {
		s.Refusals = append(s.Refusals, r.Reason)
	}
	slices.Sort(s.Refusals)
	return s
}

// exporterStory is what the exporter's tracker publishes of the notifier
// after one refresh.
func exporterStory(t *testing.T, ctx context.Context, addr string, now time.Time) story {
	t.Helper()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tr := tracker.New(tracker.Config{Client: cl, Now: func() time.Time { return now }})
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	snap, _ := tr.Latest()
	var s story
	for _, p := range snap.Processes {
		if p.App != demo.NotifierApp {
			continue
		}
		s.Causes = map[string]int{}
		for _, task := range p.Tasks {
			s.Records += task.HeldCount()
			for c, n := range task.Heads {
				s.Causes[string(c)] += n
				s.Heads += n
			}
			if f := task.FailedClosed; f != nil {
				// Named as the commands name it: by topic name.
				s.FailedClosed = append(s.FailedClosed, fmt.Sprintf("%s/%d@%d", topicNameOf(t, cl, f.Channel.Topic.String()), f.Channel.Partition, f.Offset))
			}
		}
		for r, n := range p.StartRefusals {
			for range n {
				s.Refusals = append(s.Refusals, string(r))
			}
		}
	}
	slices.Sort(s.Refusals)
	return s
}

func topicNameOf(t *testing.T, cl *kafka.Client, id string) string {
	t.Helper()
	for _, name := range cl.Names().All() {
		if tid, _ := cl.Names().ID(name); tid.String() == id {
			return name
		}
	}
	return id
}

// watchStory is what watch --app's live view model shows of the notifier
// once it has read on to the log's end: its held heads, their causes and
// roots, and the task failed closed. The records it counts are those its
// gates still hold, not the store's, and it predicts no next start: the
// state's stand in (from state), so that only what watch shows is
// compared.
func watchStory(snap view.Snapshot, state story) story {
	s := story{Heads: len(snap.Heads), Records: state.Records, Causes: map[string]int{}, Refusals: state.Refusals}
	roots := map[string]bool{}
	for _, h := range snap.Heads {
		s.Causes[string(h.Cause)]++
		roots[fmt.Sprintf("%s@%d %s", h.Root, h.RootOffset, h.RootCause)] = true
	}
	s.Roots = slices.Sorted(maps.Keys(roots))
	if f := snap.Failure; f != nil {
		s.FailedClosed = []string{fmt.Sprintf("%s@%d", f.Channel, f.Offset)}
	}
	return s
}
