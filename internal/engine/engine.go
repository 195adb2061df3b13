// Package engine is the gate-driving engine every runtime drives — live
// (watch), replay (the offline replay and the stepper) and demo: it feeds a
// source of capture items — a capture file, a broker range, a live follow —
// to the delivery gate and reports what a node consuming those channels
// would have delivered, held and dropped, and why.
//
// A Replayer owns one gate. Feed hands it one item at a time and emits the
// resulting events; Summary describes the state at any moment. Run is the
// loop over a Source, with cancellation and progress. Tasks runs one
// Replayer per Parsley task (a partition number) over one input. RunState,
// Position and Notice say what a feed is doing and where it stands. Nothing
// here does I/O of its own: sources and event writers are the caller's. It
// knows nothing of the offline replay above it (internal/replay: the
// stepper, the interleavings, shards, merges, prefetching).
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// Source yields capture items in order and io.EOF at the end. The item
// returned may be reused by the next call.
type Source interface {
	Next() (*record.Item, error)
}

// EventType tells the events of a replay apart.
type EventType uint8

const (
	// EventDeliver: the gate delivered the record.
	EventDeliver EventType = iota + 1
	// EventDrop: the replay guard dropped the record (at or below settled).
	EventDrop
	// EventHold: the record was received and queued, not delivered: as a
	// blocked head (Blockers say on what) or behind one (Behind says which).
	EventHold
)

