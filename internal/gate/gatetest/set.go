package gatetest

import "math/bits"

// Set is a set of record IDs (a growable bitset).
type Set []uint64

// Add puts id in s.
func (s *Set) Add(id int) {
	w := id / 64
	for len(*s) <= w {
		*s = append(*s, 0)
	}
	(*s)[w] |= 1 << (id % 64)
}

// Has reports whether id is in s.
func (s Set) Has(id int) bool {
	w := id / 64
	return w < len(s) && s[w]&(1<<(id%64)) != 0
}

// Union adds every member of t to s.
func (s *Set) Union(t Set) {
	for len(*s) < len(t) {
		*s = append(*s, 0)
	}
	for k, w := range t {
		(*s)[k] |= w
	}
}

// Clone returns a copy of s.
func (s Set) Clone() Set { return append(Set(nil), s...) }

// Each calls f for every member of s in increasing order.
func (s Set) Each(f func(id int)) {
	for k, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			f(k*64 + b)
			w &^= 1 << b
		}
	}
}

// Len returns the number of members.
func (s Set) Len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}
