package replay

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// StepperOptions configure a Stepper.
type StepperOptions struct {
	// Speed is the initial speed in items per second (default 10).
	Speed float64
	// NewObserver, when set, is called at every rebuild of the Replayer
	// (the start and every jump back) for an Observer of the new replay,
	// e.g. a view.Events.
	NewObserver func(*engine.Replayer) Observer
}

// Observer sees every event a Stepper's replay emits, at the time it
// happened (the latest record timestamp fed), and the error that stopped
// the feed.
type Observer interface {
	Observe(ev *engine.Event, at time.Time)
	Stop(err error, at time.Time)
}

// speedLadder is the speeds Faster and Slower step through, in items per
// second.
func speedLadder() [16]float64 {
	return [...]float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}
}

// Stepper replays a source under control, one item at a time, for the
// interactive `replay --tui`: step one item, step to the next delivery or
// hold, run and pause at a speed, jump to the start, the end, an item or
// an offset. It starts no goroutine and reads no clock: the caller ticks a
// running stepper with the time that passed (Advance), so the same keys
// give the same states.
//
// Going back re-opens the source and rebuilds the Replayer from the same
// Config, then feeds forward: replay is deterministic, so the state
// reached is the one that was left. A Stepper is not safe for concurrent
// use.
type Stepper struct {
	open func() (engine.Source, error)
	cfg  engine.Config
	opts StepperOptions

	r    *engine.Replayer
	src  engine.Source
	obs  Observer // nil without StepperOptions.NewObserver
	emit func(*engine.Event) error

	item    int64                   // items fed
	line    int64                   // line of the last item fed
	total   int64                   // items in the input
	ends    map[clock.Channel]int64 // end of each channel's range in the input
	lastOff map[clock.Channel]int64 // highest offset (or position−1) fed per channel
	now     time.Time               // latest record timestamp fed
	at      time.Time               // time of the item being fed
	state   engine.RunState
	stopped bool  // the input ended or the feed failed
	stopErr error // why the feed stopped, nil at the end of the input
	running bool
	speed   float64
	carry   float64
	notice  engine.Notice
	counts  [engine.EventHold + 1]int // events of the item being fed, by type
}

// NewStepper returns a Stepper at the start of the input, paused. open must
// return a fresh Source over the same items each time it is called; it is
// called once here to count the items and the range of each channel, and
// again by every jump back. cfg is as for New; a nil cfg.Names is replaced
// by a new one shared by every rebuild.
func NewStepper(open func() (engine.Source, error), cfg engine.Config, opts StepperOptions) (*Stepper, error) {
	if cfg.Names == nil {
		cfg.Names = &clock.Names{}
	}
	if opts.Speed <= 0 {
		opts.Speed = 10
	}
	s := &Stepper{open: open, cfg: cfg, opts: opts, speed: opts.Speed}
	s.emit = s.observe
	if err := s.count(); err != nil {
		return nil, err
	}
	if err := s.reset(); err != nil {
		return nil, err
	}
	return s, nil
}

// count reads the input once for its number of items and the end of each
// channel's range. It stops quietly at a bad line: stepping reports it.
func (s *Stepper) count() error {
	src, err := s.open()
	if err != nil {
		return err
	}
	s.ends = map[clock.Channel]int64{}
	for {
		it, err := src.Next()
		if err != nil {
			break
		}
		s.total++
		ch, err := engine.ResolveChannel(s.cfg.Names, it)
		if err != nil {
			break
		}
		if it.Kind == record.KindLogFacts {
			if _, ok := s.ends[ch]; !ok {
				s.ends[ch] = 0
			}
			continue
		}
		end := it.Offset
		if it.Kind == record.KindRecord {
			end++
		}
		if old, ok := s.ends[ch]; !ok || end > old {
			s.ends[ch] = end
		}
	}
	return nil
}

// reset rebuilds the Replayer and re-opens the source: item 0, paused.
func (s *Stepper) reset() error {
	src, err := s.open()
	if err != nil {
		return err
	}
	r, err := engine.New(s.cfg)
	if err != nil {
		return err
	}
	s.r, s.src = r, src
	s.obs = nil
	if s.opts.NewObserver != nil {
		s.obs = s.opts.NewObserver(r)
	}
	s.stopErr = nil
	s.item, s.line, s.carry = 0, 0, 0
	s.now = time.Time{}
	s.lastOff = map[clock.Channel]int64{}
	s.state, s.stopped, s.running = engine.StatePaused, false, false
	return nil
}

func (s *Stepper) observe(ev *engine.Event) error {
	s.counts[ev.Type]++
	if s.obs != nil {
		s.obs.Observe(ev, s.at)
	}
	return nil
}

