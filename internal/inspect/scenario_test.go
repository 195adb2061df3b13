package inspect_test

// The diagnosis' scenarios: testdata/inspect/*.txt at the module root
// (the format of testdata/gate, testutil.RunScenarios). Each block
// describes a Parsley process — the cluster's topics and log facts, its
// group's committed offsets and members, each task's store, the records
// past the committed offsets that reading on finds — and prints what the
// diagnosis makes of it. A block adds to the process of the blocks before
// it until "process" starts a new one. Commands:
//
//	process                   a new process (application id shop)
//	topic NAME PARTS          a topic of the cluster, PARTS partitions
//	log CH START END [hw=N] [open=FIRST]
//	                          the channel's log facts: log start, last
//	                          stable offset, high watermark (END when
//	                          absent), an open transaction from FIRST
//	committed CH OFF          the group's committed offset
//	running TOPIC...          a member subscribed to the topics and
//	                          assigned every partition: the process runs
//	fed TASK CH POS           a store entry: fed-up-to
//	held TASK CH OFF CLOCK [age=DUR]
//	                          a store entry: a held record claiming CLOCK
//	                          ({} none), written DUR before now (absent:
//	                          no timestamp)
//	corrupt TASK CH OFF       a held record's value that cannot be read
//	recv CH OFF CLOCK|!       a record in the log past the committed
//	                          offset, read on; ! an undecodable header
//	diagnose TASK             the task's diagnosis (inspect.DiagnoseTask
//	                          after reading on, as every command reads a
//	                          process): heads, causes, roots, ready and
//	                          catching-up heads, the record it failed
//	                          closed on
//	summary                   the process's row (inspect.SummarizeProcess)
//	start                     the next start's refusals
//
// A task's store begins with its version and every topic's binding.
// Channels are NAME/PARTITION; each topic name maps to a fake UUID made
// of its bytes. Run with -update to rewrite the expected output, then
// review the diff by hand.

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/clock/clocktest"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/inspect/*.txt")

// scenarioNow is the scenarios' clock.
var scenarioNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestDiagnosisScenarios(t *testing.T) {
	testutil.RunScenarios(t, "inspect", *update, func() testutil.ScenarioDriver { return newProcessDriver() })
}

// entry is one changelog entry of a task's store.
type entry struct{ key, value []byte }

type processDriver struct {
	t         *testing.T
	where     string
	topics    map[string]int32 // name → partitions
	facts     map[clock.Channel]*record.LogFacts
	committed map[clock.Channel]int64
	running   []string
	stores    map[int32][]entry
	items     []*record.Item
}

func newProcessDriver() *processDriver {
	return &processDriver{topics: map[string]int32{}, facts: map[clock.Channel]*record.LogFacts{},
		committed: map[clock.Channel]int64{}, stores: map[int32][]entry{}}
}

func (d *processDriver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s: %s", d.where, fmt.Sprintf(format, args...))
}

// names are the topics declared, by their fake UUIDs.
func (d *processDriver) names() *clocktest.Names {
	sn := clocktest.NewNames()
	for name := range d.topics {
		_, _ = sn.Topic(name)
	}
	return sn
}

// declared fails unless every channel of s (a channel or a clock) names a
// declared topic.
func (d *processDriver) declared(s string) {
	d.t.Helper()
	for part := range strings.SplitSeq(s, ",") {
		topic, _, _ := strings.Cut(part, "/")
		if _, ok := d.topics[topic]; !ok && part != "{}" {
			d.fatalf("unknown topic %q: declare it with topic", topic)
		}
	}
}

func (d *processDriver) channel(s string) clock.Channel {
	d.t.Helper()
	d.declared(s)
	return d.names().MustChannel(d.t, d.where, s)
}

func (d *processDriver) int(s string) int64 {
	return clocktest.MustInt(d.t, d.where, s)
}

func (d *processDriver) clock(s string) clock.Clock {
	d.t.Helper()
	d.declared(s)
	return d.names().MustClock(d.t, d.where, s)
}

// store adds an entry to task's store, after its version and bindings.
func (d *processDriver) store(task int32, k parsley.Key, v []byte) {
	if _, ok := d.stores[task]; !ok {
		d.stores[task] = []entry{{parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagVersion}), []byte{parsley.StoreVersion}}}
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for n := range d.topics {
				if !yield(n) {
					return
				}
			}
		}) {
			d.stores[task] = append(d.stores[task], entry{parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagName, Name: name}), parsley.AppendNameValue(nil, clocktest.TopicID(name))})
		}
	}
	d.stores[task] = append(d.stores[task], entry{parsley.AppendKey(nil, k), v})
}

