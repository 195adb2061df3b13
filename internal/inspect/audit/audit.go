// Package audit is the stamp audit behind `causalctl check`: it proves,
// from the log alone, the records whose stamps do not claim every consumed
// ancestor directly (holes, which a node ignoring the channels it does not
// consume would deliver before their causes), and the other stamps that are
// wrong on their face: claims of offsets that hold no record or lie beyond
// the log end, self-cycles, wait cycles, unknown topics and undecodable
// headers.
//
// It is pure like the gate: an Auditor is fed items and returns a Report;
// it does no I/O and reads no clock. docs/check.md explains the algorithm.
package audit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// FindingKind names what is wrong with a topic's stamps.
type FindingKind uint8

// The kinds of finding, in the order a report lists them.
const (
	// FindingHole: a record m on a consumed channel whose causes, as the
	// clocks state them transitively, include a record a on a consumed
	// channel that the node's gate will not make m wait for. a hides behind
	// an unconsumed coordinate: a producer on the way stamped without
	// folding the clocks it received.
	FindingHole FindingKind = iota + 1
	// FindingNotARecord: a claim naming an offset the input proves carried
	// no record (a transaction marker or an aborted record).
	FindingNotARecord
	// FindingBeyondLogEnd: a claim at or past the claimed channel's high
	// watermark: never written.
	FindingBeyondLogEnd
	// FindingSelfCycle: an entry for the record's own channel at or above
	// its own offset.
	FindingSelfCycle
	// FindingUnknownTopic: an entry naming a topic UUID the cluster (or the
	// capture) does not know.
	FindingUnknownTopic
	// FindingWaitCycle: heads whose claims wait on one another in a cycle.
	FindingWaitCycle
	// FindingUndecodable: a parsley.causes header that cannot be decoded.
	FindingUndecodable
)

// FindingKinds lists every kind in report order.
var FindingKinds = []FindingKind{
	FindingHole, FindingNotARecord, FindingBeyondLogEnd, FindingSelfCycle,
	FindingUnknownTopic, FindingWaitCycle, FindingUndecodable,
}

var findingNames = [...]string{
	FindingHole: "hole", FindingNotARecord: "not-a-record", FindingBeyondLogEnd: "beyond-log-end",
	FindingSelfCycle: "self-cycle", FindingUnknownTopic: "unknown-topic",
	FindingWaitCycle: "wait-cycle", FindingUndecodable: "undecodable",
}

// String returns the kind's stable name, e.g. "not-a-record".
func (k FindingKind) String() string {
	if int(k) < len(findingNames) && findingNames[k] != "" {
		return findingNames[k]
	}
	return fmt.Sprintf("FindingKind(%d)", uint8(k))
}

// RecordRef names a record of the input.
type RecordRef struct {
	Channel clock.Channel
	Offset  int64
	Line    int64 // capture line; 0 when the input was no file
}

// HopKind says how one record of a hole's path reaches the next.
type HopKind uint8

const (
	// HopClaims: the previous record's clock names this record's channel
	// at or above this record's offset.
	HopClaims HopKind = iota + 1
	// HopFollows: this record is earlier on the previous record's own
	// channel (same-channel order is causal order).
	HopFollows
)

// String returns "claims" or "follows".
func (k HopKind) String() string {
	switch k {
	case HopClaims:
		return "claims"
	case HopFollows:
		return "follows"
	}
	return "start"
}

// Hop is one record on the path from a hole's record to its missed
// ancestor.
type Hop struct {
	Record RecordRef
	// Via is how the previous hop reaches this one; zero for the first.
	Via HopKind
	// Claim is, for HopClaims, the position the previous record claims on
	// this record's channel.
	Claim int64
}

