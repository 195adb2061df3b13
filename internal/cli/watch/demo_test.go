package watch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/cli/watch"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/tui"
	"github.com/causalctl/causalctl/internal/view"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// perTask is what the status line of watch --app says per task: held
// heads and held records, as "0:1,1:0,2:2".
type perTask struct{ heads, held string }

// TestWatchAppNotifier: against the demo (a dangling shipment held by
// the notifier), `watch --app notifier` in a pipe shows, task by task, the
// held heads `state --app notifier` shows and the held records `holds
// --app notifier` counts while the notifier runs caught up; after it
// stops and a record arrives on every channel, its shadow queues each
// behind its channel's held head, one more than the store holds.
func TestWatchAppNotifier(t *testing.T) {
	ctx := testCtx(t)
	d, n := demotest.Dangling(ctx, t)
	run := func(args ...string) (int, string, string) {
		ios, _, out, errOut := iostreams.Test()
		code := cli.Run(testCtx(t), cmdutiltest.Factory(ios, d.Addr()), args)
		return code, out.String(), errOut.String()
	}
	// state: the held heads per task.
	stateHeads := func() (map[int32]int, []int32) {
		code, out, stderr := run("state", "--app", demo.NotifierApp, "-o", "json")
		var st struct {
			Tasks []struct {
				Task     int32
				Channels []struct{ Head *struct{ Offset int64 } }
			}
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("state: exit %d: %v: %s", code, err, stderr)
		}
		heads, tasks := map[int32]int{}, []int32{}
		for _, task := range st.Tasks {
			tasks = append(tasks, task.Task)
			for _, c := range task.Channels {
				if c.Head != nil {
					heads[task.Task]++
				}
			}
		}
		return heads, tasks
	}
	// holds: the held records per task, read to the log end.
	holdsHeld := func() map[int32]int64 {
		code, out, stderr := run("holds", "--app", demo.NotifierApp, "-o", "json")
		var rep struct {
			Tasks []struct {
				Task        int32
				HeldHeads   int   `json:"held_heads"`
				HeldRecords int64 `json:"held_records"`
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("holds: exit %d: %v: %s", code, err, stderr)
		}
		held := map[int32]int64{}
		for _, task := range rep.Tasks {
			held[task.Task] = task.HeldRecords
		}
		return held
	}
	want := func() perTask {
		heads, tasks := stateHeads()
		held := holdsHeld()
		var h, r []string
		for _, task := range tasks {
			h = append(h, fmt.Sprintf("%d:%d", task, heads[task]))
			r = append(r, fmt.Sprintf("%d:%d", task, held[task]))
		}
		return perTask{strings.Join(h, ","), strings.Join(r, ",")}
	}
	watch := func(w perTask) {
		t.Helper()
		ios, _, _, errOut := iostreams.Test()
		out := &testutil.SyncBuffer{}
		ios.Out = out
		wctx, stop := context.WithCancel(testCtx(t))
		done := make(chan int, 1)
		go func() {
			done <- cli.Run(wctx, cmdutiltest.Factory(ios, d.Addr()), []string{"watch", "--app", demo.NotifierApp, "--interval", "20ms"})
		}()
		line := fmt.Sprintf(" task_heads=%s task_held=%s ", w.heads, w.held)
		out.Wait(t, 20*time.Second, "a status line with"+line, func(s string) bool { return strings.Contains(s, line) })
		stop()
		if code := <-done; code != cmdutil.ExitOK {
			t.Errorf("watch --app: exit %d, want 0 (stopped as asked): %s", code, errOut)
		}
		if errOut.Len() != 0 {
			t.Errorf("watch --app: stderr %q", errOut)
		}
	}

	running := want()
	if running.heads == "0:0,1:0,2:0" || running.heads == "" {
		t.Fatalf("the notifier holds nothing: %+v", running)
	}
	t.Logf("running: %+v", running)
	watch(running)

	n.Stop()
	demotest.WriteEveryChannel(ctx, t, d)
	// holds and state count what the stopped process's store holds, which
	// the late records do not change; watch's shadow reads them, and each
	// queues behind its channel's held head: one more record per head.
	stopped := want()
	if stopped != running {
		t.Fatalf("the stopped process's store changed: %+v, was %+v", stopped, running)
	}
	heads, tasks := stateHeads()
	held := holdsHeld()
	var r []string
	for _, task := range tasks {
		r = append(r, fmt.Sprintf("%d:%d", task, held[task]+int64(heads[task])))
	}
	stopped.held = strings.Join(r, ",")
	t.Logf("stopped, more written: %+v", stopped)
	watch(stopped)
}

// TestWatchPicksAProcess: on a terminal, watch alone lists the demo's
// processes (the notifier, holding its dangling shipment) and watches the
// one picked as --app: per-task snapshots whose held heads are state's.
func TestWatchPicksAProcess(t *testing.T) {
	ctx := testCtx(t)
	d, _ := demotest.Dangling(ctx, t)
	ios, _, _, _ := iostreams.Test()
	ios.SetTTY(true)
	f := cmdutiltest.Factory(ios, d.Addr())
	var listed []inspect.ProcessSummary
	var last view.Snapshot
	opts := &watch.Options{IO: ios, Dial: f.Dial, OpenFollow: f.OpenFollow, Now: time.Now, Interval: time.Second,
		InputFlags: cmdutil.InputFlags{Spec: input.Spec{Names: &clock.Names{}, Tasks: input.Tasks{TxnWait: time.Second}}}, Pick: true,
		ChooseProcess: func(_ context.Context, _ io.Reader, _ io.Writer, title string, rows []inspect.ProcessSummary, _ bool) (string, error) {
			listed = rows
			return demo.NotifierApp, nil
		},
		RunTUI: func(_ context.Context, _ io.Reader, _ io.Writer, o tui.Options) error {
			if o.Title != "causalctl watch --app "+demo.NotifierApp {
				t.Errorf("title %q", o.Title)
			}
			for s := range o.Snapshots {
				if last = s; s.Tasks != nil && s.HeldChannels > 0 {
					return nil // as q would
				}
			}
			return errors.New("the snapshots ended")
		}}
	if err := watch.Run(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].App != demo.NotifierApp || listed[0].HeldHeads == 0 || listed[0].Causes[inspect.CauseBeyondLogEnd] == 0 {
		t.Fatalf("the list: %+v", listed)
	}
	if len(last.Tasks) != int(listed[0].Tasks) || last.HeldChannels != listed[0].HeldHeads || last.Held != int64(listed[0].HeldRecords) {
		t.Errorf("watched: %d tasks, %d heads, %d held; the list says %d, %d, %d", len(last.Tasks), last.HeldChannels, last.Held,
			listed[0].Tasks, listed[0].HeldHeads, listed[0].HeldRecords)
	}

	// Quitting the list watches nothing.
	opts.Pick = true
	opts.Tasks.App = ""
	opts.ChooseProcess = func(context.Context, io.Reader, io.Writer, string, []inspect.ProcessSummary, bool) (string, error) {
		return "", nil
	}
	opts.RunTUI = func(context.Context, io.Reader, io.Writer, tui.Options) error {
		t.Error("q in the list opened the view")
		return nil
	}
	if err := watch.Run(ctx, opts); err != nil {
		t.Fatal(err)
	}
}
