package view

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/causalctl/causalctl/internal/testutil"
)

// captures is the directory of the captures the replay command, the views
// and the stepper share.
var captures = testutil.Testdata("captures")

// openFile returns an open function over a capture held in memory, and the
// scope and names a replay of it uses by default.
func openFile(t testing.TB, name string) (func() (replay.Source, error), []clock.Channel, *clock.Names) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captures, name))
	if err != nil {
		t.Fatal(err)
	}
	return openBytes(t, b)
}

func openBytes(t testing.TB, b []byte) (func() (replay.Source, error), []clock.Channel, *clock.Names) {
	t.Helper()
	open := func() (replay.Source, error) { return capture.NewReader(bytes.NewReader(b)), nil }
	names := &clock.Names{}
	src, _ := open()
	scope, err := replay.Discover(src, names)
	if err != nil {
		t.Fatal(err)
	}
	return open, scope, names
}

func newStepper(t testing.TB, name string) *Stepper {
	t.Helper()
	open, scope, names := openFile(t, name)
	s, err := NewStepper(open, replay.Config{Scope: scope, Names: names}, StepperOptions{Title: "test", Source: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// state is what the stepper tests compare after each move.
type state struct {
	item, line                         int64
	received, delivered, dropped, held int64
	run                                replay.RunState
}

func stateOf(s *Stepper) state {
	snap := s.Snapshot()
	return state{
		item: snap.Position.Item, line: snap.Position.Line,
		received: snap.Received, delivered: snap.Delivered, dropped: snap.Dropped, held: snap.Held,
		run: snap.State,
	}
}

func TestStepperStepsBasic(t *testing.T) {
	s := newStepper(t, "basic.ndjson")
	if got := s.Total(); got != 9 {
		t.Fatalf("Total = %d, want 9 items", got)
	}
	if got, want := stateOf(s), (state{run: replay.StatePaused}); got != want {
		t.Fatalf("at start: %+v, want %+v", got, want)
	}
	// basic.ndjson, item by item (line 6 is blank).
	want := []state{
		{1, 1, 0, 0, 0, 0, replay.StatePaused},  // position orders/0 0
		{2, 2, 1, 1, 0, 0, replay.StatePaused},  // orders/0@0 delivers
		{3, 3, 2, 1, 0, 1, replay.StatePaused},  // payments/0@0 waits orders/0 ≥ 1
		{4, 4, 3, 3, 0, 0, replay.StatePaused},  // orders/0@1 delivers, and releases payments/0@0
		{5, 5, 4, 3, 1, 0, replay.StatePaused},  // orders/0@1 again: the replay guard drops it
		{6, 7, 5, 3, 1, 1, replay.StatePaused},  // payments/0@2 waits orders/0 ≥ 5
		{7, 8, 6, 3, 1, 2, replay.StatePaused},  // payments/0@3 behind it
		{8, 9, 7, 3, 1, 3, replay.StatePaused},  // shipments/0@0 waits payments/0 ≥ 2 (held)
		{9, 10, 7, 3, 1, 3, replay.StatePaused}, // position orders/0 3
	}
	for k, w := range want {
		if !s.Step() {
			t.Fatalf("step %d: Step returned false", k+1)
		}
		if got := stateOf(s); got != w {
			t.Fatalf("after step %d: %+v, want %+v", k+1, got, w)
		}
	}
	if s.Step() {
		t.Fatal("Step past the end returned true")
	}
	if got, want := stateOf(s), (state{9, 10, 7, 3, 1, 3, replay.StateFinished}); got != want {
		t.Fatalf("at the end: %+v, want %+v", got, want)
	}
	if s.Err() != nil {
		t.Fatalf("Err = %v at a clean end", s.Err())
	}
}

func TestStepperStepTo(t *testing.T) {
	s := newStepper(t, "basic.ndjson")
	steps := []struct {
		to    replay.EventType
		found bool
		item  int64
	}{
		{replay.EventDeliver, true, 2},
		{replay.EventDeliver, true, 4},
		{replay.EventHold, true, 6},
		{replay.EventHold, true, 7},
		{replay.EventDrop, false, 9}, // the only drop (item 5) is behind
	}
	for _, st := range steps {
		if got := s.StepTo(st.to); got != st.found {
			t.Fatalf("StepTo(%v) = %v, want %v", st.to, got, st.found)
		}
		if s.Item() != st.item {
			t.Fatalf("StepTo(%v): at item %d, want %d", st.to, s.Item(), st.item)
		}
	}
	if s.State() != replay.StateFinished || !strings.Contains(NoticeText(s.Notice()), "no drop") {
		t.Fatalf("after a fruitless StepTo: state %v, notice %q", s.State(), NoticeText(s.Notice()))
	}

	s = newStepper(t, "basic.ndjson")
	s.StepTo(replay.EventHold) // item 3
	s.StepTo(replay.EventDrop)
	if s.Item() != 5 {
		t.Fatalf("StepTo(drop) from item 3 stopped at %d, want 5", s.Item())
	}
}

func TestStepperJumps(t *testing.T) {
	s := newStepper(t, "basic.ndjson")
	fresh := func(n int) Snapshot {
		f := newStepper(t, "basic.ndjson")
		for range n {
			f.Step()
		}
		return f.Snapshot()
	}
	same := func(what string, got, want Snapshot) {
		t.Helper()
		got.Position, want.Position = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: snapshot differs from stepping there afresh:\n got %+v\nwant %+v", what, got, want)
		}
	}

	s.JumpEnd()
	if got, want := stateOf(s), (state{9, 10, 7, 3, 1, 3, replay.StateFinished}); got != want {
		t.Fatalf("JumpEnd: %+v, want %+v", got, want)
	}
	// The end is what a plain replay of the whole input reports.
	open, scope, names := openFile(t, "basic.ndjson")
	r, _ := replay.New(replay.Config{Scope: scope, Names: names})
	src, _ := open()
	if err := replay.Run(t.Context(), src, r, func(*replay.Event) error { return nil }, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	if got, want := inspect.SummaryOf(s.Replayer(), inspect.Facts{}), inspect.SummaryOf(r, inspect.Facts{}); !reflect.DeepEqual(got, want) {
		t.Fatalf("JumpEnd summary %+v, want %+v", got, want)
	}

	if err := s.JumpStart(); err != nil {
		t.Fatal(err)
	}
	if got, want := stateOf(s), (state{run: replay.StatePaused}); got != want {
		t.Fatalf("JumpStart: %+v, want %+v", got, want)
	}
	same("JumpStart", s.Snapshot(), fresh(0))

	if err := s.JumpToItem(5); err != nil {
		t.Fatal(err)
	}
	same("JumpToItem(5)", s.Snapshot(), fresh(5))
	if err := s.JumpToItem(3); err != nil { // back: from the start again
		t.Fatal(err)
	}
	same("JumpToItem(3) from 5", s.Snapshot(), fresh(3))
	if err := s.JumpToItem(50); err != nil {
		t.Fatal(err)
	}
	if s.Item() != 9 || s.State() != replay.StateFinished || !strings.Contains(NoticeText(s.Notice()), "not reached") {
		t.Fatalf("JumpToItem(50): item %d, state %v, notice %q", s.Item(), s.State(), NoticeText(s.Notice()))
	}

	offsets := []struct {
		spec string
		item int64
		note string
	}{
		{"payments/0@2", 6, "at payments/0@2, item 6, line 7"},
		{"orders/0@1", 4, "at orders/0@1, item 4, line 4"},  // behind: from the start
		{"orders/0@2", 9, "at orders/0@2, item 9, line 10"}, // passed by the position line
		{"00000000-0000-0000-0000-00000000000c/0@0", 8, "at shipments/0@0, item 8, line 9"},
		{"#2", 2, "at item 2"},
		{"7", 7, "at item 7"},
		{"orders/0@99", 9, "orders/0@99 not reached: the input stopped at item 9"},
	}
	for _, o := range offsets {
		if err := s.Jump(o.spec); err != nil {
			t.Fatalf("Jump(%q): %v", o.spec, err)
		}
		if s.Item() != o.item || NoticeText(s.Notice()) != o.note {
			t.Fatalf("Jump(%q): item %d, notice %q; want item %d, %q", o.spec, s.Item(), NoticeText(s.Notice()), o.item, o.note)
		}
	}
	s.JumpToItem(6)
	same("Jump back to item 6", s.Snapshot(), fresh(6))
	for _, bad := range []string{"", "x", "orders/0@", "orders/0@-1", "nosuch/0@1", "orders@1", "-3"} {
		if err := s.Jump(bad); err == nil {
			t.Errorf("Jump(%q) = nil, want an error", bad)
		}
	}
}

func TestStepperRun(t *testing.T) {
	s := newStepper(t, "basic.ndjson")
	if s.Speed() != 10 {
		t.Fatalf("default speed %v, want 10", s.Speed())
	}
	if n := s.Advance(time.Second); n != 0 {
		t.Fatalf("Advance while paused fed %d items", n)
	}
	s.SetRunning(true)
	if s.State() != replay.StateRunning || !s.Snapshot().Position.Running {
		t.Fatalf("running: state %v", s.State())
	}
	// 10 items/s: 250 ms is 2.5 items; the half carries over.
	if n := s.Advance(250 * time.Millisecond); n != 2 {
		t.Fatalf("Advance(250ms) fed %d, want 2", n)
	}
	if n := s.Advance(250 * time.Millisecond); n != 3 {
		t.Fatalf("second Advance(250ms) fed %d, want 3", n)
	}
	// A long stall is worth at most one second: 10 items, 4 are left.
	if n := s.Advance(time.Minute); n != 4 {
		t.Fatalf("Advance(1m) fed %d, want the 4 left", n)
	}
	if s.Running() || s.State() != replay.StateFinished {
		t.Fatalf("at the end: running %v, state %v", s.Running(), s.State())
	}
	s.SetRunning(true)
	if s.Running() {
		t.Fatal("a finished stepper runs again")
	}

	s.SetSpeed(10)
	for _, want := range []float64{20, 50, 100} {
		s.Faster()
		if s.Speed() != want {
			t.Fatalf("Faster: %v, want %v", s.Speed(), want)
		}
	}
	s.Slower()
	s.Slower()
	if s.Speed() != 20 {
		t.Fatalf("Slower twice from 100: %v, want 20", s.Speed())
	}
	s.SetSpeed(100000)
	s.Faster()
	if s.Speed() != 100000 {
		t.Fatalf("Faster past the top: %v", s.Speed())
	}
	s.SetSpeed(1)
	s.Slower()
	if s.Speed() != 1 {
		t.Fatalf("Slower past the bottom: %v", s.Speed())
	}
	// The speed survives a jump back.
	s.JumpStart()
	if s.Speed() != 1 || s.Running() {
		t.Fatalf("after JumpStart: speed %v, running %v", s.Speed(), s.Running())
	}
}

func TestStepperFailClosed(t *testing.T) {
	s := newStepper(t, "faults.ndjson")
	for range 3 {
		s.Step()
	}
	if got, want := stateOf(s), (state{3, 3, 3, 1, 0, 2, replay.StatePaused}); got != want {
		t.Fatalf("after 3 steps: %+v, want %+v", got, want)
	}
	snap := s.Snapshot()
	if want := [][]string{{"a/0", "b/0"}}; !reflect.DeepEqual(snap.Cycles, want) {
		t.Fatalf("cycles %v, want %v", snap.Cycles, want)
	}
	if !s.Step() {
		t.Fatal("the failing item was not fed")
	}
	if got, want := stateOf(s), (state{4, 4, 3, 1, 0, 2, replay.StateFailedClosed}); got != want {
		t.Fatalf("after the failure: %+v, want %+v", got, want)
	}
	snap = s.Snapshot()
	want := &inspect.Failure{Channel: "c/0", Offset: 1, Line: 4, Code: "unknown-version", Error: "unknown-version: version 2, want 1"}
	if !reflect.DeepEqual(snap.Failure, want) {
		t.Fatalf("Failure %+v, want %+v", snap.Failure, want)
	}
	if last := snap.Recent[len(snap.Recent)-1]; last.Kind != "fail-closed" || last.Text != "FAILED CLOSED c/0@1 unknown-version · line 4" {
		t.Fatalf("last event %+v", last)
	}
	var ie *replay.InputError
	if !errors.As(s.Err(), &ie) || ie.Code != "unknown-version" {
		t.Fatalf("Err = %v", s.Err())
	}
	// Nothing moves it on.
	if s.Step() || s.StepTo(replay.EventDeliver) {
		t.Fatal("a failed stepper stepped")
	}
	s.SetRunning(true)
	s.JumpEnd()
	if s.Item() != 4 || s.State() != replay.StateFailedClosed || s.Running() {
		t.Fatalf("failed stepper moved: item %d, state %v", s.Item(), s.State())
	}
	// Jumping back recovers, and failing again is the same failure.
	s.JumpStart()
	if s.State() != replay.StatePaused || s.Err() != nil {
		t.Fatalf("after JumpStart: state %v, err %v", s.State(), s.Err())
	}
	s.JumpToItem(6)
	if s.Item() != 4 || s.State() != replay.StateFailedClosed {
		t.Fatalf("JumpToItem(6): item %d, state %v", s.Item(), s.State())
	}
}

func TestStepperBadInput(t *testing.T) {
	b := []byte(`{"topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"offset":0}
{"topic_id":"00000000-0000-0000-0000-00000000000a","partition":0,"offset":
`)
	open := func() (replay.Source, error) { return capture.NewReader(bytes.NewReader(b)), nil }
	ch := clock.Channel{Topic: clock.TopicID{15: 0x0a}}
	s, err := NewStepper(open, replay.Config{Scope: []clock.Channel{ch}}, StepperOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Total() != 1 {
		t.Fatalf("Total %d, want the 1 item before the bad line", s.Total())
	}
	s.JumpEnd()
	snap := s.Snapshot()
	if snap.State != replay.StateError || !strings.Contains(snap.Err, "line 2") || snap.Delivered != 1 {
		t.Fatalf("state %v, err %q, delivered %d", snap.State, snap.Err, snap.Delivered)
	}

	// An open that fails is reported by NewStepper and by JumpStart.
	calls := 0
	flaky := func() (replay.Source, error) {
		calls++
		if calls > 2 {
			return nil, io.ErrUnexpectedEOF
		}
		return open()
	}
	s, err = NewStepper(flaky, replay.Config{Scope: []clock.Channel{ch}}, StepperOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.JumpStart(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("JumpStart = %v", err)
	}
	if s.Snapshot().State != replay.StateError {
		t.Fatalf("state %v after a failed re-open", s.Snapshot().State)
	}
	if _, err := NewStepper(flaky, replay.Config{Scope: []clock.Channel{ch}}, StepperOptions{}); err == nil {
		t.Fatal("NewStepper with a failing open succeeded")
	}
}

// TestFailedGateHeadsWaitForGood: once the gate fails closed it reads
// nothing past the record, so a head waiting on what reading would bring
// waits for good: its cause is undecodable and its root the failed record
// (inspect.StoppedAt, the rule of a Parsley task failed closed).
func TestFailedGateHeadsWaitForGood(t *testing.T) {
	a := clock.TopicID{15: 0xa0}
	b := clock.TopicID{15: 0xb0}
	claim := base64.StdEncoding.EncodeToString(clock.Encode(clock.MustNew(clock.Entry{Channel: clock.Channel{Topic: b}, Position: 5})))
	lines := fmt.Sprintf(`{"topic":"a","topic_id":"%s","partition":0,"offset":0,"timestamp":1,"headers":[{"key":"parsley.causes","value":"%s"}]}
{"topic":"b","topic_id":"%s","partition":0,"offset":0,"timestamp":2,"headers":[{"key":"parsley.causes","value":"AQ=="}]}
`, a, claim, b)
	open, scope, names := openBytes(t, []byte(lines))
	s, err := NewStepper(open, replay.Config{Scope: scope, Names: names}, StepperOptions{Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s.Step()
	if heads := s.Snapshot().Heads; len(heads) != 1 || heads[0].Cause == inspect.CauseUndecodable {
		t.Fatalf("before the failure: heads %+v, want a/0@0 waiting on b/0", heads)
	}
	s.Step()
	snap := s.Snapshot()
	if snap.State != replay.StateFailedClosed || len(snap.Heads) != 1 {
		t.Fatalf("state %v, heads %+v: want failed closed, one head", snap.State, snap.Heads)
	}
	if h := snap.Heads[0]; h.Cause != inspect.CauseUndecodable || h.Root != "b/0" || h.RootOffset != 0 || h.RootCause != inspect.CauseUndecodable {
		t.Errorf("head %s@%d: cause %s, root %s@%d %s; want undecodable, root b/0@0 undecodable", h.Channel, h.Offset, h.Cause, h.Root, h.RootOffset, h.RootCause)
	}
}