// HoleEvidence is what proves a hole.
type HoleEvidence struct {
	// Ancestor is the missed ancestor a: the latest record on its channel
	// that m's causes include.
	Ancestor RecordRef
	// FirstMissed is the earliest record on a's channel among m's causes
	// that the gate does not make m wait for; Missed counts them.
	FirstMissed RecordRef
	Missed      int
	// Claims is m's own claim on a's channel, −1 when its clock names none.
	Claims int64
	// WaitsFor is the latest offset on a's channel the gate makes m wait
	// for, through its own clock and those of the consumed records it
	// waits for; −1 when none.
	WaitsFor int64
	// Path runs from m (first) to a (last). Each record claims or follows
	// the next; the last but one is the first that claims a directly, so
	// the one before it is the stamp that dropped the claim.
	Path []Hop
}

// CycleStep is one head of a wait cycle and its claim on the next head's
// channel, which that head's offset does not yet settle.
type CycleStep struct {
	Record RecordRef
	Waits  clock.Entry
}

// Finding is one problem of the audited stamps.
type Finding struct {
	Kind FindingKind
	// Record is the record whose clock is at fault: m for a hole, the
	// claiming record otherwise, the first head of a wait cycle.
	Record RecordRef
	// Producer is the channel whose producer wrote the faulty stamp: for
	// a hole, the channel of the record that claims (or follows) a record
	// claiming the ancestor without claiming it itself; otherwise
	// Record's channel. Reports group findings by it.
	Producer clock.Channel
	// Scope names the scope of a hole ("" when there is one scope).
	Scope string
	// Claim is the faulty entry (not-a-record, beyond-log-end, self-cycle,
	// unknown-topic).
	Claim clock.Entry
	// HighWatermark is the claimed channel's log end (beyond-log-end).
	HighWatermark int64
	// Code and Reason say why a header is undecodable.
	Code   clock.Code
	Reason string
	Hole   *HoleEvidence // FindingHole
	Cycle  []CycleStep   // FindingWaitCycle
}

// Root is the claim a finding follows from, and the record that made it.
// Claimed is false when a finding rests on its record alone (an
// undecodable header, a wait cycle): Claim is then zero.
type Root struct {
	Record  RecordRef
	Claim   clock.Entry
	Claimed bool
}

// Root returns the claim f follows from, by which reports group findings.
// A faulty entry (not-a-record, beyond-log-end, self-cycle, unknown-topic)
// is its own root. A hole follows from the first claim of its path: the
// claim by which m, or the record of its channel that m follows, reaches
// toward the missed ancestor — so one forged claim is the root of the
// hole it makes and of every hole of the records that follow its record.
// Undecodable headers and wait cycles are rooted at their record.
func (f Finding) Root() Root {
	switch f.Kind {
	case FindingNotARecord, FindingBeyondLogEnd, FindingSelfCycle, FindingUnknownTopic:
		return Root{Record: f.Record, Claim: f.Claim, Claimed: true}
	case FindingHole:
		if f.Hole == nil {
			break
		}
		for i, hop := range f.Hole.Path {
			if i > 0 && hop.Via == HopClaims {
				return Root{
					Record:  f.Hole.Path[i-1].Record,
					Claim:   clock.Entry{Channel: hop.Record.Channel, Position: hop.Claim},
					Claimed: true,
				}
			}
		}
	}
	return Root{Record: f.Record}
}

// Scope is the scope of one node: the channels it consumes.
type Scope struct {
	Name     string
	Channels []clock.Channel
}

// Report is the outcome of an audit.
type Report struct {
	// Channels, NotInInput and each scope's channels are in display
	// order: by topic name (UUID when unnamed), then partition.
	Records  int64
	Channels []clock.Channel // of the input
	Scopes   []Scope
	// NotInInput lists the channels the clocks claim that the input does
	// not hold: holes hiding behind them cannot be seen.
	NotInInput []clock.Channel
	// Counts holds the number of findings by kind, ByProducer by kind and
	// producer channel; Len and Each give the findings themselves.
	Counts     map[FindingKind]int
	ByProducer map[FindingKind]map[clock.Channel]int
	// Truncated says the audit stopped at MaxFindings: counts are then
	// lower bounds.
	Truncated bool
	// Unaudited counts the records not audited for holes: those in or
	// behind a wait cycle, whose causes have no order.
	Unaudited int64

	a     *Auditor
	order []findingRef
}

