package replay

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"unsafe"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// Mode is a receive interleaving: the order in which the records of
// different channels reach the gate. Records of one channel always keep
// their order.
type Mode uint8

// The interleavings of --interleave.
const (
	File       Mode = iota // the source's own order
	Timestamp              // by record timestamp, ties by channel order of first appearance
	ByChannel              // every item of one channel, then the next, in order of first appearance
	RoundRobin             // one item of each channel in turn, in order of first appearance
	Random                 // a seeded random choice of channel at each step
)

// DefaultSeed is the seed of "random" without one, so that the same flags
// always give the same output.
const DefaultSeed = 1

// Interleave is a parsed --interleave value.
type Interleave struct {
	Mode Mode
	Seed uint64 // for Random
}

func (il Interleave) String() string {
	switch il.Mode {
	case File:
		return "file"
	case Timestamp:
		return "timestamp"
	case ByChannel:
		return "channel"
	case RoundRobin:
		return "round-robin"
	case Random:
		return "random:" + strconv.FormatUint(il.Seed, 10)
	}
	return fmt.Sprintf("Mode(%d)", il.Mode)
}

// ParseInterleave reads file, timestamp, channel, round-robin or
// random[:SEED].
func ParseInterleave(s string) (Interleave, error) {
	name, seed, hasSeed := strings.Cut(s, ":")
	il := Interleave{Seed: DefaultSeed}
	switch name {
	case "file":
		il.Mode = File
	case "timestamp":
		il.Mode = Timestamp
	case "channel":
		il.Mode = ByChannel
	case "round-robin":
		il.Mode = RoundRobin
	case "random":
		il.Mode = Random
		if hasSeed {
			n, err := strconv.ParseUint(seed, 10, 64)
			if err != nil {
				return il, fmt.Errorf("interleave %q: seed must be a non-negative integer", s)
			}
			il.Seed = n
		}
		return il, nil
	default:
		return il, fmt.Errorf("interleave %q: want file, timestamp, channel, round-robin or random[:SEED]", s)
	}
	if hasSeed {
		return il, fmt.Errorf("interleave %q: only random takes a seed", s)
	}
	return il, nil
}

// Reorder reads src to its end and returns a Source yielding its items in
// the interleaving il; names must already resolve every line's channel
// (Discover). It keeps every item in memory (without record keys
// and values, which replay never needs), ItemCost bytes each; when
// maxBytes > 0 and they would pass it, it stops with a *MemoryLimitError
// instead. For File it returns src itself, which streams. Items keep
// their line numbers.
func Reorder(src engine.Source, il Interleave, names *clock.Names, maxBytes int64) (engine.Source, error) {
	if il.Mode == File {
		return src, nil
	}
	r := &reordered{mode: il.Mode, rng: rand.New(rand.NewPCG(il.Seed, il.Seed^0x9e3779b97f4a7c15))}
	// Queues are per channel as resolved, not per spelling: lines may name
	// one channel by topic, by topic UUID, or both.
	idx := map[clock.Channel]int{}
	var held, items int64
	for {
		it, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		k, err := engine.ResolveChannel(names, it)
		if err != nil {
			return nil, engine.NewInputError(it, err)
		}
		if held += ItemCost(it); maxBytes > 0 && held > maxBytes {
			return nil, &MemoryLimitError{Interleave: il, Limit: maxBytes, Items: items, Line: it.Line, Channel: names.Channel(k), Offset: it.Offset}
		}
		items++
		i, ok := idx[k]
		if !ok {
			i = len(r.queues)
			idx[k] = i
			r.queues = append(r.queues, &queue{})
		}
		r.queues[i].items = append(r.queues[i].items, detach(it))
	}
	r.start()
	return r, nil
}

// Memory a reordering interleaving holds per item (see ItemCost).
const (
	// ItemBaseCost is an item's share of its channel's queue: the item
	// itself, twice over, since a growing slice may hold up to twice what
	// it uses.
	ItemBaseCost = 2 * int64(unsafe.Sizeof(record.Item{}))
	// HeaderCost is a header's key and value slots plus the allocation
	// of its copied value, before the value's bytes.
	HeaderCost = int64(unsafe.Sizeof(clock.Header{})) + 16
)

