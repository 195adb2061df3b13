package processes

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// BenchmarkProcesses lists a cluster of 200 Parsley processes of 8 tasks
// each (docs/performance.md): 50 business topics of 8 partitions, each
// process receiving two of them; every task's store holds its version,
// two bindings, two fed-up-to positions and, on every other task, a held
// record waiting for its neighbour topic; every group has committed
// offsets.
func BenchmarkProcesses(b *testing.B) {
	const procs, tasks, topics = 200, 8, 50
	spec := map[string]int32{}
	for i := range topics {
		spec[fmt.Sprintf("t%02d", i)] = tasks
	}
	for i := range procs {
		spec[parsley.ChangelogTopic(fmt.Sprintf("app%03d", i))] = tasks
	}
	w := newWorld(b, spec)
	for i := range topics {
		w.fill(b, fmt.Sprintf("t%02d", i), tasks, 10)
	}
	var recs []*kgo.Record
	for i := range procs {
		app := fmt.Sprintf("app%03d", i)
		in := []string{fmt.Sprintf("t%02d", i%topics), fmt.Sprintf("t%02d", (i+1)%topics)}
		cl := parsley.ChangelogTopic(app)
		offsets := map[string]int64{}
		for p := range int32(tasks) {
			entry := func(k parsley.Key, v []byte) {
				recs = append(recs, &kgo.Record{Topic: cl, Partition: p, Key: parsley.AppendKey(nil, k), Value: v})
			}
			entry(parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})
			for _, name := range in {
				entry(parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, w.ids[name]))
				entry(parsley.Key{Tag: parsley.TagFedUpTo, Channel: w.ch(name, p)}, parsley.AppendPosition(nil, 6))
				offsets[fmt.Sprintf("%s/%d", name, p)] = 7
			}
			if p%2 == 0 {
				v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: now.Add(-time.Minute).UnixMilli(), Key: []byte("k"), Value: make([]byte, 100),
					Causes: clock.MustNew(clock.Entry{Channel: w.ch(in[1], p), Position: 8}).Entries()})
				entry(parsley.Key{Tag: parsley.TagHeld, Channel: w.ch(in[0], p), Position: 6}, v)
			}
		}
		w.commit(b, app, offsets)
	}
	kafkatest.Produce(b, w.c, recs...)
	// The listing is right before it is timed: every process, each
	// holding one lagging head on every other task.
	out, errOut, code := run(b, w.c, false, "-o", "json")
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); code != cmdutil.ExitOK || err != nil || len(rep.Processes) != procs {
		b.Fatalf("exit %d, %v: %s\n%.500s", code, err, errOut, out)
	}
	for _, p := range rep.Processes {
		if p.HeldRecords != tasks/2 || p.Causes["lagging"] != tasks/2 || p.NextStart == nil || *p.NextStart != inspect.NextStartOK {
			b.Fatalf("%s: %+v", p.App, p)
		}
	}
	for _, n := range []int{1, DefaultConcurrency, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			for b.Loop() {
				if out, errOut, code := run(b, w.c, false, "--concurrency", strconv.Itoa(n)); code != cmdutil.ExitOK {
					b.Fatalf("exit %d: %s\n%s", code, errOut, out)
				}
			}
		})
	}
}
