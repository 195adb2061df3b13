package demo

import "math/bits"

// idSet is a set of record IDs, a growable bitset.
type idSet []uint64

func (s *idSet) add(id int) {
	w := id / 64
	for len(*s) <= w {
		*s = append(*s, 0)
	}
	(*s)[w] |= 1 << (id % 64)
}

func (s *idSet) union(t idSet) {
	for len(*s) < len(t) {
		*s = append(*s, 0)
	}
	for k, w := range t {
		(*s)[k] |= w
	}
}

func (s idSet) clone() idSet { return append(idSet(nil), s...) }

// ids returns the members in increasing order.
func (s idSet) ids() []int {
	var out []int
	for k, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, k*64+b)
			w &^= 1 << b
		}
	}
	return out
}
