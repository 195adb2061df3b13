package parsley_test

// The ordering-state decoder's scenarios: testdata/parsley/*.txt at the
// module root (the format of testdata/gate, testutil.RunScenarios). Each
// block writes entries to one task's store, as a changelog partition
// holds them, and decodes it. Commands:
//
//	task P                    a new, empty store: changelog partition P
//	version N                 the format version entry
//	name TOPIC                the topic's binding to its fake UUID
//	fed CH POS                fed-up-to; frontier CH POS and past CH POS
//	                          the frontier and delivered-past entries
//	held CH OFF CLOCK [ts=MS] a held record claiming CLOCK ({} none),
//	                          written at MS (Unix ms; absent −1)
//	release CH OFF            the held record's tombstone
//	drop name TOPIC           the binding's tombstone
//	bad held CH OFF HEX       a held record's value as raw bytes
//	bad key HEX VALUEHEX      an entry of any key as raw bytes
//	decode                    print the decoded task
//
// Channels are NAME/PARTITION; each topic name maps to a fake UUID made
// of its bytes, so channel order is name order. Run with -update to
// rewrite the expected output, then review the diff against SPEC §6.

import (
	"encoding/hex"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/clock/clocktest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/parsley/*.txt")

func TestStoreScenarios(t *testing.T) {
	testutil.RunScenarios(t, "parsley", *update, func() testutil.ScenarioDriver { return &storeDriver{sn: clocktest.NewNames()} })
}

type storeDriver struct {
	t      *testing.T
	where  string
	sn     *clocktest.Names
	store  *parsley.Store
	offset int64 // the next entry's changelog offset
}

func (d *storeDriver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s: %s", d.where, fmt.Sprintf(format, args...))
}

func (d *storeDriver) topic(name string) clock.TopicID {
	d.t.Helper()
	id, err := d.sn.Topic(name)
	if err != nil {
		d.fatalf("%v", err)
	}
	return id
}

func (d *storeDriver) channel(s string) clock.Channel {
	return d.sn.MustChannel(d.t, d.where, s)
}

func (d *storeDriver) int(s string) int64 {
	return clocktest.MustInt(d.t, d.where, s)
}

func (d *storeDriver) hex(s string) []byte {
	d.t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		d.fatalf("bad hex %q", s)
	}
	return b
}

func (d *storeDriver) clock(s string) []clock.Entry {
	return d.sn.MustClock(d.t, d.where, s).Entries()
}

// apply writes one entry at the next changelog offset.
func (d *storeDriver) apply(k parsley.Key, v []byte) {
	d.applyRaw(parsley.AppendKey(nil, k), v)
}

func (d *storeDriver) applyRaw(k, v []byte) {
	if d.store == nil {
		d.store = parsley.NewStore(0)
	}
	d.store.Apply(d.offset, k, v)
	d.offset++
}

func (d *storeDriver) Exec(t *testing.T, where, line string) []string {
	d.t, d.where = t, where
	t.Helper()
	cmd, args, arity := testutil.ScenarioCommand(t, where, line)
	position := func(tag parsley.Tag) {
		arity(2, 2)
		d.apply(parsley.Key{Tag: tag, Channel: d.channel(args[0])}, parsley.AppendPosition(nil, d.int(args[1])))
	}
	switch cmd {
	case "task":
		arity(1, 1)
		d.store, d.offset = parsley.NewStore(int32(d.int(args[0]))), 0
	case "version":
		arity(1, 1)
		d.apply(parsley.Key{Tag: parsley.TagVersion}, []byte{byte(d.int(args[0]))})
	case "name":
		arity(1, 1)
		d.apply(parsley.Key{Tag: parsley.TagName, Name: args[0]}, parsley.AppendNameValue(nil, d.topic(args[0])))
	case "fed":
		position(parsley.TagFedUpTo)
	case "frontier":
		position(parsley.TagFrontier)
	case "past":
		position(parsley.TagDeliveredPast)
	case "held":
		arity(3, 4)
		rec := parsley.HeldRecord{Timestamp: -1, Key: []byte("k"), Value: []byte("v"), Causes: d.clock(args[2])}
		if len(args) == 4 {
			ms, ok := strings.CutPrefix(args[3], "ts=")
			if !ok {
				d.fatalf("held: want ts=MS, got %q", args[3])
			}
			rec.Timestamp = d.int(ms)
		}
		d.apply(parsley.Key{Tag: parsley.TagHeld, Channel: d.channel(args[0]), Position: d.int(args[1])}, parsley.AppendHeldRecord(nil, &rec))
	case "release":
		arity(2, 2)
		d.apply(parsley.Key{Tag: parsley.TagHeld, Channel: d.channel(args[0]), Position: d.int(args[1])}, nil)
	case "drop":
		arity(2, 2)
		if args[0] != "name" {
			d.fatalf("drop: only name")
		}
		d.apply(parsley.Key{Tag: parsley.TagName, Name: args[1]}, nil)
	case "bad":
		arity(3, 4)
		switch args[0] {
		case "held":
			arity(4, 4)
			d.apply(parsley.Key{Tag: parsley.TagHeld, Channel: d.channel(args[1]), Position: d.int(args[2])}, d.hex(args[3]))
		case "key":
			arity(3, 3)
			d.applyRaw(d.hex(args[1]), d.hex(args[2]))
		default:
			d.fatalf("bad: held or key")
		}
	case "decode":
		arity(0, 0)
		if d.store == nil {
			d.store = parsley.NewStore(0)
		}
		return d.decode(d.store.Decode())
	default:
		d.fatalf("unknown command %q", cmd)
	}
	return nil
}

// decode prints a decoded task: its version and bindings, each channel's
// positions and hold queue (settled, the head first), and the corrupt
// entries by offset.
func (d *storeDriver) decode(task *parsley.Task) []string {
	pos := func(p int64) string {
		switch {
		case p == parsley.DeletedPosition:
			return "deleted"
		case p < 0:
			return "-"
		}
		return strconv.FormatInt(p, 10)
	}
	out := []string{fmt.Sprintf("task %d version %d held %d", task.Task, task.Version, task.HeldCount())}
	var names []string
	for name, id := range task.Names {
		if id != clocktest.TopicID(name) {
			name += "=" + id.String() // bound to another topic's UUID
		}
		names = append(names, name)
	}
	if len(names) > 0 {
		out = append(out, "names "+strings.Join(slices.Sorted(slices.Values(names)), " "))
	}
	for _, c := range task.Channels {
		out = append(out, fmt.Sprintf("%s: fed=%s frontier=%s past=%s settled=%s held=%d",
			d.sn.Text(d.sn.Names.Channel(c.Channel)), pos(c.FedUpTo), pos(c.Frontier), pos(c.DeliveredPast), pos(c.Settled()), len(c.Held)))
		for i, h := range c.Held {
			what := "  held"
			if i == 0 {
				what = "  head"
			}
			clk, err := h.Record.Clock()
			causes := d.sn.Text(d.sn.Names.Format(clk))
			if err != nil {
				causes = "bad clock: " + err.Error()
			}
			out = append(out, fmt.Sprintf("%s %d causes %s ts %d", what, h.Offset, causes, h.Record.Timestamp))
		}
	}
	for _, e := range task.Corrupt {
		out = append(out, d.sn.Text(e.Error()))
	}
	return out
}