func (d *processDriver) Exec(t *testing.T, where, line string) []string {
	d.t, d.where = t, where
	t.Helper()
	cmd, args, arity := testutil.ScenarioCommand(t, where, line)
	switch cmd {
	case "process":
		arity(0, 0)
		*d = *newProcessDriver()
		d.t, d.where = t, where
	case "topic":
		arity(2, 2)
		d.topics[args[0]] = int32(d.int(args[1]))
	case "log":
		arity(3, 5)
		lf := &record.LogFacts{LogStart: d.int(args[1]), LastStable: d.int(args[2]), HighWatermark: d.int(args[2])}
		for _, opt := range args[3:] {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "hw":
				lf.HighWatermark = d.int(v)
			case "open":
				lf.OpenTransactions = []record.OpenTransaction{{ProducerID: 7, TransactionalID: "late", FirstOffset: d.int(v)}}
			default:
				d.fatalf("log: unknown %q", opt)
			}
		}
		d.facts[d.channel(args[0])] = lf
	case "committed":
		arity(2, 2)
		d.committed[d.channel(args[0])] = d.int(args[1])
	case "running":
		arity(1, 8)
		d.running = args
	case "fed":
		arity(3, 3)
		d.store(int32(d.int(args[0])), parsley.Key{Tag: parsley.TagFedUpTo, Channel: d.channel(args[1])}, parsley.AppendPosition(nil, d.int(args[2])))
	case "held":
		arity(4, 5)
		rec := parsley.HeldRecord{Timestamp: -1, Key: []byte("k"), Value: []byte("v"), Causes: d.clock(args[3]).Entries()}
		if len(args) == 5 {
			age, ok := strings.CutPrefix(args[4], "age=")
			dur, err := time.ParseDuration(age)
			if !ok || err != nil {
				d.fatalf("held: want age=DURATION, got %q", args[4])
			}
			rec.Timestamp = scenarioNow.Add(-dur).UnixMilli()
		}
		d.store(int32(d.int(args[0])), parsley.Key{Tag: parsley.TagHeld, Channel: d.channel(args[1]), Position: d.int(args[2])}, parsley.AppendHeldRecord(nil, &rec))
	case "corrupt":
		arity(3, 3)
		d.store(int32(d.int(args[0])), parsley.Key{Tag: parsley.TagHeld, Channel: d.channel(args[1]), Position: d.int(args[2])}, []byte{0, 1})
	case "recv":
		arity(3, 3)
		ch := d.channel(args[0])
		topic, _, _ := strings.Cut(args[0], "/")
		it := &record.Item{Kind: record.KindRecord, Topic: topic, TopicID: ch.Topic, Partition: ch.Partition,
			Offset: d.int(args[1]), Timestamp: scenarioNow.Add(-time.Minute).UnixMilli(), HasTimestamp: true}
		if args[2] == "!" {
			it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: []byte{1}}}
		} else {
			it.Headers = []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(d.clock(args[2]))}}
		}
		d.items = append(d.items, it)
	case "diagnose":
		arity(1, 1)
		p := d.process()
		task, err := inspect.DiagnoseTask(p, int32(d.int(args[0])), scenarioNow)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		return d.diagnosis(p, task)
	case "summary":
		arity(0, 0)
		return summaryText(inspect.SummarizeProcess(parsley.ChangelogTopic("shop"), int32(len(d.stores)), d.process(), nil, scenarioNow))
	case "start":
		arity(0, 0)
		p := d.process()
		var out []string
		for _, r := range p.NextStart(nil) {
			var chans []string
			for _, ch := range r.Channels {
				chans = append(chans, p.Names.Channel(ch))
			}
			out = append(out, fmt.Sprintf("refused %s %s: %s", r.Reason, strings.Join(chans, ","), r.Detail))
		}
		if out == nil {
			out = []string{"starts"}
		}
		return out
	default:
		d.fatalf("unknown command %q", cmd)
	}
	return nil
}