// findingRef is a finding in report order: a stored one (hole < 0) or
// the hole of that index, whose evidence is built when it is asked for —
// a broken pipeline has a hole in nearly every record, and their paths
// would not fit in memory all at once.
type findingRef struct {
	stored, hole int
}

// Len returns the number of findings.
func (r *Report) Len() int { return len(r.order) }

// Each calls yield with every finding, by kind, then producer channel,
// then record, and stops at yield's first error, which it returns.
func (r *Report) Each(yield func(Finding) error) error {
	for _, ref := range r.order {
		var f Finding
		if ref.hole >= 0 {
			f = r.a.holeFinding(r.a.holes[ref.hole])
		} else {
			f = r.a.findings[ref.stored]
		}
		if err := yield(f); err != nil {
			return err
		}
	}
	return nil
}

// Config configures an Auditor.
type Config struct {
	// Names binds topic names to UUIDs; it learns the input's names. A
	// topic is known when the input holds it or Names binds it.
	Names *clock.Names
	// MaxHeaderSize is the metadata budget of a clock header (default
	// clock.DefaultMaxSize).
	MaxHeaderSize int
	// MaxFindings stops the audit once that many findings are found; 0 is
	// no limit.
	MaxFindings int
}

// ErrChanged is returned when the second reading of the input differs from
// the first.
var ErrChanged = errors.New("the input changed between its two readings")

// Auditor audits the stamps of an input. It reads the input twice: Index
// every item once (channels, offsets, what position lines prove), then Load
// every item again (the clocks), then Run the audit for some scopes.
//
// The audit is exact. Every record is kept, in rank form — a clock entry
// (ch, n) becomes the number of ch's records at or below n — so that the
// transitive causes of a record can be joined from those of the records it
// claims, in a causal order found by a depth-first walk of the claims.
// Closures along a channel are monotone, so a record's closure is its own
// clock (and its predecessor's count) plus an excess that honest stamps
// almost never have; only the excess is stored.
type Auditor struct {
	cfg    Config
	names  *clock.Names
	idx    map[clock.Channel]uint32
	chans  []*achan
	topics map[clock.TopicID]bool // topics the input holds

	loading    bool
	single     bool           // items come through Add: one reading
	unsettled  bool           // Add met a claim only a second reading can settle (Settled)
	pending    []pendingClaim // Add: claims of records not read yet, counted in Run
	maxPending int            // bounds pending (maxPending; tests lower it)
	records    int64
	buf        []clock.Entry
	findings   []Finding
	external   map[clock.Channel]bool // claimed channels the input lacks
	recent     []lineChannel
	hwm        map[clock.Channel]int64
	brokerHWM  map[clock.Channel]int64 // SetHighWatermark's, for a second reading after Add
	compacted  map[clock.Channel]bool  // topics whose gaps prove nothing
	nfound     int
	full       bool // MaxFindings reached

	// The walk (walk.go).
	scopes []*scopeState
	holes  []holeRef
	stack  []frame
	cc, d  *joiner // the closure of the record visited, and its own clock
	wc     *joiner // its wait closure in one scope
	exbuf  []claim
	rel    []bool // channels whose closures are computed; nil: none (every scope closed)

	// dense computes closures on every channel and takes only scopes of
	// every channel for closed: the audit before issue 36, which tests
	// hold the audit to. brokenClosed is a deliberate bug for tests (a
	// closed scope's check misses each channel's last record), which that
	// comparison must catch.
	dense, brokenClosed bool
}

// achan is everything the audit keeps of one channel of the input.
type achan struct {
	ch    clock.Channel
	offs  []int64  // record offsets by rank
	lines []uint32 // capture lines by rank (0 unknown)
	gaps  []span   // offsets proven to carry no record, sorted
	next  int64    // Index: the next offset to read; −1 before the first item
	last  int64    // Index: the last record's offset; −1 before the first
	hwm   int64    // high watermark, −1 unknown

	ent    []uint32 // Load: rank k's claims are claims[ent[k]:ent[k+1]]
	claims chunked[claim]
	raw    []rawPos // claims whose position is not the offset of the last record they cover

	// The walk.
	done    uint32 // records whose closures are computed
	stuck   bool   // in or behind a wait cycle
	onStack bool
	excess  sparse // closure entries above the record's own clock
}

