package seq

import (
	"cmp"
	"slices"
)

// Serial is the wrap-aware order of one set of sequence numbers: the
// numbers are placed on the circle of 2^32 values and read from just after
// the largest empty gap (RFC 1982-style serial-number arithmetic). Build it
// from every number present, then compare any two of them. The zero value
// is plain order of the numbers read as unsigned.
type Serial struct {
	base uint32 // the first number in the order
}

// SerialOf returns the serial order of the given numbers (any order,
// duplicates allowed). When they span fewer than 2^31 values the largest
// gap is unique and longer than half the circle, so the order is the one
// RFC 1982 defines pairwise, and is creation order; when none is negative
// it is numeric order. Ties between gaps of equal length go to the gap
// that ends at the smallest number read as unsigned, so every reader of
// the same set finds the same order.
func SerialOf(seqs []int32) Serial {
	if len(seqs) == 0 {
		return Serial{}
	}
	u := make([]uint32, len(seqs))
	for i, s := range seqs {
		u[i] = uint32(s)
	}
	slices.Sort(u)
	// The gap that wraps from the largest number round to the smallest
	// (0 when all are equal: the circle has no other gap then either).
	base := u[0]
	gap := u[0] - u[len(u)-1] // modulo 2^32
	for i := 1; i < len(u); i++ {
		if g := u[i] - u[i-1]; g > gap {
			gap, base = g, u[i]
		}
	}
	return Serial{base: base}
}

// Compare orders two numbers of the set: negative when a comes first.
func (s Serial) Compare(a, b int32) int {
	return cmp.Compare(uint32(a)-s.base, uint32(b)-s.base)
}

// SerialBy returns the serial order of the sequence numbers of items, as
// num gives them.
func SerialBy[T any](items []T, num func(T) int32) Serial {
	seqs := make([]int32, len(items))
	for i, it := range items {
		seqs[i] = num(it)
	}
	return SerialOf(seqs)
}