// process is the process described so far, read on from its committed
// offsets over the records recv gave, as process.ReadOnAll reads one
// from the cluster.
func (d *processDriver) process() *inspect.Process {
	d.t.Helper()
	names := d.names().Names
	cl := parsley.NewChangelog(parsley.ChangelogTopic("shop"), clocktest.TopicID("changelog"))
	for task, es := range d.stores {
		for i, e := range es {
			cl.Apply(task, int64(i), e.key, e.value)
		}
		cl.Reached(task, int64(len(es)))
	}
	p := inspect.NewProcess("shop", cl, names)
	for name, n := range d.topics {
		for part := range n {
			p.Learn(name, clocktest.TopicID(name), part)
		}
	}
	p.Facts = d.facts
	p.Committed = d.committed
	p.Group = &record.Group{Group: "shop", State: "Empty"}
	if d.running != nil {
		p.Group.State = "Stable"
		assign := map[string][]int32{}
		for _, name := range d.running {
			for part := range d.topics[name] {
				assign[name] = append(assign[name], part)
			}
		}
		p.Group.Members = []record.GroupMember{{MemberID: "m1", ClientID: "shop-1", Subscription: d.running, Assignment: assign}}
	}
	a, err := process.Seed(p)
	if err != nil {
		d.fatalf("seed: %v", err)
	}
	items := slices.Clone(d.items)
	on, err := a.ReadOnFrom(func() (process.ItemSource, error) {
		return func() (*record.Item, error) {
			for len(items) > 0 {
				it := items[0]
				items = items[1:]
				ch := clock.Channel{Topic: it.TopicID, Partition: it.Partition}
				if start, ok := a.Starts[ch]; ok && it.Offset >= start {
					return it, nil
				}
			}
			return nil, io.EOF
		}, nil
	}, process.ReadOnOptions{})
	if err != nil {
		d.fatalf("read on: %v", err)
	}
	p.ReadOn = on
	return p
}

func ageText(a inspect.Age) string {
	if !a.Known {
		return "undated"
	}
	return a.D.String()
}

func (d *processDriver) diagnosis(p *inspect.Process, t *inspect.Task) []string {
	var scope []string
	for _, ch := range t.Scope {
		scope = append(scope, p.Names.Channel(ch))
	}
	out := []string{fmt.Sprintf("task %d: scope %s (%s), %d held, %d corrupt", t.State.Task, strings.Join(scope, " "), t.ScopeSource, t.State.HeldCount(), len(t.State.Corrupt))}
	for _, h := range t.Report.Heads {
		written := "undated"
		if !h.Timestamp.IsZero() {
			written = scenarioNow.Sub(h.Timestamp).String()
		}
		out = append(out, fmt.Sprintf("  head %s@%d %s, root %s@%d %s, written %s ago", h.Channel, h.Offset, h.Cause, h.Root, h.RootOffset, h.RootCause, written))
	}
	var ready, catching []string
	for ch := range t.Ready {
		c := t.State.Channel(ch)
		ready = append(ready, fmt.Sprintf("%s@%d", p.Names.Channel(ch), c.Held[0].Offset))
	}
	for ch, off := range t.CatchingUp {
		catching = append(catching, fmt.Sprintf("%s@%d", p.Names.Channel(ch), off))
	}
	slices.Sort(ready)
	slices.Sort(catching)
	if len(ready) > 0 {
		out = append(out, "  ready "+strings.Join(ready, " "))
	}
	if len(catching) > 0 {
		out = append(out, "  catching up "+strings.Join(catching, " "))
	}
	if f := t.FailedClosed(); f != nil {
		out = append(out, fmt.Sprintf("  failed closed %s@%d %s", p.Names.Channel(f.Channel), f.Offset, f.Code))
	}
	for _, r := range t.Report.Roots {
		out = append(out, fmt.Sprintf("  root %s@%d %s: %s", r.Channel, r.Offset, r.Cause, strings.Join(r.Heads, " ")))
	}
	return out
}

func summaryText(r inspect.ProcessSummary) []string {
	if r.Err != nil {
		return []string{"error: " + r.Err.Error()}
	}
	var causes []string
	for _, c := range inspect.Causes() {
		if n := r.Causes[c]; n > 0 {
			causes = append(causes, fmt.Sprintf("%s:%d", c, n))
		}
	}
	oldest := "none"
	if r.Dated {
		oldest = r.Oldest.String()
	}
	return []string{
		fmt.Sprintf("held %d records, %d heads (%s), oldest %s, undated %d", r.HeldRecords, r.HeldHeads, strings.Join(causes, ","), oldest, r.Undated),
		fmt.Sprintf("ready %d, catching up %d, corrupt %d, failed closed %d, next start %s", r.Ready, r.CatchingUp, r.Corrupt, len(r.FailedClosed), r.NextStart),
	}
}