type span struct{ lo, hi int64 } // [lo, hi)

type rawPos struct {
	at  uint32 // index in claims
	pos int64
}

// New returns an auditor with nothing read.
func New(cfg Config) *Auditor {
	if cfg.Names == nil {
		cfg.Names = &clock.Names{}
	}
	if cfg.MaxHeaderSize <= 0 {
		cfg.MaxHeaderSize = clock.DefaultMaxSize
	}
	return &Auditor{
		cfg:        cfg,
		names:      cfg.Names,
		maxPending: maxPending,
		buf:        make([]clock.Entry, 0, 16), // not nil: FromHeadersInto decodes into it, no copy per record
		idx:        map[clock.Channel]uint32{},
		topics:     map[clock.TopicID]bool{},
		external:   map[clock.Channel]bool{},
		hwm:        map[clock.Channel]int64{},
		brokerHWM:  map[clock.Channel]int64{},
		compacted:  map[clock.Channel]bool{},
	}
}

// SetHighWatermark records the log end of ch as a broker reported it, for
// beyond-log-end; ch need not be in the input. A log-facts line of the
// input does the same. Call it before Load.
func (a *Auditor) SetHighWatermark(ch clock.Channel, hwm int64) {
	a.hwm[ch] = hwm
	a.brokerHWM[ch] = hwm
}

// inputError places err at item it and, when offset ≥ 0, at that record.
func inputError(it *record.Item, offset int64, err error) error {
	e := engine.NewInputError(it, err)
	e.Offset = offset
	return e
}

func (a *Auditor) channelOf(it *record.Item) (clock.Channel, error) {
	if !it.TopicID.IsZero() && a.loading {
		return clock.Channel{Topic: it.TopicID, Partition: it.Partition}, nil // names learnt in Index
	}
	return engine.ResolveChannel(a.names, it)
}

// maxLineChannels bounds the lines' channels looked up in a short list
// before the names and the index maps.
const maxLineChannels = 16

// lineChannel is a channel as lines name it, with its index.
type lineChannel struct {
	topic string
	ch    clock.Channel
	idx   uint32
}

// indexOf returns the channel item it names and its index among the
// input's channels (ok false when the input has no such channel yet).
// The channels of the last few lines are remembered, so that most lines
// need neither the names nor the index map.
func (a *Auditor) indexOf(it *record.Item) (clock.Channel, uint32, bool, error) {
	if !it.TopicID.IsZero() {
		for _, lc := range a.recent {
			if lc.ch.Topic == it.TopicID && lc.ch.Partition == it.Partition && lc.topic == it.Topic {
				return lc.ch, lc.idx, true, nil
			}
		}
	}
	ch, err := a.channelOf(it)
	if err != nil {
		return ch, 0, false, err
	}
	i, ok := a.idx[ch]
	if ok && !it.TopicID.IsZero() && len(a.recent) < maxLineChannels {
		a.recent = append(a.recent, lineChannel{it.Topic, ch, i})
	}
	return ch, i, ok, nil
}

