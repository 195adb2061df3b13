// Package demotest sets up the demo for tests of the commands that read
// it: a run of the pipeline alone, a run with its notifier caught up (and
// joined), and records written after it.
package demotest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/demo"
)

// Pipeline runs the demo's pipeline with cfg to its last step (cfg.Steps
// must be set; a zero Tick runs the steps back to back), without a
// notifier, and leaves its broker up until the test ends.
func Pipeline(ctx context.Context, t testing.TB, cfg demo.Config) *demo.Demo {
	t.Helper()
	d, err := demo.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// Dangling runs the demo unpaced with a dangling shipment (seed 4, the
// fault at step 8, 30 steps, no lags) and its notifier, and waits until
// the notifier has read every record. Both stop when the test ends.
func Dangling(ctx context.Context, t testing.TB) (*demo.Demo, *demo.Notifier) {
	t.Helper()
	return withNotifier(ctx, t, demo.Config{Seed: 4, Fault: demo.FaultDangling, FaultStep: 8, Steps: 30, Tick: 0, Lags: map[string]time.Duration{}})
}

// DanglingJoined is Dangling over 40 steps with the watched node lagging
// on orders (300ms) and payments (100ms), and waits besides until the
// notifier's member has joined its group: a process as it runs, with a
// group, an assignment and committed offsets to report.
func DanglingJoined(ctx context.Context, t testing.TB) (*demo.Demo, *demo.Notifier) {
	t.Helper()
	d, n := withNotifier(ctx, t, demo.Config{Seed: 4, Fault: demo.FaultDangling, FaultStep: 8, Steps: 40,
		Lags: map[string]time.Duration{demo.TopicOrders: 300 * time.Millisecond, demo.TopicPayments: 100 * time.Millisecond}})
	select {
	case <-n.Joined():
	case <-ctx.Done():
		t.Fatal("the notifier's member never joined its group")
	}
	return d, n
}

// Settled runs the demo with cfg and its notifier, and waits until the
// notifier has read every record or stopped by itself (a record its gate
// fails closed on); the notifier is then stopped, its state settled. Both
// stop when the test ends.
func Settled(ctx context.Context, t testing.TB, cfg demo.Config) (*demo.Demo, *demo.Notifier) {
	t.Helper()
	d, n := started(ctx, t, cfg)
	if err := n.WaitRecords(ctx, d.Produced()); err != nil {
		select {
		case <-n.Done():
		default:
			t.Fatal(err)
		}
	}
	n.Stop()
	return d, n
}

// withNotifier runs the demo with cfg and its notifier, and waits until
// the notifier has read every record.
func withNotifier(ctx context.Context, t testing.TB, cfg demo.Config) (*demo.Demo, *demo.Notifier) {
	t.Helper()
	d, n := started(ctx, t, cfg)
	if err := n.WaitRecords(ctx, d.Produced()); err != nil {
		t.Fatal(err)
	}
	return d, n
}

// started runs the demo's pipeline with cfg to its last step, its
// notifier started first.
func started(ctx context.Context, t testing.TB, cfg demo.Config) (*demo.Demo, *demo.Notifier) {
	t.Helper()
	d, err := demo.New(ctx, cfg)
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
