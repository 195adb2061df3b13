// Package gate is the delivery gate of SPEC §3 as a pure state machine: hold
// queues per channel, settled positions, the replay guard, fail-closed
// decoding and the cascade that delivers every deliverable head, together
// with the questions an operator asks of it — what is held, on what, and
// what would this node stamp now.
//
// A Gate does no I/O, starts no goroutines and reads no clock. The caller
// feeds it records, position advances and scope growth, and drains the
// deliveries and replay-guard drops it queued. For a given sequence of
// inputs the outputs are always the same, so replay, watch and demo can
// share one engine and tests can compare it against ground truth.
//
// The cascade never rescans channels. A held head is parked under one unmet
// (channel, required position) in that channel's min-heap of waiters; when a
// channel's settled position moves, only the waiters it now satisfies wake,
// and a woken head resumes its clock where it stopped, possibly parking again
// on its next unmet entry. The cost per record is therefore flat in the
// number of channels. Only scope growth, which is rare, re-evaluates every
// held head. A held record costs its offset, its clock and a small fixed
// overhead; payloads never reach the gate.
package gate

import (
	"fmt"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
)

// UndecodableMode says what the gate does with a record whose header is
// undecodable.
type UndecodableMode uint8

const (
	// FailOnUndecodable fails the gate closed at an undecodable record, as
	// Parsley does: the record is not queued and nothing after it is
	// processed. It is the default.
	FailOnUndecodable UndecodableMode = iota
	// HoldUndecodable queues an undecodable record as a head that never
	// delivers, so that what it blocks — the blast radius — can be shown.
	HoldUndecodable
)

func (m UndecodableMode) String() string {
	switch m {
	case FailOnUndecodable:
		return "fail"
	case HoldUndecodable:
		return "hold"
	}
	return fmt.Sprintf("UndecodableMode(%d)", uint8(m))
}

// Option configures a Gate in New.
type Option func(*config)

type config struct {
	mode   UndecodableMode
	starts []startPos
	borrow bool // clocks passed to Receive are the caller's to reuse
	// receiptOnly ignores position advances except a channel's first
	// (WithPositionAdvance(false)).
	receiptOnly bool
}

type startPos struct {
	ch  clock.Channel
	pos int64
}

// WithUndecodable sets what happens to a record with an undecodable header
// (default FailOnUndecodable).
func WithUndecodable(m UndecodableMode) Option {
	return func(c *config) { c.mode = m }
}

// WithStart sets the start position of a channel in scope: a position
// advance to start before anything is read, so fed = start−1 and records
// below start are replays. A start of 0 covers nothing. Without a start
// nothing is known of a channel (settled −1) until its first record or
// position advance. Given twice for one channel, the last one counts.
func WithStart(ch clock.Channel, start int64) Option {
	return func(c *config) { c.starts = append(c.starts, startPos{ch, start}) }
}

// WithBorrowedClocks tells the gate that the caller reuses the storage of
// every clock it passes to Receive once Receive returns (a decode buffer,
// say). The gate then copies a clock it has to keep — that of a record it
// holds — instead of keeping the caller's: a record delivered at once costs
// no allocation. By default the gate keeps the clocks it is given.
func WithBorrowedClocks() Option {
	return func(c *config) { c.borrow = true }
}

// WithPositionAdvance says whether position advances settle a channel
// (default true, the seed's semantics): the consumer's position moving past
// transaction markers and aborted offsets settles them. Current Parsley
// releases no longer poll the broker between deliveries and settle a
// channel only on receiving a record, and at its start position; with
// false the gate does the same: Advance is ignored except on a channel
// nothing is known of yet (no start, no record, no advance), where it is
// the start position. A head whose clock names a transaction marker or an
// aborted offset then stays held until the next record on that channel
// arrives. Ignored advances still count for Reached.
func WithPositionAdvance(on bool) Option {
	return func(c *config) { c.receiptOnly = !on }
}

