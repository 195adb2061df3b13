// Package demotest sets up the demo for tests of the commands that read
// it: a run with its notifier caught up, and records written after it.
package demotest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/demo"
)

// Dangling runs the demo unpaced with a dangling shipment (seed 4, the
// fault at step 8, 30 steps, no lags) and its notifier, and waits until
// the notifier has read every record. Both stop when the test ends.
func Dangling(ctx context.Context, t testing.TB) (*demo.Demo, *demo.Notifier) {
	t.Helper()
	d, err := demo.New(ctx, demo.Config{Seed: 4, Fault: demo.FaultDangling, FaultStep: 8, Steps: 30, Tick: 0, Lags: map[string]time.Duration{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	n, err := d.StartNotifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitRecords(ctx, d.Produced()); err != nil {
		t.Fatal(err)
	}
	return d, n
}

// WriteEveryChannel writes one record claiming nothing to every partition
// of every topic of the demo's pipeline.
func WriteEveryChannel(ctx context.Context, t testing.TB, d *demo.Demo) {
	t.Helper()
	var recs []*kgo.Record
	for _, ch := range d.Channels() {
		name, _ := d.Names().Name(ch.Topic)
		recs = append(recs, &kgo.Record{Topic: name, Partition: ch.Partition, Value: []byte("late")})
	}
	w, err := kgo.NewClient(kgo.SeedBrokers(d.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
