package gate_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/testutil"
)

// conformanceDir holds captures of a real Parsley cluster and the deliveries
// Parsley made (see its README), in ../shared beside the checkout.
func conformanceDir(t testing.TB) string {
	return testutil.Shared(t, "conformance", "parsley-cluster")
}

// unitInput is one line of a capture: a record or a position.
type unitInput struct {
	ch       clock.Channel
	offset   int64
	position bool // a position line: the consumer reached offset
	clk      clock.Clock
	err      error
}

type unit struct {
	name      string
	names     *clock.Names
	scope     []clock.Channel
	starts    map[clock.Channel]int64
	inputs    []unitInput
	delivered []event // by Parsley, in its order
}

type event struct {
	ch     clock.Channel
	offset int64
}

func loadUnit(t *testing.T, base string) *unit {
	t.Helper()
	u := &unit{name: filepath.Base(base), names: new(clock.Names), starts: map[clock.Channel]int64{}}
	f, err := os.ReadFile(base + ".ndjson")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l struct {
			Topic     string `json:"topic"`
			TopicID   string `json:"topic_id"`
			Partition int32  `json:"partition"`
			Offset    *int64 `json:"offset"`
			Position  *int64 `json:"position"`
			Headers   []struct {
				Key   string  `json:"key"`
				Value []byte  `json:"value"` // base64; null stays nil
				Raw   *string `json:"-"`
			} `json:"headers"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s line %d: %v", base, line, err)
		}
		id, err := clock.ParseTopicID(l.TopicID)
		if err != nil {
			t.Fatalf("%s line %d: %v", base, line, err)
		}
		if err := u.names.Add(l.Topic, id); err != nil {
			t.Fatalf("%s line %d: %v", base, line, err)
		}
		in := unitInput{ch: clock.Channel{Topic: id, Partition: l.Partition}}
		switch {
		case l.Position != nil:
			in.position, in.offset = true, *l.Position
		case l.Offset != nil:
			in.offset = *l.Offset
			hs := make([]clock.Header, len(l.Headers))
			for k, h := range l.Headers {
				hs[k] = clock.Header{Key: h.Key, Value: h.Value}
			}
			in.clk, _, in.err = clock.FromHeaders(hs)
		default:
			t.Fatalf("%s line %d: neither offset nor position", base, line)
		}
		u.inputs = append(u.inputs, in)
	}
	var meta struct {
		Scope     []string          `json:"scope"`
		Start     map[string]int64  `json:"start"`
		Delivered []json.RawMessage `json:"delivered_by_parsley"`
	}
	b, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	for _, s := range meta.Scope {
		u.scope = append(u.scope, u.channel(t, s))
	}
	for s, p := range meta.Start {
		u.starts[u.channel(t, s)] = p
	}
	for _, raw := range meta.Delivered {
		var pair [2]json.RawMessage
		var name string
		var off int64
		if err := json.Unmarshal(raw, &pair); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(pair[0], &name); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(pair[1], &off); err != nil {
			t.Fatal(err)
		}
		u.delivered = append(u.delivered, event{u.channel(t, name), off})
	}
	return u
}

func (u *unit) channel(t *testing.T, s string) clock.Channel {
	t.Helper()
	ch, err := u.names.ParseChannel(s)
	if err != nil {
		t.Fatalf("%s: %v", u.name, err)
	}
	return ch
}

// run feeds inputs to a fresh gate and returns its deliveries.
func (u *unit) run(t *testing.T, inputs []unitInput) (*gate.Gate, []event) {
	t.Helper()
	var opts []gate.Option
	for ch, p := range u.starts {
		opts = append(opts, gate.WithStart(ch, p))
	}
	g, err := gate.New(u.scope, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var out []event
	var evs []gate.Event
	for _, in := range inputs {
		if in.position {
			err = g.Advance(in.ch, in.offset)
		} else {
			err = g.Receive(in.ch, in.offset, in.clk, in.err)
		}
		if err != nil {
			t.Fatalf("%s: %v", u.name, err)
		}
		evs = g.Drain(evs[:0])
		for _, ev := range evs {
			if ev.Kind != gate.EventDeliver {
				t.Fatalf("%s: unexpected %v", u.name, ev)
			}
			out = append(out, event{ev.Channel, ev.Offset})
		}
	}
	return g, out
}

// shuffle returns a random receive interleaving of inputs that keeps the
// order of each channel.
func shuffle(inputs []unitInput, rng *rand.Rand) []unitInput {
	byCh := map[clock.Channel][]unitInput{}
	var chans []clock.Channel
	for _, in := range inputs {
		if _, ok := byCh[in.ch]; !ok {
			chans = append(chans, in.ch)
		}
		byCh[in.ch] = append(byCh[in.ch], in)
	}
	out := make([]unitInput, 0, len(inputs))
	for len(out) < len(inputs) {
		ch := chans[rng.IntN(len(chans))]
		if q := byCh[ch]; len(q) > 0 {
			out = append(out, q[0])
			byCh[ch] = q[1:]
		}
	}
	return out
}

func TestParsleyConformance(t *testing.T) {
	dir := conformanceDir(t)
	metas, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(metas) == 0 {
		t.Fatalf("no conformance data in %s", dir)
	}
	for _, m := range metas {
		base := strings.TrimSuffix(m, ".json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			u := loadUnit(t, base)
			g, got := u.run(t, u.inputs)
			if held := g.Stats().Held; held != 0 {
				t.Errorf("%d records held at the end, first on %v", held, g.Holding())
			}
			if !slices.Equal(got, u.delivered) {
				t.Errorf("in file order the delivery sequence differs from Parsley's:\n got %s\nwant %s",
					u.format(got), u.format(u.delivered))
			}
			// Every interleaving delivers the same set, in an order that
			// keeps FIFO and honours every claim in scope.
			rng := rand.New(rand.NewPCG(1, uint64(len(u.inputs))))
			for range 50 {
				g, got := u.run(t, shuffle(u.inputs, rng))
				if held := g.Stats().Held; held != 0 {
					t.Fatalf("shuffled: %d records held at the end", held)
				}
				u.checkOrder(t, got)
			}
		})
	}
}

// checkOrder checks that seq delivers exactly Parsley's set, per channel in
// offset order, and that every in-scope claim of a record was delivered
// before it (or lies below the start).
func (u *unit) checkOrder(t *testing.T, seq []event) {
	t.Helper()
	want := slices.Clone(u.delivered)
	got := slices.Clone(seq)
	cmpEv := func(a, b event) int {
		if r := a.ch.Compare(b.ch); r != 0 {
			return r
		}
		return int(a.offset - b.offset)
	}
	slices.SortFunc(want, cmpEv)
	slices.SortFunc(got, cmpEv)
	if !slices.Equal(got, want) {
		t.Fatalf("delivered set differs from Parsley's")
	}
	clocks := map[event]clock.Clock{}
	onCh := map[clock.Channel][]int64{}
	for _, in := range u.inputs {
		if !in.position {
			clocks[event{in.ch, in.offset}] = in.clk
			onCh[in.ch] = append(onCh[in.ch], in.offset)
		}
	}
	done := map[event]bool{}
	last := map[clock.Channel]int64{}
	for _, ev := range seq {
		if l, ok := last[ev.ch]; ok && l >= ev.offset {
			t.Fatalf("FIFO broken on %s", u.names.Channel(ev.ch))
		}
		last[ev.ch] = ev.offset
		for _, e := range clocks[ev].Entries() {
			if e.Channel == ev.ch || !slices.Contains(u.scope, e.Channel) {
				continue
			}
			for _, off := range onCh[e.Channel] {
				if off <= e.Position && off >= u.starts[e.Channel] && !done[event{e.Channel, off}] {
					t.Fatalf("%s@%d delivered before its cause %s@%d",
						u.names.Channel(ev.ch), ev.offset, u.names.Channel(e.Channel), off)
				}
			}
		}
		done[ev] = true
	}
}

func (u *unit) format(evs []event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, " %s@%d", u.names.Channel(ev.ch), ev.offset)
	}
	return b.String()
}