// Gate is the delivery gate of one (real or simulated) node. The zero value
// is not usable; call New. A Gate is not safe for concurrent use.
type Gate struct {
	cfg config

	idx   map[clock.Channel]int32 // channel → index into chans
	chans []chanState             // dense, in order of joining the scope
	order []int32                 // indexes of chans sorted by channel
	// settled[i] is settled(chans[i]), kept up to date on every change: a
	// gate check reads one int64 from a compact array rather than the head
	// of another channel's queue.
	settled []int64

	work   []int32 // FIFO of channels whose head is to be evaluated
	workAt int
	events []Event
	seq    int64
	stats  Stats
	failed *FailClosedError

	codes   []string       // interned undecodable reason codes; record.undec indexes it (1-based)
	scratch []carriedEntry // merge buffer for carried clocks
}

// chanState is everything the gate keeps for one channel in scope. It is
// 128 bytes with the fields every record touches in the first 64, so that a
// gate over thousands of channels pays about one cache miss per channel it
// visits.
type chanState struct {
	fed int64 // highest position received (or advanced past), −1 unknown

	// The hold queue is q[head:]. Popping moves head; the backing array is
	// reused, so a steady stream of records allocates nothing.
	q    []record
	head int

	carried []carriedEntry // A[c], sorted by channel; merged in place

	ch      clock.Channel
	waiters []waiter // min-heap of heads parked on this channel
	// reached is the highest offset received or advanced past, whether or
	// not the advance settled anything; known says that a start, a record
	// or an advance was seen.
	reached int64
	known   bool
	_       [7]byte // pad to 128 bytes
}

// carriedEntry is one entry of a carried clock, with the index of its
// channel in chans cached (−1 when not in scope). A channel's carried clock
// names every channel any of its records names, so evaluating a record finds
// its entries' channels here, in cache after the fold, instead of in the
// map.
type carriedEntry struct {
	ch  clock.Channel
	idx int32
	pos int64
}

// record is one held record: its offset, its clock and bookkeeping.
type record struct {
	off int64
	clk clock.Clock
	// cur is where evaluation of clk resumes: every entry below it was met
	// (or ignored) when last looked at, and settled positions never fall.
	cur   int32
	undec uint32 // 0, or 1 + index into Gate.codes when held undecodable
}

// waiter is a head parked until settled(its channel of parking) ≥ need.
type waiter struct {
	need int64
	ch   int32 // the channel whose head waits
}

// New returns a gate over scope (duplicates are ignored). It fails on a
// start for a channel not in scope, a negative start, or a channel that no
// header could name (zero topic UUID, negative partition).
func New(scope []clock.Channel, opts ...Option) (*Gate, error) {
	g, err := newGate(len(scope), opts)
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(scope)
	slices.SortFunc(sorted, clock.Channel.Compare)
	sorted = slices.Compact(sorted)
	for _, ch := range sorted {
		if err := checkChannel(ch); err != nil {
			return nil, err
		}
		g.join(ch, -1)
	}
	for _, s := range g.cfg.starts {
		i, ok := g.idx[s.ch]
		switch {
		case !ok:
			return nil, fmt.Errorf("gate: start for %v: %w", s.ch, ErrNotInScope)
		case s.pos < 0:
			return nil, fmt.Errorf("gate: start for %v: negative position %d", s.ch, s.pos)
		}
		g.chans[i].fed = s.pos - 1
		g.chans[i].reached = s.pos - 1
		g.chans[i].known = true
		g.settled[i] = s.pos - 1
	}
	return g, nil
}

// newGate returns an empty gate configured by opts, with room for n
// channels.
func newGate(n int, opts []Option) (*Gate, error) {
	g := &Gate{idx: make(map[clock.Channel]int32, n)}
	g.chans = make([]chanState, 0, n)
	g.settled = make([]int64, 0, n)
	for _, o := range opts {
		o(&g.cfg)
	}
	if g.cfg.mode > HoldUndecodable {
		return nil, fmt.Errorf("gate: unknown undecodable mode %d", g.cfg.mode)
	}
	return g, nil
}