// Index reads one item of the first reading: the channel, a record's
// offset and line, and what a position line proves. A record whose offset
// is not above the channel's last record or position is an error.
func (a *Auditor) Index(it *record.Item) error {
	if a.loading {
		return errors.New("audit: Index after Load")
	}
	if it.Kind != record.KindRecord && it.Kind != record.KindPosition {
		return nil // lines of other kinds say nothing of the audit
	}
	ch, i, ok, err := a.indexOf(it)
	if err != nil {
		return inputError(it, -1, err)
	}
	if !ok {
		i = uint32(len(a.chans))
		a.idx[ch] = i
		c := &achan{ch: ch, next: -1, last: -1, hwm: -1}
		if a.single {
			c.startLoading(a.hwm)
			if a.external[ch] {
				a.unsettled = true // claimed before the input showed it
			}
		}
		a.chans = append(a.chans, c)
		a.topics[ch.Topic] = true
	}
	c := a.chans[i]
	if it.Kind == record.KindPosition {
		// The position moved to it.Offset with nothing below it still to
		// come: after a record or another position, the offsets between
		// carried no record. The first position (a range start) proves
		// nothing about the offsets below it.
		if c.next >= 0 && it.Offset > c.next {
			c.gaps = append(c.gaps, span{c.next, it.Offset})
		}
		c.next = max(c.next, it.Offset)
		return nil
	}
	switch {
	case it.Offset == c.last && len(c.offs) > 0:
		// A record redelivered at the offset just read (the capture
		// format allows it, docs/capture-format.md §4; replay drops it as
		// a duplicate): audited once.
		return nil
	case it.Offset < c.last:
		return inputError(it, it.Offset, fmt.Errorf("offsets of a channel must increase: %d follows %d", it.Offset, c.last))
	case it.Offset < c.next:
		return inputError(it, it.Offset, fmt.Errorf("offset %d is below position %d, read before it", it.Offset, c.next))
	case len(c.offs) == math.MaxUint32-1:
		return inputError(it, it.Offset, errors.New("too many records on one channel"))
	}
	c.last, c.next = it.Offset, it.Offset+1
	c.offs = append(c.offs, it.Offset)
	line := uint32(0)
	if it.Line > 0 && it.Line <= math.MaxUint32 {
		line = uint32(it.Line)
	}
	c.lines = append(c.lines, line)
	a.records++
	return nil
}

// Channels returns the channels of the input read so far, sorted.
func (a *Auditor) Channels() []clock.Channel {
	out := make([]clock.Channel, len(a.chans))
	for i, c := range a.chans {
		out[i] = c.ch
	}
	slices.SortFunc(out, clock.Channel.Compare)
	return out
}

func (a *Auditor) startLoading() {
	a.loading = true
	for _, c := range a.chans {
		c.startLoading(a.hwm)
	}
}

func (c *achan) startLoading(hwm map[clock.Channel]int64) {
	c.ent = make([]uint32, 1, len(c.offs)+1)
	if h, ok := hwm[c.ch]; ok {
		c.hwm = h
	}
}

// Add reads one item of a single reading: Index and Load at once. Claims
// are put in rank form as they are read, which is exact for a claim on a
// record already read, the causal order an honest capture is written in.
// When a claim needs what the rest of the input holds (a record read
// later, a channel or topic the input names later), Settled reports false
// once every item is added: call Reread and Load every item again before
// Run. Do not mix Add with Index or Load before that.
func (a *Auditor) Add(it *record.Item) error {
	if a.loading {
		return errors.New("audit: Add after Load")
	}
	a.single = true
	if err := a.Index(it); err != nil {
		return err
	}
	if a.unsettled {
		return nil // the clocks will be read again: loading them now is wasted
	}
	return a.load(it)
}

// Settled reports whether the items given to Add were audited in full; if
// not, Reread starts the second reading.
func (a *Auditor) Settled() bool {
	if a.unsettled {
		return false
	}
	for ch := range a.external {
		if _, in := a.idx[ch]; in { // claimed before the input showed it
			return false
		}
	}
	return true
}

// Reread forgets what Add loaded, keeping the index, for a second reading
// through Load.
func (a *Auditor) Reread() {
	a.single, a.unsettled, a.pending = false, false, nil
	for _, c := range a.chans {
		c.ent, c.claims, c.raw, c.hwm = nil, chunked[claim]{}, nil, -1
	}
	a.findings, a.nfound, a.full = nil, 0, false
	a.external = map[clock.Channel]bool{}
	a.hwm = maps.Clone(a.brokerHWM)
	a.compacted = map[clock.Channel]bool{}
}

// Load reads one item of the second reading, which must be the first one
// again: a record's clock is decoded and kept, and its claims checked. An
// undecodable header is a finding (its clock counts as empty), not an
// error.
func (a *Auditor) Load(it *record.Item) error {
	if a.single {
		return errors.New("audit: Load after Add without Reread")
	}
	if !a.loading {
		a.startLoading()
	}
	return a.load(it)
}

