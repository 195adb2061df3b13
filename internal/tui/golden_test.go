package tui

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// TestGolden runs the view as a program (teatest) at 80×24 and 120×40,
// without colour, sends keys and snapshots, and compares the final screen
// with testdata/TestGolden/*.golden. Rewrite them with
//
//	go test ./internal/tui -run TestGolden -update
//
// and review the diff.
func TestGolden(t *testing.T) {
	type step struct {
		msg  tea.Msg
		wait string // output to wait for after sending msg, "" for none
	}
	keys := func(ks ...string) []step {
		var out []step
		for _, k := range ks {
			out = append(out, step{msg: keyMsg(k)})
		}
		return out
	}
	cases := []struct {
		name  string
		model func(t *testing.T) *Model
		steps []step
	}{
		{
			name: "stepper",
			model: func(t *testing.T) *Model {
				return NewModel(plainStyles(), Options{Controller: StepperController(newStepper(t, "basic.ndjson"))})
			},
			steps: append(keys("n", "n", "n", "h", "h", "h"), step{keyMsg("down"), "shipments/0@0"}),
		},
		{
			name: "failed",
			model: func(t *testing.T) *Model {
				return NewModel(plainStyles(), Options{Controller: StepperController(newStepper(t, "faults.ndjson"))})
			},
			steps: []step{{keyMsg("G"), "FAILED CLOSED"}},
		},
		{
			name:  "live",
			model: func(*testing.T) *Model { return NewModel(plainStyles(), Options{Title: "causalctl watch"}) },
			steps: append([]step{{SnapshotMsg{Snapshot: liveSnapshot(60, 1_234_567)}, "RUNNING"}}, keys("j", "j", "j")...),
		},
		{
			name: "tasks",
			model: func(*testing.T) *Model {
				return NewModel(plainStyles(), Options{Title: "causalctl watch --app notifier"})
			},
			steps: []step{{SnapshotMsg{Snapshot: taskSnapshot(60, 1_234_567)}, "TASK"}},
		},
		{
			name: "taskfilter",
			model: func(*testing.T) *Model {
				return NewModel(plainStyles(), Options{Title: "causalctl watch --app notifier"})
			},
			steps: append(append([]step{{SnapshotMsg{Snapshot: taskSnapshot(60, 1_234_567)}, "TASK"}}, keys("/", "t", "a", "s", "k", ":", "1", "0")...),
				step{keyMsg("enter"), "of 60"}),
		},
		{
			name: "demohelp",
			model: func(*testing.T) *Model {
				return NewModel(plainStyles(), Options{Title: "causalctl demo", Intro: []string{
					"Try, in another terminal while it runs:",
					"  causalctl topics --brokers 127.0.0.1:9092",
					"  causalctl holds --brokers 127.0.0.1:9092 -t orders -t payments -t shipments",
				}})
			},
			steps: []step{{SnapshotMsg{Snapshot: liveSnapshot(60, 1_234_567)}, "RUNNING"}, {keyMsg("?"), "Keys"}},
		},
		{
			name: "help",
			model: func(t *testing.T) *Model {
				return NewModel(plainStyles(), Options{Controller: StepperController(newStepper(t, "basic.ndjson"))})
			},
			steps: []step{{keyMsg("?"), "Stepper"}},
		},
	}
	for _, c := range cases {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			name := c.name + "_" + strconv.Itoa(size[0]) + "x" + strconv.Itoa(size[1])
			t.Run(name, func(t *testing.T) {
				tm := teatest.NewTestModel(t, c.model(t), teatest.WithInitialTermSize(size[0], size[1]))
				for _, s := range c.steps {
					tm.Send(s.msg)
					if s.wait != "" {
						want := []byte(s.wait)
						teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, want) },
							teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
					}
				}
				tm.Send(keyMsg("q"))
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
				view := fm.View()
				checkFrame(t, view, size[0], size[1])
				teatest.RequireEqualOutput(t, []byte(view+"\n"))
			})
		}
	}
}
