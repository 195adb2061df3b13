package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/engine/enginetest"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/view"
)

func command(f *cmdutil.Factory, runF func(context.Context, *Options) error, args ...string) error {
	return cmdutiltest.Execute(NewCmdWatch(f, runF), args...)
}

func TestFlags(t *testing.T) {
	var got *Options
	keep := func(_ context.Context, o *Options) error { got = o; return nil }
	ios, _, _, _ := iostreams.Test()
	if err := command(cmdutiltest.Factory(ios, ""), keep, "-t", "orders,payments", "--from-group", "notifier", "--scope", "orders", "--start", "orders/0=4",
		"--undecodable", "hold", "--position-advance=false", "--interval", "5s", "--no-tui", "--metrics-max-channels", "0", "--topic-id", "x=01020304-0506-0708-090a-0b0c0d0e0f10"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Range.Topics, " ") != "orders,payments" || got.Range.FromGroup != "notifier" || got.Range.Offsets != "end" ||
		strings.Join(got.Scope, ",") != "orders" || strings.Join(got.Start, ",") != "orders/0=4" || got.Undecodable != gate.HoldUndecodable ||
		!got.ReceiptOnly || got.Interval != 5*time.Second || !got.NoTUI || got.Names.Len() != 1 || got.OpenFollow == nil || got.MetricsMaxChannels != 0 {
		t.Errorf("options %+v", got)
	}
	if err := command(cmdutiltest.Factory(ios, ""), keep, "-t", "orders"); err != nil || got.Interval != time.Second || got.NoTUI || got.ReceiptOnly || got.Undecodable != gate.FailOnUndecodable || got.MetricsMaxChannels != 5000 {
		t.Errorf("defaults %+v %v", got, err)
	}
	if err := command(cmdutiltest.Factory(ios, ""), keep, "--app", "notifier", "--txn-wait", "3s"); err != nil || got.Tasks.App != "notifier" || !got.Tasks.On() || got.Tasks.TxnWait != 3*time.Second || got.Dial == nil {
		t.Errorf("--app: %+v %v", got, err)
	}
	if err := command(cmdutiltest.Factory(ios, ""), keep, "-t", "orders", "--tasks"); err != nil || !got.Tasks.On() || got.Tasks.App != "" {
		t.Errorf("--tasks: %+v %v", got, err)
	}
	for _, args := range [][]string{{}, {"-t", "orders", "--interval", "0s"}, {"--app", "notifier", "-t", "orders"}, {"--app", "notifier", "--scope", "orders/0"}, {"-t", "orders", "--txn-wait", "1s"}, {"-t", "orders", "--metrics-max-channels", "-1"}} {
		err := command(cmdutiltest.Factory(ios, ""), keep, args...)
		var ue *cmdutil.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// cluster has orders (1 partition) and payments (1); payments/0@0 claims
// orders/0 position 5, which is never written, so it stays held.
func cluster(t *testing.T) string {
	t.Helper()
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders"), kfake.SeedTopics(1, "payments"))
	ctx := context.Background()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	infos, err := cl.Topics(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	claim := clock.Encode(clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: infos[0].ID, Partition: 0}, Position: 5}))
	kafkatest.Produce(t, c, &kgo.Record{Topic: "orders", Value: []byte("o")},
		&kgo.Record{Topic: "payments", Value: []byte("p"), Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: claim}}})
	return c.ListenAddrs()[0]
}

func options(ios *iostreams.IOStreams, addr string) *Options {
	f := cmdutiltest.Factory(ios, addr)
	return &Options{IO: ios, InputFlags: cmdutil.InputFlags{Spec: input.Spec{Range: input.Selection{Topics: []string{"orders", "payments"}, Offsets: "start"}, Names: &clock.Names{}}},
		Interval: 20 * time.Millisecond, OpenFollow: f.OpenFollow, Now: time.Now}
}

// TestRunPipe: in a pipe, plain status lines with the held payment, one
// per interval, and, stopped by Ctrl-C (the way watch ends), a last line,
// still the state, and a clean stop: exit 0.
func TestRunPipe(t *testing.T) {
	addr := cluster(t)
	ios, _, _, _ := iostreams.Test()
	out := &testutil.SyncBuffer{}
	ios.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, options(ios, addr)) }()
	const want = "state=running scope=2 received=2 delivered=1 dropped=0 held=1 held_channels=1 "
	first := testutil.Lines(out.Wait(t, 10*time.Second, "the held payment", func(s string) bool { return strings.Contains(s, want) }))
	// The lines go on, interval after interval, and say the same.
	out.Wait(t, 10*time.Second, "three more status lines", func(s string) bool {
		return testutil.Lines(s) >= first+3 && strings.HasSuffix(s, "\n") && strings.Contains(lastLine(s), want)
	})
	cancel()
	err := <-done
	if !errors.Is(err, cmdutil.ErrStopped) || cmdutil.ExitCode(err) != cmdutil.ExitOK {
		t.Errorf("stopped: %v, want a clean stop, exit 0", err)
	}
	if o := out.String(); strings.Contains(o, "\x1b") || !strings.HasSuffix(o, "\n") || !strings.Contains(lastLine(o), want) {
		t.Errorf("status lines (the last, after the interruption, the state):\n%q", o)
	}
}