// ItemCost is the memory Reorder holds for it until it is replayed:
// ItemBaseCost, and HeaderCost plus the value's length for each header.
// Payloads (key, value) are never held.
func ItemCost(it *record.Item) int64 {
	n := ItemBaseCost
	for _, h := range it.Headers {
		n += HeaderCost + int64(len(h.Value))
	}
	return n
}

// MemoryLimitError reports that a reordering interleaving would hold more
// than its memory limit: the item at Line (Channel, Offset) would pass it,
// after Items items held.
type MemoryLimitError struct {
	Interleave Interleave
	Limit      int64
	Items      int64
	Line       int64
	Channel    string
	Offset     int64
}

func (e *MemoryLimitError) Error() string {
	at := fmt.Sprintf("%s offset %d", e.Channel, e.Offset)
	if e.Line > 0 {
		at = fmt.Sprintf("line %d (%s)", e.Line, at)
	}
	return fmt.Sprintf("the %s interleaving holds every record's clock in memory (≈%d bytes a record plus its headers): %s would pass the limit of %s after %d items held",
		e.Interleave, ItemBaseCost, at, FormatBytes(e.Limit), e.Items)
}

// FormatBytes writes n in the largest binary unit it reaches, e.g.
// "512 MiB", "1.5 GiB", "300 B".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + units[u]
}

// detach copies what replay needs of an item out of the reader's buffers.
func detach(it *record.Item) record.Item {
	c := *it
	c.Key, c.Value = nil, nil
	c.Headers = make([]clock.Header, len(it.Headers))
	for i, h := range it.Headers {
		c.Headers[i] = clock.Header{Key: h.Key}
		if h.Value != nil {
			c.Headers[i].Value = append([]byte{}, h.Value...)
		}
	}
	return c
}

type queue struct {
	items []record.Item
	next  int
	last  int64 // last timestamp taken
}

func (q *queue) empty() bool { return q.next == len(q.items) }

// tsKey is the timestamp an item is merged by: its own, or for position
// lines and records without one, the last timestamp seen on its channel so
// that it goes as early as its channel allows.
func (q *queue) tsKey() int64 {
	it := &q.items[q.next]
	if it.Kind == record.KindRecord && it.HasTimestamp && it.Timestamp > q.last {
		return it.Timestamp
	}
	return q.last
}

type reordered struct {
	mode   Mode
	queues []*queue
	rng    *rand.Rand

	live []*queue // RoundRobin and Random: queues with items left
	rr   int
	h    byTime // Timestamp: queues with items left, by index
	cur  int    // ByChannel

	out record.Item // the item Next returned last
}

func (r *reordered) start() {
	for _, q := range r.queues {
		q.last = -1 << 62
	}
	switch r.mode {
	case Timestamp:
		for i, q := range r.queues {
			r.h.push(timeKey{key: q.tsKey(), ch: i})
		}
	case RoundRobin, Random:
		r.live = append(r.live, r.queues...)
	}
}

func (r *reordered) Next() (*record.Item, error) {
	var q *queue
	switch r.mode {
	case Timestamp:
		if len(r.h) == 0 {
			return nil, io.EOF
		}
		q = r.queues[r.h[0].ch]
	case ByChannel:
		for r.cur < len(r.queues) && r.queues[r.cur].empty() {
			r.cur++
		}
		if r.cur == len(r.queues) {
			return nil, io.EOF
		}
		q = r.queues[r.cur]
	case RoundRobin:
		if len(r.live) == 0 {
			return nil, io.EOF
		}
		r.rr %= len(r.live)
		q = r.live[r.rr]
		r.rr++
	case Random:
		if len(r.live) == 0 {
			return nil, io.EOF
		}
		r.rr = r.rng.IntN(len(r.live))
		q = r.live[r.rr]
		r.rr++
	}
	it := &q.items[q.next]
	if it.Kind == record.KindRecord && it.HasTimestamp && it.Timestamp > q.last {
		q.last = it.Timestamp
	}
	r.out = *it
	*it = record.Item{} // the garbage collector may have it once used
	q.next++
	switch r.mode {
	case Timestamp:
		if q.empty() {
			r.h.pop()
		} else {
			r.h.fixTop(q.tsKey())
		}
	case RoundRobin, Random:
		if q.empty() {
			// Keep the order of the rest: round-robin stays fair.
			r.rr--
			r.live = append(r.live[:r.rr], r.live[r.rr+1:]...)
		}
	}
	return &r.out, nil
}

