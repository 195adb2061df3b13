package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine/enginetest"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/gate/gatetest"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/record"
)

// TestOracleThroughCaptures runs simulated worlds end to end: each world's
// logs are written as a capture by the capture writer, replayed by the
// command (reader, interleaver, gate, NDJSON writer) in every interleaving
// with a random scope and starts, and every delivery is checked by the
// ground-truth oracle, which never reads clocks.
func TestOracleThroughCaptures(t *testing.T) {
	seeds := 120
	if testing.Short() {
		seeds = 20
	}
	modes := []string{"file", "timestamp", "channel", "round-robin", "random:%d"}
	var runs, failedClosed, deliveries int
	dir := t.TempDir()
	for seed := 1; seed <= seeds; seed++ {
		w := gatetest.Simulate(gatetest.Config{Seed: uint64(seed), Corrupt: seed%4 == 0, Steps: 150})
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		plan := w.RandomPlan(rng)
		if len(plan.Scope) == 0 {
			plan.Scope = w.Channels
		}
		startsInFile := seed%2 == 0
		path := filepath.Join(dir, fmt.Sprintf("world-%d.ndjson", seed))
		writeWorld(t, w, plan, startsInFile, rng, path)

		args := []string{"-f", path, "--scope", channelList(w, plan.Scope)}
		if !startsInFile {
			for ch, s := range plan.Starts {
				args = append(args, "--start", fmt.Sprintf("%s=%d", w.Names.Channel(ch), s))
			}
		}
		if plan.Mode != 0 {
			args = append(args, "--undecodable", "hold")
		}
		for _, m := range modes {
			if strings.Contains(m, "%d") {
				m = fmt.Sprintf(m, seed)
			}
			runs++
			err, out, _ := exec(t, context.Background(), false, "", append(args, "--interleave", m)...)
			chk := w.NewChecker()
			for _, ch := range plan.Scope {
				chk.Join(ch, plan.Starts[ch])
			}
			failed := checkEvents(t, w, chk, out)
			if failed != nil {
				failedClosed++
				wasFailed := t.Failed()
				enginetest.SummaryFailed(t, failed, failed.Channel, failed.Offset, gate.Code(clock.CodeTruncated))
				enginetest.FailedClosed(t, err, failed.Channel, failed.Offset, gate.Code(clock.CodeTruncated))
				if !wasFailed && t.Failed() {
					t.Logf("seed %d %s: the summary says the gate failed closed at %s offset %d", seed, m, failed.Channel, failed.Offset)
				}
			} else if err != nil {
				t.Fatalf("seed %d %s: %v", seed, m, err)
			} else if !heldCorrupt(w, plan) {
				chk.Complete()
			}
			for _, v := range chk.Violations() {
				t.Errorf("seed %d %s: %v", seed, m, v)
			}
			deliveries += chk.Delivered()
		}
	}
	t.Logf("%d replays of %d worlds: %d deliveries checked, %d failed closed", runs, seeds, deliveries, failedClosed)
	if deliveries < runs*10 || failedClosed == 0 {
		t.Errorf("the worlds are too small to prove anything: %d deliveries, %d fail-closed", deliveries, failedClosed)
	}
}

// heldCorrupt reports whether an undecodable record in range stays held
// forever (hold mode), so that not everything can be delivered.
func heldCorrupt(w *gatetest.World, p gatetest.Plan) bool {
	for _, ch := range p.Scope {
		for _, r := range w.Logs[ch].Records {
			if r.Corrupt && r.Offset >= p.Starts[ch] {
				return true
			}
		}
	}
	return false
}

func channelList(w *gatetest.World, chs []clock.Channel) string {
	names := make([]string, len(chs))
	for i, ch := range chs {
		names[i] = w.Names.Channel(ch)
	}
	return strings.Join(names, ",")
}

// writeWorld writes every channel of w (in scope or not) as a capture in a
// random interleaving, with position lines for gaps and at each end.
func writeWorld(t *testing.T, w *gatetest.World, p gatetest.Plan, startsInFile bool, rng *rand.Rand, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cw := capture.NewWriter(f)
	item := func(ch clock.Channel) *record.Item {
		name, _ := w.Names.Name(ch.Topic)
		return &record.Item{Topic: name, TopicID: ch.Topic, Partition: ch.Partition}
	}
	if startsInFile {
		for ch, s := range p.Starts {
			it := item(ch)
			it.Kind, it.Offset = record.KindPosition, s
			if err := cw.Write(it); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A capture's offsets never go backwards on a channel (SPEC §4): what
	// the world feeds below an offset already written (a start in the
	// file, a redelivery) is left out, as the gate would drop it.
	last := map[clock.Channel]int64{}
	if startsInFile {
		maps.Copy(last, p.Starts)
	}
	for _, in := range w.Inputs(w.FullPlan(), rng) {
		if l, ok := last[in.Channel]; ok && in.Offset < l {
			continue
		}
		last[in.Channel] = in.Offset
		it := item(in.Channel)
		it.Offset = in.Offset
		switch in.Kind {
		case gatetest.InputAdvance:
			it.Kind = record.KindPosition
		case gatetest.InputRecord:
			it.Kind = record.KindRecord
			it.Timestamp, it.HasTimestamp = int64(in.Record.ID), true
			value := clock.Encode(in.Record.Clock)
			if in.Record.Corrupt {
				value = value[:1] // the version alone: truncated
			}
			it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: value}}
		default:
			t.Fatalf("unexpected input %+v", in)
		}
		if err := cw.Write(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// checkEvents feeds the NDJSON events to the checker and returns where the
// summary says the gate failed closed (nil when it did not).
func checkEvents(t *testing.T, w *gatetest.World, chk *gatetest.Checker, out string) *inspect.Failure {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	sawSummary := false
	var failed *inspect.Failure
	for sc.Scan() {
		var ev struct {
			Type    string
			Channel string
			Offset  int64
			Failed  *inspect.Failure
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad event %q: %v", sc.Text(), err)
		}
		if ev.Type == "summary" {
			sawSummary = true
			if ev.Failed != nil {
				ch, err := w.Names.ParseChannel(ev.Failed.Channel)
				if err != nil {
					t.Fatal(err)
				}
				if r := w.Record(ch, ev.Failed.Offset); r == nil || !r.Corrupt {
					t.Errorf("failed closed at %s@%d, which is not an undecodable record", ev.Failed.Channel, ev.Failed.Offset)
				}
				failed = ev.Failed
			}
			continue
		}
		if ev.Type == "hold" {
			continue
		}
		ch, err := w.Names.ParseChannel(ev.Channel)
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "deliver":
			chk.Deliver(ch, ev.Offset)
		case "drop":
			chk.Drop(ch, ev.Offset)
		default:
			t.Fatalf("unknown event %q", sc.Text())
		}
	}
	if !sawSummary {
		t.Fatalf("no summary in the output")
	}
	return failed
}
