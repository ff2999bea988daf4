package seq

import (
	"math"
	"slices"
	"testing"
)

// sortSerial sorts seqs in their serial order.
func sortSerial(seqs []int32) []int32 {
	out := slices.Clone(seqs)
	o := SerialOf(out)
	slices.SortFunc(out, o.Compare)
	return out
}

func TestSerialOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		created []int32 // in creation order
	}{
		{"empty", nil},
		{"one", []int32{7}},
		{"before the wrap", []int32{0, 1, 2, 10, 1000}},
		{"the whole non-negative range", []int32{0, 1, math.MaxInt32 - 1, math.MaxInt32}},
		{"across the wrap", []int32{math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MinInt32 + 2}},
		{"from negative to zero", []int32{-2, -1, 0, 1}},
		{"negative only", []int32{math.MinInt32, -1000000000, -999999999, -1}},
		{"spanning half the circle: equal gaps", []int32{math.MaxInt32, -1}},
		{"old and new after the wrap", []int32{2, 10, math.MinInt32}},
	} {
		shuffled := slices.Clone(tc.created)
		slices.Reverse(shuffled)
		if got := sortSerial(shuffled); !slices.Equal(got, tc.created) && len(tc.created) > 0 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.created)
		}
	}
}

// Without negative numbers the serial order is numeric order, so a layout
// that used numeric order reads existing nodes the same way after
// switching.
func TestSerialIsNumericBeforeTheWrap(t *testing.T) {
	for _, seqs := range [][]int32{
		{0, math.MaxInt32},
		{5, 0, math.MaxInt32, 3},
		{math.MaxInt32, math.MaxInt32 - 1, 1},
	} {
		got := sortSerial(seqs)
		want := slices.Clone(seqs)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v: %v, want %v", seqs, got, want)
		}
	}
}

// With equal gaps the order still depends only on the set.
func TestSerialEqualGaps(t *testing.T) {
	a := []int32{0, math.MinInt32} // two gaps of 2^31
	if got := sortSerial(a); !slices.Equal(got, []int32{0, math.MinInt32}) {
		t.Errorf("%v", got)
	}
	if got := sortSerial([]int32{math.MinInt32, 0}); !slices.Equal(got, []int32{0, math.MinInt32}) {
		t.Errorf("%v", got)
	}
	if got := sortSerial([]int32{4, 4, 4}); !slices.Equal(got, []int32{4, 4, 4}) {
		t.Errorf("%v", got)
	}
}

// SerialBy orders items as SerialOf orders their numbers, here across the
// wrap.
func TestSerialBy(t *testing.T) {
	type node struct {
		name string
		n    int32
	}
	created := []node{{"a", math.MaxInt32 - 1}, {"b", math.MaxInt32}, {"c", math.MinInt32}, {"d", math.MinInt32 + 1}}
	items := slices.Clone(created)
	slices.Reverse(items)
	o := SerialBy(items, func(x node) int32 { return x.n })
	slices.SortFunc(items, func(a, b node) int { return o.Compare(a.n, b.n) })
	if !slices.Equal(items, created) {
		t.Fatalf("%v, want %v", items, created)
	}
}
