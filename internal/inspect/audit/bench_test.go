package audit

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

var (
	scaleCapture = flag.String("audit.capture", "", "TestWriteScaleCapture writes a generated capture to this `FILE`")
	scaleRecords = flag.Int("audit.records", 10_000_000, "records of the generated capture")
	scaleUnfold  = flag.Int("audit.unfolded", -1, "the stage of the generated capture that does not fold (-1: none)")
)

// scaleStages is the generated pipeline: five services of two partitions
// each, every one consuming the one before and stamping honestly, so that
// clocks claim 2, 4, 6 or 8 channels (the first stage claims nothing).
const scaleStages, scalePartitions, scaleLag = 5, 2, 32

// generate yields n records of the generated pipeline, round robin over
// the stages, each stamped with the join of the clocks of the upstream
// records it claims (a random lag behind their log ends) and their
// positions.
// With unfolded ≥ 0, that stage stamps its claims without folding the
// clocks of the records it claims.
func generate(n int, seed uint64, unfolded int, yield func(it *record.Item) error) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	type chanGen struct {
		ch    clock.Channel
		name  string
		next  int64
		clks  [scaleLag + 1]clock.Clock // the clocks of the last records, by offset mod the ring
		stamp clock.Clock               // its producer's carried stamp
	}
	var chans [scaleStages][scalePartitions]*chanGen
	for s := range scaleStages {
		var id clock.TopicID
		id[0], id[15] = 0x5c, byte(s+1)
		for p := range scalePartitions {
			chans[s][p] = &chanGen{ch: clock.Channel{Topic: id, Partition: int32(p)}, name: fmt.Sprintf("stage%d", s)}
		}
	}
	it := &record.Item{Kind: record.KindRecord}
	for i := range n {
		s, p := i%scaleStages, (i/scaleStages)%scalePartitions
		c := chans[s][p]
		clk := c.stamp
		if s > 0 {
			for _, up := range chans[s-1] {
				if up.next == 0 {
					continue
				}
				claim := max(0, up.next-1-rng.Int64N(scaleLag))
				if s != unfolded {
					clk = clk.Join(up.clks[claim%(scaleLag+1)])
				}
				clk = clk.With(up.ch, claim)
			}
		}
		c.stamp = clk
		c.clks[c.next%(scaleLag+1)] = clk
		it.Topic, it.TopicID, it.Partition, it.Offset, it.Line = c.name, c.ch.Topic, c.ch.Partition, c.next, int64(i+1)
		it.Headers = it.Headers[:0]
		if !clk.IsEmpty() {
			it.Headers = append(it.Headers, clock.Header{Key: clock.HeaderCauses, Value: clock.Encode(clk)})
		}
		c.next++
		if err := yield(it); err != nil {
			return err
		}
	}
	return nil
}

// TestWriteScaleCapture writes the generated capture for measuring
// `causalctl check` end to end (docs/check.md):
//
//	go test ./internal/inspect/audit -run WriteScale -audit.capture /tmp/10m.ndjson
func TestWriteScaleCapture(t *testing.T) {
	if *scaleCapture == "" {
		t.Skip("no -audit.capture FILE")
	}
	f, err := os.Create(*scaleCapture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	err = generate(*scaleRecords, 1, *scaleUnfold, func(it *record.Item) error {
		it.Line = 0
		line, err = capture.AppendItem(line[:0], it)
		if err == nil {
			_, err = bw.Write(line)
		}
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The generated pipeline is honest: no finding for nodes that skip
// stages. With stage2 not folding what it claims of stage1, stage0 hides
// behind stage1 for the nodes consuming stage0 and not stage1 (ends,
// half); a node consuming stage1 (odd) waits for it all.
func TestAuditGeneratedPipeline(t *testing.T) {
	for _, unfolded := range []int{-1, 2} {
		var items []record.Item
		generate(20_000, 2, unfolded, func(it *record.Item) error {
			c := *it
			c.Headers = append([]clock.Header(nil), it.Headers...)
			items = append(items, c)
			return nil
		})
		names := &clock.Names{}
		rep := auditItems(t, New(Config{Names: names}), items, benchScopes(names))
		if unfolded < 0 {
			if rep.Records != 20_000 || rep.Len() != 0 {
				t.Errorf("%d records, %d findings (%v): want 20000 and none", rep.Records, rep.Len(), rep.Counts)
			}
			continue
		}
		byScope := map[string]int{}
		for _, f := range all(rep) {
			byScope[f.Scope]++
			if f.Kind != FindingHole || f.Producer.Topic[15] != 3 { // stage2
				t.Fatalf("finding %+v: want holes produced on stage2", f)
			}
		}
		if byScope["ends"] == 0 || byScope["half"] == 0 || byScope["odd"] != 0 {
			t.Errorf("holes by scope %v: want some for ends and half, none for odd", byScope)
		}
	}
}

// benchScopes are three nodes of the generated pipeline, skipping stages.
func benchScopes(names *clock.Names) []Scope {
	ch := func(s, p int) clock.Channel {
		var id clock.TopicID
		id[0], id[15] = 0x5c, byte(s+1)
		return clock.Channel{Topic: id, Partition: int32(p)}
	}
	return []Scope{
		{Name: "ends", Channels: []clock.Channel{ch(0, 0), ch(0, 1), ch(4, 0), ch(4, 1)}},
		{Name: "odd", Channels: []clock.Channel{ch(1, 0), ch(1, 1), ch(3, 0), ch(3, 1)}},
		{Name: "half", Channels: []clock.Channel{ch(0, 0), ch(2, 0), ch(4, 0)}},
	}
}

// BenchmarkAudit measures the audit alone (both readings from memory, the
// walk and the report) over a million generated records, three scopes.
func BenchmarkAudit(b *testing.B) {
	const n = 1_000_000
	var items []record.Item
	generate(n, 3, -1, func(it *record.Item) error {
		c := *it
		c.Headers = append([]clock.Header(nil), it.Headers...)
		items = append(items, c)
		return nil
	})
	b.ResetTimer()
	for range b.N {
		names := &clock.Names{}
		if rep := auditItems(b, New(Config{Names: names}), items, benchScopes(names)); rep.Len() != 0 {
			b.Fatalf("%d findings", rep.Len())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