func (t EventType) String() string {
	switch t {
	case EventDeliver:
		return "deliver"
	case EventDrop:
		return "drop"
	case EventHold:
		return "hold"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is one step of a replay, in the order it happened.
type Event struct {
	Type    EventType
	Seq     int64 // deliveries: 1-based position in the delivery sequence
	Channel clock.Channel
	Offset  int64
	// Line is the capture line of the record for drops and holds (0 when
	// the source has no lines).
	Line int64
	// Behind is, for a hold behind another held record, the offset of its
	// channel's head; −1 when the record is the head itself.
	Behind int64
	// Blockers of a record held as its channel's head.
	Blockers []gate.Blocker
	// Undecodable is the reason code of a head held by --undecodable=hold.
	Undecodable string
	// Timestamp is, for a hold, the record's timestamp in milliseconds
	// since the epoch, when HasTimestamp.
	Timestamp    int64
	HasTimestamp bool
}

// Config sets up a Replayer.
type Config struct {
	// Scope is the set of channels the simulated node consumes. Items on
	// other channels are skipped (counted, never received).
	Scope []clock.Channel
	// Starts are start positions: a start s is a position advance to s
	// before anything is read.
	Starts map[clock.Channel]int64
	// Undecodable says what an undecodable header does (default: fail
	// closed).
	Undecodable gate.UndecodableMode
	// ReceiptOnly settles channels only on receipt and at their start
	// position, as current Parsley releases do: position lines are ignored
	// but the first of each channel (gate.WithPositionAdvance(false)).
	ReceiptOnly bool
	// MaxHeaderSize is the metadata budget of a clock header (default
	// clock.DefaultMaxSize).
	MaxHeaderSize int
	// Names resolves topic names; names learned from items are added.
	Names *clock.Names
	// Grow adds a channel outside the scope to it when its first item is
	// a position, starting it there: what a follower's new partitions
	// yield (kafka.OnNewChannel). Records before such a position are
	// skipped as usual.
	Grow bool
	// Seed, when not nil, is the state the gate starts from
	// (gate.Restore): a Parsley task's ordering state, or another gate's.
	// Its channels are the scope (Scope must then be empty, and Starts
	// too: the state is the start). Records at or below a channel's seeded
	// Fed are not received again: those held in the seed are already
	// there, those at or below its settled position are dropped by the
	// replay guard, and the others are missing from the state (Missing).
	Seed []gate.ChannelState
}

// Replayer feeds items to a gate. It is not safe for concurrent use.
type Replayer struct {
	g       *gate.Gate
	names   *clock.Names
	decode  []clock.DecodeOption
	scratch []gate.Event
	// clockBuf is where each record's clock is decoded.
	clockBuf []clock.Entry
	ev       Event // the event being emitted
	// topics caches (name, UUID) pairs already checked against names.
	topics []topicPair

	// facts are the log facts the source gave, per channel.
	facts map[clock.Channel]*record.LogFacts

	items, records, positions, skipped int64
	lastLine                           int64
	grow                               bool // Config.Grow

	// seeded is, per channel of a seeded gate, what the seed holds.
	seeded  map[clock.Channel]*seeded
	reread  int64
	missing []Missing
}

// seeded is one channel's seed: records at or below fed were received
// before; held are the offsets the seed holds, settled the position below
// its head (fed when it holds nothing).
type seeded struct {
	fed, settled int64
	held         map[int64]bool
}

// Missing is a record of a seeded channel read again that the seed should
// hold but does not: above the channel's settled position and at or below
// its fed-up-to, yet not in its hold queue. The state was written behind
// where the input starts (a committed offset behind fed-up-to + 1), and
// the record is not fed: the gate received it once already, or never.
type Missing struct {
	Channel clock.Channel
	Offset  int64
	// Fed is the channel's seeded fed-up-to.
	Fed int64
}

// New returns a Replayer over cfg.Scope.
func New(cfg Config) (*Replayer, error) {
	if len(cfg.Scope) == 0 && cfg.Seed == nil {
		return nil, errors.New("empty scope: no channel to replay")
	}
	// Clocks are decoded into one reused buffer; the gate copies those it
	// holds.
	opts := []gate.Option{gate.WithUndecodable(cfg.Undecodable), gate.WithBorrowedClocks(),
		gate.WithPositionAdvance(!cfg.ReceiptOnly)}
	if cfg.Seed != nil {
		if len(cfg.Scope) > 0 || len(cfg.Starts) > 0 {
			return nil, errors.New("a seeded replay takes its scope and starts from the seed")
		}
		return newSeeded(cfg, opts)
	}
	for ch, s := range cfg.Starts {
		opts = append(opts, gate.WithStart(ch, s))
	}
	g, err := gate.New(cfg.Scope, opts...)
	if err != nil {
		return nil, err
	}
	return newReplayer(cfg, g), nil
}

// newSeeded returns a Replayer whose gate is restored from cfg.Seed. The
// heads the seed's cascade delivers at once are its first events (Flush).
func newSeeded(cfg Config, opts []gate.Option) (*Replayer, error) {
	g, err := gate.Restore(cfg.Seed, opts...)
	if err != nil {
		return nil, err
	}
	r := newReplayer(cfg, g)
	r.seeded = make(map[clock.Channel]*seeded, len(cfg.Seed))
	for _, cs := range cfg.Seed {
		s := &seeded{fed: cs.Fed, settled: cs.Fed}
		if len(cs.Held) > 0 {
			s.settled = cs.Held[0].Offset - 1
			s.held = make(map[int64]bool, len(cs.Held))
			for _, h := range cs.Held {
				s.held[h.Offset] = true
			}
		}
		r.seeded[cs.Channel] = s
	}
	return r, nil
}

func newReplayer(cfg Config, g *gate.Gate) *Replayer {
	names := cfg.Names
	if names == nil {
		names = &clock.Names{}
	}
	r := &Replayer{g: g, names: names, clockBuf: make([]clock.Entry, 0, 16), grow: cfg.Grow}
	if cfg.MaxHeaderSize != 0 {
		r.decode = []clock.DecodeOption{clock.MaxSize(cfg.MaxHeaderSize)}
	}
	return r
}

// Flush emits the events the gate has not handed out yet: after a seeded
// start, the deliveries of the seeded heads nothing blocks any more. Feed
// flushes them too, before its own; call Flush to see them first.
func (r *Replayer) Flush(emit func(*Event) error) error {
	r.scratch = r.g.Drain(r.scratch[:0])
	for _, e := range r.scratch {
		r.ev = Event{Type: EventDeliver, Seq: e.Seq, Channel: e.Channel, Offset: e.Offset, Behind: -1}
		if e.Kind == gate.EventDrop {
			r.ev.Type = EventDrop
		}
		if err := emit(&r.ev); err != nil {
			return err
		}
	}
	return nil
}

// Reread returns how many records of a seeded gate were read again and
// not fed, being held in the seed already.
func (r *Replayer) Reread() int64 { return r.reread }

// Missing returns the records read again that the seed should hold and
// does not (see Missing), in the order read.
func (r *Replayer) Missing() []Missing { return r.missing }

// Gate returns the replayer's gate, for queries.
func (r *Replayer) Gate() *gate.Gate { return r.g }

// LogFacts returns the log facts the source gave for ch (a log-facts line
// or item), if any. The facts are shared: do not change them.
func (r *Replayer) LogFacts(ch clock.Channel) (*record.LogFacts, bool) {
	f, ok := r.facts[ch]
	return f, ok && f != nil
}

// Skipped returns the number of records seen on channels outside the scope.
func (r *Replayer) Skipped() int64 { return r.skipped }

// Names returns the names known so far.
func (r *Replayer) Names() *clock.Names { return r.names }

// InputError is a problem with one item of the input: a record the gate
// failed closed on, or a line naming a channel that cannot be resolved.
// FailureOf tells the two apart.
type InputError struct {
	Line    int64  // capture line, 0 when unknown
	Channel string // as people write it
	Offset  int64  // −1 when not about a record
	// Code is the reason code when the gate failed closed, "" otherwise.
	Code gate.Code
	Err  error
}

// NewInputError is the one constructor of InputError: err placed at item it,
// at its line and the channel as the item names it. Feed refines it for
// errors of the gate (failure).
func NewInputError(it *record.Item, err error) *InputError {
	return &InputError{Line: it.Line, Channel: fmt.Sprintf("%s/%d", it.Topic, it.Partition), Offset: -1, Err: err}
}

// failure places an error the gate returned for item it on channel ch: at
// the record the gate failed closed on, with its reason code, or else at
// the item's offset.
func (r *Replayer) failure(it *record.Item, ch clock.Channel, err error) *InputError {
	e := NewInputError(it, err)
	var fc *gate.FailClosedError
	if !errors.As(err, &fc) {
		e.Channel, e.Offset = r.names.Channel(ch), it.Offset
		return e
	}
	e.Channel, e.Offset, e.Code, e.Err = r.names.Channel(fc.Channel), fc.Offset, fc.Code, fc.Err
	if e.Err == nil {
		e.Err = errors.New(string(fc.Code))
	}
	return e
}

// FailedClosed reports whether the gate failed closed on this input (Code
// is set), rather than the input being unreadable before the gate saw it.
func (e *InputError) FailedClosed() bool { return e.Code != "" }

// FailureOf returns the *InputError in err's chain when it says the gate
// failed closed, and whether it does. Anything else — bad input the gate
// never saw, a broker or I/O error, an interruption — is not a failure of
// the gate.
func FailureOf(err error) (*InputError, bool) {
	var ie *InputError
	if errors.As(err, &ie) && ie.FailedClosed() {
		return ie, true
	}
	return nil, false
}

func (e *InputError) Error() string {
	var where string
	if e.Line > 0 {
		where = fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Offset >= 0 {
		where += fmt.Sprintf("%s offset %d: ", e.Channel, e.Offset)
	} else if e.Channel != "" {
		where += e.Channel + ": "
	}
	if e.FailedClosed() {
		// Name the code first; a decode error's text already starts with it.
		msg := e.Err.Error()
		if code := string(e.Code); !strings.HasPrefix(msg, code) {
			msg = code + ": " + msg
		}
		return where + "failed closed: " + msg
	}
	return where + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// ResolveChannel returns the channel an item names, learning the topic's
// name from items that carry both name and UUID. An item with a name but
// no UUID needs the name bound already (--topic-id).
func ResolveChannel(names *clock.Names, it *record.Item) (clock.Channel, error) {
	if !it.TopicID.IsZero() {
		if it.Topic != "" {
			if err := names.Add(it.Topic, it.TopicID); err != nil {
				return clock.Channel{}, fmt.Errorf("channel-identity-changed: %w", err)
			}
		}
		return clock.Channel{Topic: it.TopicID, Partition: it.Partition}, nil
	}
	id, ok := names.ID(it.Topic)
	if !ok {
		return clock.Channel{}, fmt.Errorf("topic %q has no topic_id, and neither another line of the input nor --topic-id %s=UUID binds it", it.Topic, it.Topic)
	}
	return clock.Channel{Topic: id, Partition: it.Partition}, nil
}

type topicPair struct {
	name string
	id   clock.TopicID
}

// maxTopicCache bounds the pairs compared linearly before each line's
// channel is resolved through the names' maps.
const maxTopicCache = 16

func (r *Replayer) channel(it *record.Item) (clock.Channel, error) {
	both := it.Topic != "" && !it.TopicID.IsZero()
	if both {
		for _, p := range r.topics {
			if p.id == it.TopicID && p.name == it.Topic {
				return clock.Channel{Topic: it.TopicID, Partition: it.Partition}, nil
			}
		}
	}
	ch, err := ResolveChannel(r.names, it)
	if err == nil && both && len(r.topics) < maxTopicCache {
		r.topics = append(r.topics, topicPair{it.Topic, it.TopicID})
	}
	return ch, err
}

// Feed receives one item: a record through the gate, or a position line as
// a position advance. It calls emit for each resulting event, in order; the
// event is only valid during the call. An error stops the replay: an
// *InputError for bad input (the gate failed closed, or an unresolvable
// channel), or emit's error.
func (r *Replayer) Feed(it *record.Item, emit func(*Event) error) error {
	r.items++
	r.lastLine = it.Line
	ch, err := r.channel(it)
	if err != nil {
		return NewInputError(it, err)
	}
	if it.Kind == record.KindLogFacts {
		// Not an input of the gate: kept for the diagnosis (inspect).
		if r.facts == nil {
			r.facts = map[clock.Channel]*record.LogFacts{}
		}
		r.facts[ch] = it.Facts
		return nil
	}
	if !r.g.InScope(ch) && r.grow && it.Kind == record.KindPosition {
		if err := r.g.AddChannelAt(ch, it.Offset); err != nil {
			return r.failure(it, ch, err)
		}
	}
	if !r.g.InScope(ch) {
		if it.Kind == record.KindRecord {
			r.skipped++
		}
		return nil
	}
	switch it.Kind {
	case record.KindPosition:
		r.positions++
		err = r.g.Advance(ch, it.Offset)
	case record.KindRecord:
		if s := r.seeded[ch]; s != nil && it.Offset > s.settled && it.Offset <= s.fed {
			// Received before the seed was taken: held in it, or lost.
			if s.held[it.Offset] {
				r.reread++
			} else {
				r.missing = append(r.missing, Missing{Channel: ch, Offset: it.Offset, Fed: s.fed})
			}
			return nil
		}
		r.records++
		var c clock.Clock
		var derr error
		c, r.clockBuf, _, derr = clock.FromHeadersInto(r.clockBuf, it.Headers, r.decode...)
		err = r.g.Receive(ch, it.Offset, c, derr)
	default:
		return NewInputError(it, fmt.Errorf("unknown item kind %v", it.Kind))
	}
	if err != nil {
		return r.failure(it, ch, err)
	}
	return r.emit(it, ch, emit)
}

func (r *Replayer) emit(it *record.Item, ch clock.Channel, emit func(*Event) error) error {
	r.scratch = r.g.Drain(r.scratch[:0])
	ev := &r.ev // reused: handing a local's address to emit would allocate
	settledHere := false
	for _, e := range r.scratch {
		*ev = Event{Seq: e.Seq, Channel: e.Channel, Offset: e.Offset, Behind: -1}
		switch e.Kind {
		case gate.EventDeliver:
			ev.Type = EventDeliver
		case gate.EventDrop:
			ev.Type = EventDrop
			ev.Line = it.Line
		}
		if e.Channel == ch && e.Offset == it.Offset {
			settledHere = true
		}
		if err := emit(ev); err != nil {
			return err
		}
	}
	if it.Kind != record.KindRecord || settledHere {
		return nil
	}
	// Received but neither delivered nor dropped: it is held.
	*ev = Event{Type: EventHold, Channel: ch, Offset: it.Offset, Line: it.Line, Behind: -1,
		Timestamp: it.Timestamp, HasTimestamp: it.HasTimestamp}
	if head, ok := r.g.Head(ch); ok && head.Offset != it.Offset {
		ev.Behind = head.Offset
	} else {
		ev.Blockers = r.g.Blockers(ch)
		ev.Undecodable = head.Undecodable
	}
	return emit(ev)
}

// Progress is a snapshot for a progress line.
type Progress struct {
	Items    int64 // items read
	Held     int64 // records held now
	Elapsed  time.Duration
	Finished bool
}

// ErrInterrupted is returned by Run, and by sources made by WithContext,
// when the context is cancelled.
var ErrInterrupted = errors.New("interrupted")

// WithContext returns src that ends with ErrInterrupted once ctx is done,
// checked every few items: for the readings that happen before Run (a first
// pass, an interleaving), so that Ctrl-C stops them too.
func WithContext(ctx context.Context, src Source) Source {
	return &ctxSource{ctx: ctx, src: src}
}

// Underlying returns the source and context a source made by WithContext
// wraps, or src and a nil context for any other: a reader that can read
// ahead on its own (replay's prefetcher) reads the underlying source under
// that context.
func Underlying(src Source) (Source, context.Context) {
	if c, ok := src.(*ctxSource); ok {
		return c.src, c.ctx
	}
	return src, nil
}

type ctxSource struct {
	ctx context.Context
	src Source
	n   int
}

func (c *ctxSource) Next() (*record.Item, error) {
	if c.n++; c.n&255 == 0 && c.ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	it, err := c.src.Next()
	if err != nil && err != io.EOF && c.ctx.Err() != nil {
		return nil, ErrInterrupted // a read that failed because ctx ended
	}
	return it, err
}

// Run feeds every item of src to r until the end, an error, or ctx's
// cancellation (ErrInterrupted, after the item in hand). progress, when not
// nil, is called about once a second with now() timestamps and once at the
// end.
func Run(ctx context.Context, src Source, r *Replayer, emit func(*Event) error, progress func(Progress), now func() time.Time) error {
	var start, lastReport time.Time
	if progress != nil {
		start = now()
		lastReport = start
	}
	for n := 0; ; n++ {
		if n&255 == 0 {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			if progress != nil {
				if t := now(); t.Sub(lastReport) >= time.Second {
					lastReport = t
					progress(Progress{Items: r.items, Held: r.g.Stats().Held, Elapsed: t.Sub(start)})
				}
			}
		}
		it, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := r.Feed(it, emit); err != nil {
			return err
		}
	}
	if progress != nil {
		progress(Progress{Items: r.items, Held: r.g.Stats().Held, Elapsed: now().Sub(start), Finished: true})
	}
	return nil
}

// Discover reads src to its end and returns every channel it names, sorted,
// learning topic names on the way.
func Discover(src Source, names *clock.Names) ([]clock.Channel, error) {
	seen := map[clock.Channel]bool{}
	var out []clock.Channel
	r := &Replayer{names: names}
	// A line naming its topic by name only (SPEC §4 allows it) is resolved
	// at the end, when a later line may have bound the name to its UUID.
	var unbound []record.Item
	add := func(it *record.Item) error {
		ch, err := r.channel(it)
		if err != nil {
			return NewInputError(it, err)
		}
		if !seen[ch] {
			seen[ch] = true
			out = append(out, ch)
		}
		return nil
	}
	for {
		it, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if it.TopicID.IsZero() && it.Topic != "" {
			if _, ok := names.ID(it.Topic); !ok {
				if len(unbound) == 0 || unbound[len(unbound)-1].Topic != it.Topic || unbound[len(unbound)-1].Partition != it.Partition {
					unbound = append(unbound, record.Item{Kind: it.Kind, Topic: it.Topic, Partition: it.Partition, Offset: it.Offset, Line: it.Line})
				}
				continue
			}
		}
		if err := add(it); err != nil {
			return nil, err
		}
	}
	for i := range unbound {
		if err := add(&unbound[i]); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, clock.Channel.Compare)
	return out, nil
}
