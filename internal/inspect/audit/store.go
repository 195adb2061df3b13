package audit

import "slices"

// The audit keeps every record of its input, so its storage is a few flat,
// pointer-free arrays per channel rather than a value per record: the
// garbage collector never scans them, and growing them in fixed chunks
// leaves no garbage behind.

// claim packs a clock entry in rank form: the index of the claimed channel
// among the input's channels (high 32 bits) and the number of that channel's
// records the entry covers (low 32 bits) — its "count". A count of v claims
// the channel's first v records of the input.
type claim uint64

func packClaim(ch, count uint32) claim { return claim(uint64(ch)<<32 | uint64(count)) }
func (c claim) channel() uint32        { return uint32(c >> 32) }
func (c claim) count() uint32          { return uint32(c) }

// chunkBits sets the size of a chunk: 64 Ki values.
const chunkBits = 16

// chunked is an append-only array stored in fixed-size chunks. The first
// chunk grows by doubling up to the chunk size, so that an array of a few
// values costs a few values: there is one per channel of the input (and
// per scope), and a fixed reserve per array made 20 000 channels cost
// 10 GB.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

// firstChunk is the capacity the first chunk starts at.
const firstChunk = 4

func (c *chunked[T]) append(v T) {
	switch {
	case c.n == 0:
		c.chunks = append(c.chunks, make([]T, 0, firstChunk))
	case c.n&(1<<chunkBits-1) == 0:
		c.chunks = append(c.chunks, make([]T, 0, 1<<chunkBits))
	}
	last := &c.chunks[len(c.chunks)-1]
	if len(*last) == cap(*last) {
		// Only the first chunk fills before it is full size.
		grown := make([]T, len(*last), min(2*cap(*last), 1<<chunkBits))
		copy(grown, *last)
		*last = grown
	}
	*last = append(*last, v)
	c.n++
}

func (c *chunked[T]) at(i int) T { return c.chunks[i>>chunkBits][i&(1<<chunkBits-1)] }

func (c *chunked[T]) set(i int, v T) { c.chunks[i>>chunkBits][i&(1<<chunkBits-1)] = v }

func (c *chunked[T]) len() int { return c.n }

// sparse holds a small vector of claims for some of a channel's records,
// appended in rank order: the excess of a closure over a record's own
// clock, which honest stamps almost never have.
type sparse struct {
	ranks  []uint32
	starts []uint32 // starts[i] indexes vals; the vector of ranks[i] ends at starts[i+1] or vals.len()
	vals   chunked[claim]
}

func (s *sparse) add(rank uint32, vs []claim) {
	if len(vs) == 0 {
		return
	}
	s.ranks = append(s.ranks, rank)
	s.starts = append(s.starts, uint32(s.vals.len()))
	for _, v := range vs {
		s.vals.append(v)
	}
}

// get returns the bounds in vals of the vector of rank, or lo == hi.
func (s *sparse) get(rank uint32) (lo, hi int) {
	n := len(s.ranks)
	if n == 0 || rank > s.ranks[n-1] || rank < s.ranks[0] {
		return 0, 0
	}
	i := n - 1 // lookups favour recent records
	if s.ranks[i] != rank {
		var ok bool
		if i, ok = slices.BinarySearch(s.ranks, rank); !ok {
			return 0, 0
		}
	}
	lo = int(s.starts[i])
	hi = s.vals.len()
	if i+1 < n {
		hi = int(s.starts[i+1])
	}
	return lo, hi
}

// valueOf returns the count the vector of rank holds for channel ch, or 0.
func (s *sparse) valueOf(rank, ch uint32) uint32 {
	lo, hi := s.get(rank)
	for i := lo; i < hi; i++ {
		if c := s.vals.at(i); c.channel() == ch {
			return c.count()
		}
	}
	return 0
}

// joiner accumulates the pointwise maximum of claims over a dense array
// indexed by channel, touching only the channels it is given: one per
// closure being computed, reused for every record.
type joiner struct {
	val     []uint32
	gen     []uint32
	cur     uint32
	touched []uint32
}

func newJoiner(channels int) *joiner {
	return &joiner{val: make([]uint32, channels), gen: make([]uint32, channels)}
}

func (j *joiner) reset() {
	j.cur++
	if j.cur == 0 { // wrapped: forget every old generation
		clear(j.gen)
		j.cur = 1
	}
	j.touched = j.touched[:0]
}

func (j *joiner) add(ch, v uint32) {
	if j.gen[ch] != j.cur {
		j.gen[ch] = j.cur
		j.val[ch] = v
		j.touched = append(j.touched, ch)
		return
	}
	if v > j.val[ch] {
		j.val[ch] = v
	}
}

func (j *joiner) get(ch uint32) uint32 {
	if j.gen[ch] != j.cur {
		return 0
	}
	return j.val[ch]
}