func (a *Auditor) load(it *record.Item) error {
	if it.Kind == record.KindLogFacts && it.Facts != nil {
		return a.loadFacts(it)
	}
	if it.Kind != record.KindRecord || a.full {
		return nil
	}
	ch, i, ok, err := a.indexOf(it)
	if err != nil {
		return inputError(it, -1, err)
	}
	var c *achan
	if ok {
		c = a.chans[i]
	}
	if c != nil && len(c.ent) >= 2 && len(c.ent)-2 < len(c.offs) && c.offs[len(c.ent)-2] == it.Offset {
		return nil // a record redelivered: Index kept it once
	}
	if c == nil || len(c.ent) > len(c.offs) || c.offs[len(c.ent)-1] != it.Offset {
		return inputError(it, it.Offset, ErrChanged)
	}
	rank := uint32(len(c.ent) - 1)
	ref := RecordRef{Channel: ch, Offset: it.Offset, Line: it.Line}
	clk, buf, _, err := clock.FromHeadersInto(a.buf, it.Headers, clock.MaxSize(a.cfg.MaxHeaderSize))
	a.buf = buf
	if err != nil {
		code, _ := clock.CodeOf(err)
		a.report(Finding{Kind: FindingUndecodable, Record: ref, Producer: ch, Code: code, Reason: err.Error()})
		clk = clock.Clock{}
	}
	for _, e := range clk.Entries() {
		a.loadEntry(c, i, rank, ref, e)
	}
	c.ent = append(c.ent, uint32(c.claims.len()))
	return nil
}

// loadFacts takes a log-facts line: the channel's high watermark, and
// whether its topic is compacted.
func (a *Auditor) loadFacts(it *record.Item) error {
	ch, err := a.channelOf(it)
	if err != nil {
		return inputError(it, -1, err)
	}
	a.hwm[ch] = it.Facts.HighWatermark
	if i, ok := a.idx[ch]; ok {
		a.chans[i].hwm = it.Facts.HighWatermark
	}
	if r := it.Facts.Retention; r != nil && strings.Contains(r.CleanupPolicy, "compact") {
		// A gap in a compacted log may be a record compaction removed: it
		// proves no marker.
		a.compacted[ch] = true
	}
	return nil
}

func (a *Auditor) loadEntry(c *achan, ci, rank uint32, ref RecordRef, e clock.Entry) {
	if e.Channel == c.ch {
		// Same-channel order is structural: the gate drops the entry. At
		// or above the record's own offset it claims the record's future.
		if e.Position >= ref.Offset {
			a.report(Finding{Kind: FindingSelfCycle, Record: ref, Producer: c.ch, Claim: e})
		}
		return
	}
	if ti, in := a.idx[e.Channel]; in {
		// A claim on a record's offset needs no check: the record is
		// there. Others are kept as they are, and checked once every
		// log-facts line is read (checkRawClaims).
		t := a.chans[ti]
		if a.single && e.Position > t.last {
			// Records it covers may be still to come: counted once all
			// are read (countPending), or, past a bound, read again.
			if len(a.pending) == a.maxPending {
				a.unsettled = true
				return
			}
			a.pending = append(a.pending, pendingClaim{ci: ci, at: uint32(c.claims.len()), pos: e.Position})
			c.claims.append(packClaim(ti, 0))
			return
		}
		count, _ := slices.BinarySearch(t.offs, e.Position+1) // records at or below the position
		if count == 0 || t.offs[count-1] != e.Position {
			c.raw = append(c.raw, rawPos{uint32(c.claims.len()), e.Position})
		}
		c.claims.append(packClaim(ti, uint32(count)))
		return
	}
	a.external[e.Channel] = true
	if _, named := a.names.Name(e.Channel.Topic); !named && !a.topics[e.Channel.Topic] {
		if a.single {
			a.unsettled = true // the input may name the topic later
			return
		}
		a.report(Finding{Kind: FindingUnknownTopic, Record: ref, Producer: c.ch, Claim: e})
	}
	if hwm, ok := a.hwm[e.Channel]; ok && e.Position >= hwm {
		a.report(Finding{Kind: FindingBeyondLogEnd, Record: ref, Producer: c.ch, Claim: e, HighWatermark: hwm})
	}
}