func checkChannel(ch clock.Channel) error {
	switch {
	case ch.Topic.IsZero():
		return fmt.Errorf("gate: channel %v: zero topic UUID", ch)
	case ch.Partition < 0:
		return fmt.Errorf("gate: channel %v: negative partition", ch)
	}
	return nil
}

// join adds ch to the scope with fed = fed.
func (g *Gate) join(ch clock.Channel, fed int64) int32 {
	i := int32(len(g.chans))
	g.idx[ch] = i
	g.chans = append(g.chans, chanState{ch: ch, fed: fed, reached: fed})
	g.settled = append(g.settled, fed)
	at := len(g.order)
	if at > 0 && g.chans[g.order[at-1]].ch.Compare(ch) > 0 {
		at, _ = slices.BinarySearchFunc(g.order, ch, func(j int32, ch clock.Channel) int {
			return g.chans[j].ch.Compare(ch)
		})
	}
	g.order = slices.Insert(g.order, at, i)
	return i
}

// Receive feeds the record at offset on ch carrying clock c. A non-nil
// decodeErr says its header was undecodable (c is then ignored); its reason
// code is clock.CodeOf(decodeErr), or CodeUndecodable when it carries none.
//
// A record at or below settled(ch) is dropped by the replay guard (an
// EventDrop); one above settled but not above fed(ch) fails the gate closed
// with CodeOutOfOrderFeed; an undecodable one fails it closed unless the
// gate holds undecodable records. Otherwise the record is queued and the
// cascade runs. Receive returns the *FailClosedError when the gate fails
// closed, and from then on for every input; an error wrapping ErrNotInScope
// for a channel outside the scope; an error for a negative offset. Only a
// nil return or a fail-closed error changes the gate.
func (g *Gate) Receive(ch clock.Channel, offset int64, c clock.Clock, decodeErr error) error {
	if g.failed != nil {
		return g.failed
	}
	i, ok := g.idx[ch]
	if !ok {
		return fmt.Errorf("gate: receive %v@%d: %w", ch, offset, ErrNotInScope)
	}
	if offset < 0 {
		return fmt.Errorf("gate: receive %v@%d: negative offset", ch, offset)
	}
	s := &g.chans[i]
	settled := g.settled[i]
	if offset <= settled {
		s.reached, s.known = max(s.reached, offset), true
		g.stats.Received++
		g.stats.Dropped++
		g.events = append(g.events, Event{Kind: EventDrop, Channel: ch, Offset: offset})
		return nil
	}
	if offset <= s.fed {
		return g.fail(ch, offset, CodeOutOfOrderFeed, fmt.Errorf("%w: offset %d is not above %d, the highest received (settled %d)",
			ErrOutOfOrderFeed, offset, s.fed, settled))
	}
	var undec uint32
	if decodeErr != nil {
		code := HeaderCode(decodeErr)
		if g.cfg.mode != HoldUndecodable {
			return g.fail(ch, offset, code, decodeErr)
		}
		undec = g.intern(string(code))
		c = clock.Clock{}
	}
	g.stats.Received++
	s.fed = offset
	s.reached, s.known = max(s.reached, offset), true
	g.fold(s, c)
	r := record{off: offset, clk: c, undec: undec}
	if s.head < len(s.q) {
		// Behind a held head: it waits its turn and changes no settled
		// position.
		g.hold(s, r)
		g.stats.Held++
		g.cascade()
		return nil
	}
	// The record is the new head: settled moves from the old fed to
	// offset−1, which may settle a gap that waiters need.
	g.settled[i] = offset - 1
	g.wake(i)
	switch {
	case len(g.work) > 0 || undec != 0:
		// Heads woken by the gap go first, as in any cascade.
		g.hold(s, r)
		g.stats.Held++
		g.work = append(g.work, i)
	case g.ready(i, &r):
		// Deliverable at once: the common case, which never touches the
		// queue. This is what drainChannel would do, in the same order.
		g.seq++
		g.events = append(g.events, Event{Kind: EventDeliver, Seq: g.seq, Channel: ch, Offset: offset})
		g.stats.Delivered++
		g.settled[i] = offset
		g.wake(i)
	default:
		g.hold(s, r) // ready parked it as the head
		g.stats.Held++
	}
	g.cascade()
	return nil
}

