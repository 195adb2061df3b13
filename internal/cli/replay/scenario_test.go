package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// scenario is one gate scenario of testdata/gate: a scope and the
// inputs fed to one gate, with the deliveries, drops and failure the gate
// test expects.
type scenario struct {
	where    string
	scope    []string
	starts   []string
	hold     bool
	receipt  bool       // mode receipt-only: --position-advance=false
	inputs   [][]string // recv and advance commands
	want     []string   // deliver/drop lines, then "error: …" if it fails closed
	skip     string     // why the command cannot replay it
	channels map[string]bool
}

// undecodableValues are header values that decode to each reason code used
// by the scenarios.
var undecodableValues = map[string][]byte{
	"truncated":       {0x01},
	"unknown-version": {0x02, 0x00},
}

func parseScenarios(t *testing.T, file string) []*scenario {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenario
	var cur *scenario
	lines := strings.Split(string(b), "\n")
	for n := 0; n < len(lines); n++ {
		f := strings.Fields(lines[n])
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if f[0] == "----" {
			for n+1 < len(lines) && lines[n+1] != "" {
				n++
				l := lines[n]
				if cur != nil && (strings.HasPrefix(l, "deliver ") || strings.HasPrefix(l, "drop ") || strings.HasPrefix(l, "error: ")) {
					cur.want = append(cur.want, l)
				}
			}
			continue
		}
		if f[0] == "scope" {
			cur = &scenario{where: fmt.Sprintf("%s:%d", filepath.Base(file), n+1), scope: f[1:], channels: map[string]bool{}}
			out = append(out, cur)
			continue
		}
		switch f[0] {
		case "start":
			cur.starts = append(cur.starts, f[1:]...)
		case "mode":
			cur.hold = cur.hold || f[1] == "hold"
			cur.receipt = cur.receipt || f[1] == "receipt-only"
		case "recv", "advance":
			cur.inputs = append(cur.inputs, f)
			cur.channels[f[1]] = true
			if f[0] == "recv" && len(f) == 4 && strings.HasPrefix(f[3], "!") && undecodableValues[f[3][1:]] == nil {
				cur.skip = "an undecodable header with no wire form: " + f[3]
			}
		case "state", "chain":
		default: // add, new: scope growth and construction errors are the gate's own
			cur.skip = "uses " + f[0]
		}
	}
	for _, s := range out {
		last := map[string]int64{}
		for _, in := range s.inputs {
			var o int64
			fmt.Sscan(in[2], &o)
			if l, ok := last[in[1]]; ok && o < l && s.skip == "" {
				// The replay guard's drops of an earlier offset are the
				// gate's to test: no capture holds them (SPEC §4).
				s.skip = fmt.Sprintf("offsets go backwards on %s (%d after %d), which a capture refuses", in[1], o, l)
			}
			last[in[1]] = max(last[in[1]], o)
		}
		for _, w := range s.want {
			if strings.HasPrefix(w, "error: gate: ") {
				s.skip = "expects an input error: " + w
			}
		}
	}
	return out
}

// TestGateScenariosEndToEnd replays the gate's directed scenarios through a
// capture file and the replay command, and expects the same deliveries,
// drops and fail-closed error as the gate test does.
func TestGateScenariosEndToEnd(t *testing.T) {
	files, _ := filepath.Glob(testutil.Testdata("gate", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no gate scenarios found")
	}
	ran := 0
	for _, file := range files {
		for _, sc := range parseScenarios(t, file) {
			if sc.skip != "" {
				t.Logf("%s: skipped: %s", sc.where, sc.skip)
				continue
			}
			ran++
			t.Run(sc.where, func(t *testing.T) { runScenario(t, sc) })
		}
	}
	if ran < 12 {
		t.Errorf("only %d scenarios ran end to end", ran)
	}
}

func runScenario(t *testing.T, sc *scenario) {
	names := &clock.Names{}
	topicOf := func(ch string) clock.TopicID {
		topic, _, _ := strings.Cut(ch, "/")
		if id, ok := names.ID(topic); ok {
			return id
		}
		var id clock.TopicID
		copy(id[:], topic) // the gate driver's UUIDs, so that orders agree
		if err := names.Add(topic, id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	for _, ch := range sc.scope {
		topicOf(ch)
	}
	path := filepath.Join(t.TempDir(), "scenario.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := capture.NewWriter(f)
	for _, in := range sc.inputs {
		topic, part, _ := strings.Cut(in[1], "/")
		id := topicOf(in[1])
		var p int32
		fmt.Sscan(part, &p)
		it := &record.Item{Topic: topic, TopicID: id, Partition: p}
		fmt.Sscan(in[2], &it.Offset)
		if in[0] == "advance" {
			it.Kind = record.KindPosition
		} else {
			it.Kind = record.KindRecord
			if len(in) == 4 {
				var value []byte
				if code, bad := strings.CutPrefix(in[3], "!"); bad {
					value = undecodableValues[code]
				} else {
					for part := range strings.SplitSeq(in[3], ",") {
						if part != "{}" {
							ch, _, _ := strings.Cut(part, "=")
							topicOf(ch)
						}
					}
					c, err := names.Parse(in[3])
					if err != nil {
						t.Fatal(err)
					}
					value = clock.Encode(c)
				}
				it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: value}}
			}
		}
		if err := w.Write(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	args := []string{"-f", path, "--scope", strings.Join(sc.scope, ",")}
	for _, s := range sc.starts {
		args = append(args, "--start", s)
	}
	if sc.hold {
		args = append(args, "--undecodable", "hold")
	}
	if sc.receipt {
		args = append(args, "--position-advance=false")
	}
	var topicIDs []string
	for _, topic := range names.All() {
		id, _ := names.ID(topic)
		topicIDs = append(topicIDs, "--topic-id", topic+"="+id.String())
	}
	err, out, _ := exec(t, context.Background(), false, "", append(args, topicIDs...)...)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type, Channel string
			Seq, Offset   int64
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			t.Fatalf("bad output line %q", line)
		}
		switch ev.Type {
		case "deliver":
			got = append(got, fmt.Sprintf("deliver #%d %s@%d", ev.Seq, ev.Channel, ev.Offset))
		case "drop":
			got = append(got, fmt.Sprintf("drop %s@%d", ev.Channel, ev.Offset))
		}
	}
	if err != nil {
		got = append(got, "error: "+err.Error())
	}
	want := sc.want
	// The gate repeats its fail-closed error for every later input; the
	// command stops at the first. Compare up to it, by code and place.
	for i, w := range want {
		if strings.HasPrefix(w, "error: ") {
			want = want[:i+1]
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if g, w := got[i], want[i]; g != w && !(strings.HasPrefix(g, "error: ") && sameFailure(err, w)) {
			t.Fatalf("event %d: got %q, want %q\nall:\n%s", i, g, w, strings.Join(got, "\n"))
		}
	}
}

// sameFailure matches the command's error with the gate's expected one
// ("gate failed closed at a/0 offset 2: truncated"): the gate failed
// closed at that channel and offset, with that code.
func sameFailure(err error, want string) bool {
	var ch, code string
	var off int64
	if _, err := fmt.Sscanf(want, "error: gate failed closed at %s offset %d: %s", &ch, &off, &code); err != nil {
		return false
	}
	ie, ok := engine.FailureOf(err)
	return ok && ie.Channel == ch && ie.Offset == off && string(ie.Code) == strings.TrimSuffix(code, ":")
}