// maxPending bounds the claims Add keeps to count at the end: 16 bytes
// each; past it, the input is read again instead.
const maxPending = 1 << 20

// pendingClaim is a claim of a record not read yet: claim at of channel ci
// on position pos.
type pendingClaim struct {
	ci, at uint32
	pos    int64
}

// countPending puts the claims of records read after them in rank form,
// now that every record is read, and keeps those that name no record's
// offset for checkRawClaims, in claim order as Load would have.
func (a *Auditor) countPending() {
	touched := map[uint32]bool{}
	for _, p := range a.pending {
		c := a.chans[p.ci]
		ti := c.claims.at(int(p.at)).channel()
		t := a.chans[ti]
		count, _ := slices.BinarySearch(t.offs, p.pos+1)
		if count == 0 || t.offs[count-1] != p.pos {
			c.raw = append(c.raw, rawPos{p.at, p.pos})
			touched[p.ci] = true
		}
		c.claims.set(int(p.at), packClaim(ti, uint32(count)))
	}
	for ci := range touched {
		slices.SortFunc(a.chans[ci].raw, func(x, y rawPos) int { return cmp.Compare(x.at, y.at) })
	}
	a.pending = nil
}

// checkRawClaims reports the claims on channels of the input that name no
// record's offset and lie on a proven gap (not-a-record) or at or past the
// high watermark (beyond-log-end).
func (a *Auditor) checkRawClaims() {
	for ci, c := range a.chans {
		for _, r := range c.raw {
			t := a.chans[c.claims.at(int(r.at)).channel()]
			kind := FindingKind(0)
			switch {
			case t.hwm >= 0 && r.pos >= t.hwm:
				kind = FindingBeyondLogEnd
			case !a.compacted[t.ch] && t.inGap(r.pos):
				kind = FindingNotARecord
			default:
				continue
			}
			// The claim's record: the last whose claims start at or
			// before it.
			rank, _ := slices.BinarySearch(c.ent, r.at+1)
			f := Finding{Kind: kind, Record: a.ref(uint32(ci), uint32(rank-1)), Producer: c.ch,
				Claim: clock.Entry{Channel: t.ch, Position: r.pos}}
			if kind == FindingBeyondLogEnd {
				f.HighWatermark = t.hwm
			}
			a.report(f)
		}
	}
}

// inGap reports whether a position line proved that pos carried no record.
func (c *achan) inGap(pos int64) bool {
	k, _ := slices.BinarySearchFunc(c.gaps, pos, func(s span, p int64) int {
		if s.hi <= p {
			return -1
		}
		if s.lo > p {
			return 1
		}
		return 0
	})
	return k < len(c.gaps) && c.gaps[k].lo <= pos && pos < c.gaps[k].hi
}

func (a *Auditor) report(f Finding) {
	if a.full {
		return
	}
	a.findings = append(a.findings, f)
	a.found()
}

// found counts one finding and stops the audit at MaxFindings.
func (a *Auditor) found() {
	a.nfound++
	if a.cfg.MaxFindings > 0 && a.nfound >= a.cfg.MaxFindings {
		a.full = true
	}
}

// rawClaim returns the position of claim i of c.
func (a *Auditor) rawClaim(c *achan, i int) int64 {
	k, ok := slices.BinarySearchFunc(c.raw, uint32(i), func(r rawPos, at uint32) int { return cmp.Compare(r.at, at) })
	if ok {
		return c.raw[k].pos
	}
	cl := c.claims.at(i)
	return a.chans[cl.channel()].offs[cl.count()-1]
}

func (a *Auditor) ref(ci, rank uint32) RecordRef {
	c := a.chans[ci]
	return RecordRef{Channel: c.ch, Offset: c.offs[rank], Line: int64(c.lines[rank])}
}