// Advance says the consumer's position on ch reached position with no
// record below it still to come (transaction markers, aborted records, the
// end of a range): fed = max(fed, position−1), then the cascade runs. Errors
// are as for Receive.
func (g *Gate) Advance(ch clock.Channel, position int64) error {
	if g.failed != nil {
		return g.failed
	}
	i, ok := g.idx[ch]
	if !ok {
		return fmt.Errorf("gate: advance %v to %d: %w", ch, position, ErrNotInScope)
	}
	if position < 0 {
		return fmt.Errorf("gate: advance %v to %d: negative position", ch, position)
	}
	s := &g.chans[i]
	s.reached = max(s.reached, position-1)
	if g.cfg.receiptOnly && s.known {
		return nil
	}
	s.known = true
	if position-1 > s.fed {
		s.fed = position - 1
		if s.head == len(s.q) {
			g.settled[i] = s.fed
			g.wake(i)
			g.cascade()
		}
	}
	return nil
}

// AddChannel grows the scope by ch, seeded at the node's carried knowledge
// of it: its entry in Stamp, or −1 when the node knows nothing of ch — never
// the log start. Records at or below the seed are then replays. From now on
// entries on ch gate heads; heads already delivered stay delivered. It fails
// with an error wrapping ErrInScope when ch is already in scope.
func (g *Gate) AddChannel(ch clock.Channel) error {
	return g.addChannel(ch, -1, false)
}

// AddChannelAt is AddChannel with an explicit start: fed(ch) = start−1.
func (g *Gate) AddChannelAt(ch clock.Channel, start int64) error {
	return g.addChannel(ch, start, true)
}

func (g *Gate) addChannel(ch clock.Channel, start int64, explicit bool) error {
	if g.failed != nil {
		return g.failed
	}
	if err := checkChannel(ch); err != nil {
		return err
	}
	if _, ok := g.idx[ch]; ok {
		return fmt.Errorf("gate: add %v: %w", ch, ErrInScope)
	}
	fed := int64(-1)
	if explicit {
		if start < 0 {
			return fmt.Errorf("gate: add %v: negative start %d", ch, start)
		}
		fed = start - 1
	} else {
		for k := range g.chans {
			if e := carriedOf(g.chans[k].carried, ch); e != nil {
				fed = max(fed, e.pos)
			}
		}
	}
	i := g.join(ch, fed)
	g.chans[i].known = true // the seed is its start position
	for k := range g.chans {
		if e := carriedOf(g.chans[k].carried, ch); e != nil {
			e.idx = i
		}
	}
	// Entries on ch were skipped as out of scope by heads evaluated so far,
	// and a cursor cannot tell those apart: re-evaluate every head from its
	// first entry. Scope growth is rare; this is the one full pass.
	for k := range g.chans {
		g.chans[k].waiters = g.chans[k].waiters[:0]
	}
	for _, k := range g.order {
		s := &g.chans[k]
		if s.head < len(s.q) {
			s.q[s.head].cur = 0
			g.work = append(g.work, k)
		}
	}
	g.cascade()
	return nil
}

// Drain appends the events queued since the last Drain to dst, in the order
// they happened, clears the queue and returns dst.
func (g *Gate) Drain(dst []Event) []Event {
	dst = append(dst, g.events...)
	g.events = g.events[:0]
	return dst
}

