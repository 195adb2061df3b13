package processes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/parsley"
)

// BenchmarkProcesses lists a cluster of 200 Parsley processes of 8 tasks
// each (docs/performance.md): 50 business topics of 8 partitions, each
// process receiving two of them; every task's store holds its version,
// two bindings, two fed-up-to positions and, on every other task, a held
// record waiting for its neighbour topic; every group has committed
// offsets.
func BenchmarkProcesses(b *testing.B) {
	benchProcesses(b, 200, 8, 50, []int{1, DefaultConcurrency, 64})
}

// BenchmarkBigCluster lists 25 processes of 20 tasks in a cluster of 500
// topics and 10 000 partitions (docs/performance.md, "Big clusters"): 475
// business topics of 20 partitions beside the 25 changelogs, as
// BenchmarkProcesses builds them.
func BenchmarkBigCluster(b *testing.B) {
	benchProcesses(b, 25, 20, 475, []int{DefaultConcurrency})
}

// benchProcesses lists procs processes of tasks tasks, each receiving two
// of topics business topics of tasks partitions, at each concurrency.
func benchProcesses(b *testing.B, procs, tasks, topics int, concurrencies []int) {
	spec := map[string]int32{}
	for i := range topics {
		spec[fmt.Sprintf("t%03d", i)] = int32(tasks)
	}
	for i := range procs {
		spec[parsley.ChangelogTopic(fmt.Sprintf("app%03d", i))] = int32(tasks)
	}
	w := newWorld(b, spec)
	for i := range topics {
		w.fill(b, fmt.Sprintf("t%03d", i), int32(tasks), 10)
	}
	var recs []*kgo.Record
	for i := range procs {
		app := fmt.Sprintf("app%03d", i)
		in := []string{fmt.Sprintf("t%03d", i%topics), fmt.Sprintf("t%03d", (i+1)%topics)}
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
		if p.HeldRecords != tasks/2 || p.Causes["lagging"] != tasks/2 || p.NextStart == nil || p.NextStart.Refused {
			b.Fatalf("%s: %+v", p.App, p)
		}
	}
	if procs == 25 {
		benchExporter(b, w, procs, tasks)
	}
	for _, n := range concurrencies {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			for b.Loop() {
				if out, errOut, code := run(b, w.c, false, "--concurrency", strconv.Itoa(n)); code != cmdutil.ExitOK {
					b.Fatalf("exit %d: %s\n%s", code, errOut, out)
				}
			}
		})
	}
}

// benchExporter measures the exporter over w: its first refresh (every
// changelog followed and read, every task diagnosed), a refresh with
// nothing changed, and a scrape of its endpoint, one at a time and ten at
// once, each over a new refresh's snapshot.
func benchExporter(b *testing.B, w *world, procs, tasks int) {
	ctx := context.Background()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: w.c.ListenAddrs()})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	tr := fleet.New(fleet.Config{Client: cl})
	defer tr.Close()
	b.Run("exporter-first-refresh", func(b *testing.B) {
		for b.Loop() {
			tr.Close()
			if err := tr.Discover(ctx); err != nil {
				b.Fatal(err)
			}
			if err := tr.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if s, _ := tr.Latest(); len(s.Processes) != procs || len(s.Processes[0].Tasks) != tasks {
			b.Fatalf("snapshot of %d processes", len(s.Processes))
		}
	})
	b.Run("exporter-refresh", func(b *testing.B) {
		for b.Loop() {
			if err := tr.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	h := metrics.NewEndpoint(metrics.FleetSource(tr, metrics.HealthBounds{Failing: time.Minute}, nil, metrics.Options{MaxChannels: metrics.DefaultMaxChannels}), "causalctl exporter", nil)
	for _, parallel := range []int{1, 10} {
		b.Run(fmt.Sprintf("exporter-scrape/parallel=%d", parallel), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				if err := tr.Refresh(ctx); err != nil { // a snapshot no scrape saw
					b.Fatal(err)
				}
				b.StartTimer()
				var wg sync.WaitGroup
				for range parallel {
					wg.Go(func() {
						req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
						req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
						req.Header.Set("Accept-Encoding", "gzip")
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						if rec.Code != http.StatusOK {
							b.Errorf("scrape: %d", rec.Code)
						}
					})
				}
				wg.Wait()
			}
		})
	}
}