// lastLine is the last complete line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestRunTerminal: on a terminal the view gets the snapshots, and a
// --scope naming what is not followed is a usage error.
func TestRunTerminal(t *testing.T) {
	addr := cluster(t)
	ios, _, out, _ := iostreams.Test()
	ios.SetTTY(true)
	opts := options(ios, addr)
	var last view.Snapshot
	opts.RunTUI = func(ctx context.Context, _ io.Reader, _ io.Writer, o tui.Options) error {
		if o.Title != "causalctl watch" {
			t.Errorf("title %q", o.Title)
		}
		for s := range o.Snapshots {
			if last = s; s.Held == 1 && s.Received == 2 {
				return nil // as q would
			}
		}
		return errors.New("the snapshots ended")
	}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if last.Scope != 2 || len(last.Heads) != 1 || !strings.HasPrefix(last.Heads[0].Channel, "payments/") {
		t.Errorf("last snapshot: scope %d heads %+v", last.Scope, last.Heads)
	}
	if out.Len() != 0 {
		t.Errorf("status lines under the view: %q", out)
	}

	// SIGTERM or Ctrl-C from outside the view ends it as q does: a clean
	// stop, exit 0.
	opts = options(ios, addr)
	ctx, cancel := context.WithCancel(context.Background())
	opts.RunTUI = func(ctx context.Context, _ io.Reader, _ io.Writer, o tui.Options) error {
		<-o.Snapshots
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	if err := Run(ctx, opts); !errors.Is(err, cmdutil.ErrStopped) || cmdutil.ExitCode(err) != cmdutil.ExitOK {
		t.Errorf("the view stopped from outside: %v, want a clean stop", err)
	}

	opts = options(ios, addr)
	opts.Scope = []string{"shipments"}
	err := Run(context.Background(), opts)
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "shipments") {
		t.Errorf("unknown scope: %v", err)
	}
}

// TestRunBackground: on a terminal whose foreground is another job, the
// view does not start; status lines are printed, and stderr says why.
func TestRunBackground(t *testing.T) {
	addr := cluster(t)
	ios, _, _, _ := iostreams.Test()
	out, errOut := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	ios.Out, ios.ErrOut = out, errOut
	ios.SetTTY(true)
	ios.Foreground = false
	opts := options(ios, addr)
	opts.RunTUI = func(context.Context, io.Reader, io.Writer, tui.Options) error {
		t.Error("the view started in the background")
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts) }()
	for !strings.Contains(out.String(), "state=running scope=2 received=2 ") {
		select {
		case err := <-done:
			t.Fatalf("stopped: %v\n%s", err, out)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if want := "causalctl: not in the terminal's foreground: a status line every --interval instead of the live view\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

// viewUntilFailed stands for a user who reads the failure on screen and
// then presses q: it takes snapshots until one shows the feed stopped,
// keeps it, and returns nil as the view does on q.
func viewUntilFailed(last *view.Snapshot) func(context.Context, io.Reader, io.Writer, tui.Options) error {
	return func(ctx context.Context, _ io.Reader, _ io.Writer, o tui.Options) error {
		for s := range o.Snapshots {
			if *last = s; s.Failure != nil || s.Err != "" {
				return nil
			}
		}
		return errors.New("the snapshots ended")
	}
}

// TestRunTerminalFeedFails: a feed that fails under the view ends watch as
// in a pipe once the view is quit: the failure on screen first, then exit 1
// with its one line — for a gate that failed closed and for a cluster gone
// for longer than the request timeout.
func TestRunTerminalFeedFails(t *testing.T) {
	t.Run("failed closed", func(t *testing.T) {
		c := kafkatest.Cluster(t, kfake.SeedTopics(1, "payments"))
		kafkatest.Produce(t, c, &kgo.Record{Topic: "payments", Value: []byte("p"),
			Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: []byte{1}}}})
		ios, _, out, _ := iostreams.Test()
		ios.SetTTY(true)
		opts := options(ios, c.ListenAddrs()[0])
		opts.Range.Topics = []string{"payments"}
		var last view.Snapshot
		opts.RunTUI = viewUntilFailed(&last)
		err := Run(context.Background(), opts)
		if cmdutil.ExitCode(err) != cmdutil.ExitFailure {
			t.Errorf("after q: %v (exit %d), want exit 1", err, cmdutil.ExitCode(err))
		}
		enginetest.FailedClosed(t, err, "payments/0", 0, gate.Code(clock.CodeTruncated))
		if last.Failure == nil {
			t.Errorf("the view was not shown the failure: %+v", last)
		}
		if out.Len() != 0 {
			t.Errorf("output under the view: %q", out)
		}
	})
	t.Run("cluster gone", func(t *testing.T) {
		c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders"))
		ios, _, _, _ := iostreams.Test()
		ios.SetTTY(true)
		env := map[string]string{conn.EnvBrokers: c.ListenAddrs()[0], conn.EnvRequestTimeout: "1s", conn.EnvDialTimeout: "300ms"}
		f := &cmdutil.Factory{IOStreams: ios, Conn: &conn.Options{}, Now: time.Now, Getenv: func(k string) string { return env[k] }}
		opts := options(ios, "")
		opts.OpenFollow = f.OpenFollow
		opts.Range.Topics = []string{"orders"}
		var last view.Snapshot
		view := viewUntilFailed(&last)
		opts.RunTUI = func(ctx context.Context, in io.Reader, out io.Writer, o tui.Options) error {
			c.Close() // the cluster goes away under the view
			return view(ctx, in, out, o)
		}
		err := Run(context.Background(), opts)
		if cmdutil.ExitCode(err) != cmdutil.ExitFailure || !strings.Contains(fmt.Sprint(err), "reading orders/0") {
			t.Errorf("after q: %v (exit %d), want exit 1 naming the channel", err, cmdutil.ExitCode(err))
		}
		if last.Err == "" {
			t.Errorf("the view was not shown the error: %+v", last)
		}
	})
}