func (g *Gate) fail(ch clock.Channel, offset int64, code Code, err error) error {
	g.failed = &FailClosedError{Channel: ch, Offset: offset, Code: code, Err: err}
	return g.failed
}

func (g *Gate) intern(code string) uint32 {
	for k, c := range g.codes {
		if c == code {
			return uint32(k + 1)
		}
	}
	g.codes = append(g.codes, code)
	return uint32(len(g.codes))
}

// hold queues r on s, copying its clock when the caller lends it.
func (g *Gate) hold(s *chanState, r record) {
	if g.cfg.borrow {
		r.clk = r.clk.Clone()
	}
	s.push(r)
}

func (s *chanState) push(r record) {
	if len(s.q) == cap(s.q) && s.head > 0 && s.head >= len(s.q)/2 {
		// Slide the live part down instead of growing: amortised O(1)
		// because at least half the array is free.
		n := copy(s.q, s.q[s.head:])
		clear(s.q[n:])
		s.q = s.q[:n]
		s.head = 0
	}
	s.q = append(s.q, r)
}

// popHead removes the head of channel i and updates settled(i).
func (g *Gate) popHead(i int32) {
	s := &g.chans[i]
	s.q[s.head] = record{} // release the clock
	s.head++
	if s.head == len(s.q) {
		s.q = s.q[:0]
		s.head = 0
		g.settled[i] = s.fed
		return
	}
	g.settled[i] = s.q[s.head].off - 1
}

// fold joins c into the carried clock of s in place. Once a channel's
// carried clock names every channel its records do, folding allocates
// nothing.
func (g *Gate) fold(s *chanState, c clock.Clock) {
	es := c.Entries()
	a := s.carried
	i := 0
	for k := range es {
		e := &es[k]
		for i < len(a) && a[i].ch != e.Channel && a[i].ch.Compare(e.Channel) < 0 {
			i++
		}
		if i < len(a) && a[i].ch == e.Channel {
			a[i].pos = max(a[i].pos, e.Position)
			i++
			continue
		}
		g.foldSlow(s, es[k:])
		return
	}
}

// foldSlow merges es, which names a channel s.carried lacks, into a new
// carried slice; the old one becomes the scratch buffer.
func (g *Gate) foldSlow(s *chanState, es []clock.Entry) {
	a := s.carried
	out := g.scratch[:0]
	i, j := 0, 0
	for i < len(a) || j < len(es) {
		var r int
		switch {
		case i == len(a):
			r = 1
		case j == len(es):
			r = -1
		default:
			r = a[i].ch.Compare(es[j].Channel)
		}
		switch {
		case r < 0:
			out = append(out, a[i])
			i++
		case r > 0:
			idx, ok := g.idx[es[j].Channel]
			if !ok {
				idx = -1
			}
			out = append(out, carriedEntry{ch: es[j].Channel, idx: idx, pos: es[j].Position})
			j++
		default:
			out = append(out, carriedEntry{ch: a[i].ch, idx: a[i].idx, pos: max(a[i].pos, es[j].Position)})
			i++
			j++
		}
	}
	s.carried = out
	g.scratch = a[:0]
}

// carriedOf returns the entry of a for ch, or nil.
func carriedOf(a []carriedEntry, ch clock.Channel) *carriedEntry {
	k, ok := slices.BinarySearchFunc(a, ch, func(e carriedEntry, ch clock.Channel) int {
		return e.ch.Compare(ch)
	})
	if !ok {
		return nil
	}
	return &a[k]
}

// findCarried returns the index of ch in a, searching from lo. ch must be
// there: a channel's carried clock names every channel of its records.
func findCarried(a []carriedEntry, lo int, ch clock.Channel) int {
	if len(a)-lo > 8 {
		k, _ := slices.BinarySearchFunc(a[lo:], ch, func(e carriedEntry, ch clock.Channel) int {
			return e.ch.Compare(ch)
		})
		return lo + k
	}
	for a[lo].ch != ch {
		lo++
	}
	return lo
}