// feed feeds one item; it reports false when nothing is left to feed.
func (s *Stepper) feed() bool {
	s.counts = [len(s.counts)]int{}
	if s.stopped {
		return false
	}
	it, err := s.src.Next()
	if err == io.EOF {
		s.stop(engine.StateFinished, nil)
		return false
	}
	if err != nil {
		s.stop(engine.StateError, err)
		return false
	}
	s.item++
	s.line = it.Line
	if t, ok := record.TimeOf(it.Timestamp); it.Kind == record.KindRecord && it.HasTimestamp && ok {
		if t.After(s.now) {
			s.now = t
		}
		s.at = t
	} else {
		s.at = s.now
	}
	if err := s.r.Feed(it, s.emit); err != nil {
		if _, ok := engine.FailureOf(err); ok {
			s.stop(engine.StateFailedClosed, err)
		} else {
			s.stop(engine.StateError, err)
		}
		return true
	}
	if ch, err := engine.ResolveChannel(s.r.Names(), it); err == nil && it.Kind != record.KindLogFacts {
		last := it.Offset
		if it.Kind == record.KindPosition {
			last--
		}
		if old, ok := s.lastOff[ch]; !ok || last > old {
			s.lastOff[ch] = last
		}
	}
	return true
}

func (s *Stepper) stop(state engine.RunState, err error) {
	s.state, s.stopped, s.running = state, true, false
	s.stopErr = err
	if err != nil && s.obs != nil {
		s.obs.Stop(err, s.at)
	}
}

// Step feeds one item (a record or a position line). It reports whether
// an item was fed: false at the end of the input or after a failure.
func (s *Stepper) Step() bool {
	s.notice = engine.Notice{}
	return s.feed()
}

// StepTo feeds items until one of them causes an event of type t (a
// delivery, a hold or a drop), and stops after it. It reports whether one
// was found before the input ended or the feed failed.
func (s *Stepper) StepTo(t engine.EventType) bool {
	s.notice = engine.Notice{}
	if t < engine.EventDeliver || t > engine.EventHold {
		return false
	}
	start := s.item
	for s.feed() {
		if s.counts[t] > 0 {
			return true
		}
	}
	s.notice = engine.Notice{Kind: engine.NoticeNoEvent, Item: s.item, Event: t, From: start}
	return false
}

// Running reports whether the stepper runs on its own (Advance feeds).
func (s *Stepper) Running() bool { return s.running }

// SetRunning runs or pauses the stepper. A stopped stepper does not run.
func (s *Stepper) SetRunning(on bool) {
	s.running = on && !s.stopped
	s.carry = 0
	if !s.stopped {
		s.state = engine.StatePaused
		if s.running {
			s.state = engine.StateRunning
		}
	}
}

// Speed returns the running speed in items per second.
func (s *Stepper) Speed() float64 { return s.speed }

// SetSpeed sets the running speed in items per second (at least 0.1).
func (s *Stepper) SetSpeed(itemsPerSecond float64) {
	s.speed = max(itemsPerSecond, 0.1)
}

// Faster moves the speed up the 1-2-5 ladder (1, 2, 5, 10 … 100 000
// items/s); Slower moves it down.
func (s *Stepper) Faster() {
	for _, v := range speedLadder() {
		if v > s.speed {
			s.speed = v
			return
		}
	}
}

// Slower moves the speed down the ladder of Faster.
func (s *Stepper) Slower() {
	ladder := speedLadder()
	for k := len(ladder) - 1; k >= 0; k-- {
		if v := ladder[k]; v < s.speed {
			s.speed = v
			return
		}
	}
}

// Advance feeds, while running, the items that elapsed time allows at the
// current speed (fractions carry over to the next call; at most one
// second's worth at once, so a stalled caller does not get a burst). It
// returns the number of items fed.
func (s *Stepper) Advance(elapsed time.Duration) int {
	if !s.running || elapsed <= 0 {
		return 0
	}
	budget := s.speed*min(elapsed.Seconds(), 1) + s.carry
	n := int(math.Floor(budget))
	s.carry = budget - float64(n)
	fed := 0
	for fed < n && s.feed() {
		fed++
	}
	return fed
}

// JumpStart goes back to the start: the source is re-opened and the
// Replayer rebuilt, paused at item 0.
func (s *Stepper) JumpStart() error {
	speed := s.speed
	if err := s.reset(); err != nil {
		s.stop(engine.StateError, err)
		return err
	}
	s.speed = speed
	s.notice = engine.Notice{Kind: engine.NoticeStart}
	return nil
}

