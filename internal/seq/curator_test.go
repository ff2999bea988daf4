package seq

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"unicode/utf16"
)

// javaCompare restates java.lang.String.compareTo independently of the
// code under test: UTF-16 code units, a proper prefix first.
func javaCompare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return cmp.Compare(ua[i], ub[i])
		}
	}
	return cmp.Compare(len(ua), len(ub))
}

func TestCompareText(t *testing.T) {
	// Each row is in Java's order.
	for _, row := range [][]string{
		{Format(0), Format(1), Format(2), Format(10), Format(math.MaxInt32)},
		// After the counter wraps, numbers sort as text: the negative ones
		// first, and among them not in numeric order.
		{Format(-1), Format(-2), Format(math.MinInt32 + 1), Format(math.MinInt32), Format(-999999999), Format(0)},
		{"", "-", "0", "00", "1", "A", "a", "z"},
		// A surrogate pair (U+1F600) sorts before U+FF61, although its
		// UTF-8 bytes sort after.
		{"a", "a\u00e9", "a\U0001F600", "a\uff61", "b"},
		{"\U0001F600", "\ue000", "\uff61"},
	} {
		for i := range row {
			for j := range row {
				if got, want := CompareText(row[i], row[j]), cmp.Compare(i, j); got != want {
					t.Errorf("CompareText(%q, %q) = %d, want %d", row[i], row[j], got, want)
				}
			}
		}
	}
}

// TestCuratorOrderAcrossTheWrap: Curator, and Kazoo, compare the printed
// numbers as text, so after the wrap the order is neither numeric nor
// creation order. This package must keep it so, to agree with them.
func TestCuratorOrderAcrossTheWrap(t *testing.T) {
	const prefix = "_c_0b5d8a59-3b0e-4a3c-9d36-1b1f4bd0b6a1-lock-"
	var nodes []Keyed
	for _, n := range []int32{1, math.MinInt32, math.MaxInt32, -1, -999999999, -1000000000, 0, 10, math.MinInt32 + 1} {
		name := prefix + Format(n)
		nodes = append(nodes, Keyed{Name: name, Key: After(name, "lock-")})
	}
	slices.SortFunc(nodes, CompareCurator)
	want := []string{
		"-000000001", "-1000000000", "-2147483647", "-2147483648", "-999999999",
		"0000000000", "0000000001", "0000000010", "2147483647",
	}
	for i, n := range nodes {
		if n.Key != want[i] {
			t.Errorf("position %d: %s, want %s", i, n.Key, want[i])
		}
	}
}

func TestCompareCuratorTies(t *testing.T) {
	a := Keyed{Name: "_c_a-lock-0000000001", Key: "0000000001"}
	b := Keyed{Name: "_c_b-lock-0000000001", Key: "0000000001"}
	if CompareCurator(a, b) >= 0 || CompareCurator(b, a) <= 0 || CompareCurator(a, a) != 0 {
		t.Fatal("equal keys must fall back to the names")
	}
	// The key decides before the name does.
	c := Keyed{Name: "_c_0-lock-0000000002", Key: "0000000002"}
	if CompareCurator(b, c) >= 0 {
		t.Fatal("the name decided before the key")
	}
}