// ChannelSource is a source read channel by channel, as a broker range is:
// NextOf(i) yields the items of channel i in order and io.EOF after its
// last. An item stays valid until the next NextOf call for its channel.
type ChannelSource interface {
	NextOf(i int) (*record.Item, error)
}

// MergeByTimestamp is the timestamp interleaving of Reorder for the n
// channels of src (ties go by channel index, as Reorder's go by first
// appearance). It holds one item per channel — the next of each — and asks
// a channel for another only once its item is taken, so it buffers nothing
// of what src fetched: what stays in memory is src's own, bounded,
// buffers.
func MergeByTimestamp(src ChannelSource, n int) engine.Source {
	m := &merger{src: src, heads: make([]mhead, n), refill: -1}
	for i := range m.heads {
		m.heads[i] = mhead{last: -1 << 62}
	}
	return m
}

type merger struct {
	src     ChannelSource
	heads   []mhead
	h       byTime // channels with an item, by index into heads
	started bool
	refill  int // the channel whose item Next returned last, to be replaced
	out     record.Item
}

// mhead is a channel's next item.
type mhead struct {
	it   *record.Item
	last int64 // last timestamp taken
}

// fetch asks channel i for its next item and puts it in the heap; a channel
// at its end leaves it.
func (m *merger) fetch(i int) error {
	it, err := m.src.NextOf(i)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	q := &m.heads[i]
	q.it = it
	key := q.last
	if it.Kind == record.KindRecord && it.HasTimestamp && it.Timestamp > q.last {
		key = it.Timestamp
	}
	m.h.push(timeKey{key: key, ch: i})
	return nil
}

func (m *merger) Next() (*record.Item, error) {
	if !m.started {
		m.started = true
		for i := range m.heads {
			if err := m.fetch(i); err != nil {
				return nil, err
			}
		}
	}
	if m.refill >= 0 {
		i := m.refill
		m.refill = -1
		if err := m.fetch(i); err != nil {
			return nil, err
		}
	}
	if len(m.h) == 0 {
		return nil, io.EOF
	}
	top := m.h.pop()
	q := &m.heads[top.ch]
	q.last = top.key
	m.out, q.it = *q.it, nil
	m.refill = top.ch // its item stays valid until then
	return &m.out, nil
}

// byTime is the heap of both timestamp merges: channels by the timestamp
// key of their next item, ties by channel index (Reorder's order of first
// appearance, MergeByTimestamp's channel order). It holds values, not the
// queues, so sifting touches one small array.
type byTime []timeKey

type timeKey struct {
	key int64 // timestamp key of the channel's next item
	ch  int   // the channel's index
}

func (a timeKey) before(b timeKey) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.ch < b.ch
}

func (h *byTime) push(k timeKey) {
	*h = append(*h, k)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].before(a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

// pop removes and returns the first channel.
func (h *byTime) pop() timeKey {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	*h = a[:n]
	h.down()
	return top
}

// fixTop gives the first channel a new key and restores the order.
func (h byTime) fixTop(key int64) {
	h[0].key = key
	h.down()
}

// down sifts the first element to its place.
func (h byTime) down() {
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h[r].before(h[c]) {
			c = r
		}
		if !h[c].before(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