// JumpEnd feeds everything that is left, until the end of the input or a
// failure, and pauses.
func (s *Stepper) JumpEnd() {
	s.SetRunning(false)
	for s.feed() {
	}
	s.notice = engine.Notice{Kind: engine.NoticeEnd, Item: s.item}
}

// JumpToItem goes to the state after k items (from the start when k lies
// behind), paused. It stops early at the end of the input or a failure.
func (s *Stepper) JumpToItem(k int64) error {
	s.SetRunning(false)
	if k < s.item {
		if err := s.JumpStart(); err != nil {
			return err
		}
	}
	for s.item < k && s.feed() {
	}
	s.notice = engine.Notice{Kind: engine.NoticeAtItem, Item: s.item}
	if s.item < k {
		s.notice = engine.Notice{Kind: engine.NoticeItemNotReached, Item: s.item, Target: k}
	}
	return nil
}

// JumpToOffset goes to the state right after the first item on ch that
// reaches offset — its record, or a position line past it — from the
// start when that item lies behind, paused. When no such item comes, it
// stops at the end of the input and says so in the notice.
func (s *Stepper) JumpToOffset(ch clock.Channel, offset int64) error {
	s.SetRunning(false)
	if last, ok := s.lastOff[ch]; ok && last >= offset {
		if err := s.JumpStart(); err != nil {
			return err
		}
	}
	name := s.r.Names().Channel(ch)
	for s.feed() {
		if last, ok := s.lastOff[ch]; ok && last >= offset {
			s.notice = engine.Notice{Kind: engine.NoticeAtOffset, Item: s.item, Line: s.line, Channel: name, Target: offset}
			return nil
		}
	}
	s.notice = engine.Notice{Kind: engine.NoticeOffsetNotReached, Item: s.item, Channel: name, Target: offset}
	return nil
}

// Jump parses a jump target and goes there: CH@OFFSET (a channel as
// NAME/PARTITION or UUID/PARTITION) for JumpToOffset, or an item number,
// optionally written #K, for JumpToItem.
func (s *Stepper) Jump(spec string) error {
	spec = strings.TrimSpace(spec)
	if chText, offText, ok := strings.Cut(spec, "@"); ok {
		ch, err := s.r.Names().ParseChannel(strings.TrimSpace(chText))
		if err != nil {
			return err
		}
		off, err := strconv.ParseInt(strings.TrimSpace(offText), 10, 64)
		if err != nil || off < 0 {
			return fmt.Errorf("jump %q: offset must be a non-negative integer", spec)
		}
		return s.JumpToOffset(ch, off)
	}
	k, err := strconv.ParseInt(strings.TrimPrefix(spec, "#"), 10, 64)
	if err != nil || k < 0 {
		return fmt.Errorf("jump %q: want CHANNEL@OFFSET or an item number", spec)
	}
	return s.JumpToItem(k)
}

// Item returns the number of items fed so far.
func (s *Stepper) Item() int64 { return s.item }

// Total returns the number of items in the input (up to a bad line).
func (s *Stepper) Total() int64 { return s.total }

// State returns paused, running, finished, failed closed or error.
func (s *Stepper) State() engine.RunState { return s.state }

// Err returns the error that stopped the feed: an *InputError when the
// gate failed closed or the input was bad, a source error; nil otherwise.
func (s *Stepper) Err() error { return s.stopErr }

// Notice returns what the last jump or step-to says of where it landed;
// the zero Notice after any other move.
func (s *Stepper) Notice() engine.Notice { return s.notice }

// Replayer returns the current Replayer (a new one after every jump back),
// e.g. for its Summary when the TUI quits.
func (s *Stepper) Replayer() *engine.Replayer { return s.r }

// Position returns where the stepper stands.
func (s *Stepper) Position() engine.Position {
	return engine.Position{Item: s.item, Total: s.total, Line: s.line, Running: s.running, Speed: s.speed, Notice: s.notice}
}

// Now returns the latest record timestamp fed, the time ages are measured
// to offline; zero before the first timestamped record.
func (s *Stepper) Now() time.Time { return s.now }

// Reads reports whether the input names ch at all. The end of its range
// (InputEnd) is one past its last record or its last position; a channel
// in scope the input never names ends at 0.
func (s *Stepper) Reads(ch clock.Channel) bool {
	_, ok := s.ends[ch]
	return ok
}

// InputEnd returns the end of ch's range in the input (see Reads).
func (s *Stepper) InputEnd(ch clock.Channel) (int64, bool) {
	end, ok := s.ends[ch]
	if !ok {
		// A channel in scope the input never names: all of it is beyond.
		return 0, true
	}
	return end, true
}
