package seq

import (
	"cmp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Keyed is a node name together with the key the Curator order compares.
type Keyed struct {
	Name string // the node name, no directory
	Key  string // what it is ordered by, usually After(Name, marker)
}

// CompareCurator orders two nodes as Curator orders the children of a
// lock or latch directory: by their keys, compared as Java strings
// (CompareText). Curator leaves nodes with equal keys in the order the
// server listed them, which is arbitrary; here they fall back to the whole
// names, compared bytewise, so that every zkcoord process agrees. Equal
// keys need foreign names, or a counter that went all the way round.
func CompareCurator(a, b Keyed) int {
	if c := CompareText(a.Key, b.Key); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// CompareText compares two strings as java.lang.String.compareTo does: by
// UTF-16 code units, a proper prefix first. Node names are UTF-8 and Java
// decodes them before comparing; for ASCII text, such as every sequence
// suffix, this is bytewise order.
func CompareText(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return cmp.Compare(a[i], b[i])
	}
	// Back up to the start of the rune that differs and compare the rest
	// as UTF-16: a character outside the Basic Multilingual Plane is a
	// surrogate pair (0xD800 to 0xDFFF), which sorts before U+E000 to
	// U+FFFF although its UTF-8 bytes sort after theirs.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	return compareUTF16(a[i:], b[i:])
}

func compareUTF16(a, b string) int {
	ua := utf16.Encode([]rune(a))
	ub := utf16.Encode([]rune(b))
	n := min(len(ua), len(ub))
	for i := 0; i < n; i++ {
		if ua[i] != ub[i] {
			return cmp.Compare(ua[i], ub[i])
		}
	}
	return cmp.Compare(len(ua), len(ub))
}
