package election

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// latchName is the name every participant node carries before its sequence
// number: Curator's LeaderLatch creates <path>/_c_<uuid>-latch-<seq>.
const latchName = "latch-"

// isParticipant reports whether a child of the election node is a
// participant. Curator's LeaderLatch sorts every child it finds; zkcoord
// counts only names that contain "latch-" (all of Curator's and its own do)
// and ignores anything else found in the directory.
func isParticipant(name string) bool {
	return strings.Contains(name, latchName)
}

// sortKey returns the part of a node name that orders it: the text after
// the last "latch-", exactly as Curator's
// StandardLockInternalsDriver.standardFixForSorting computes it (the whole
// name when "latch-" does not occur).
func sortKey(name string) string {
	i := strings.LastIndex(name, latchName)
	if i < 0 {
		return name
	}
	return name[i+len(latchName):]
}

// compareKeys compares two strings the way java.lang.String.compareTo does:
// by UTF-16 code units, a proper prefix first. ZooKeeper formats sequence
// numbers with %010d of a signed 32-bit counter, so after 2^31 creates a
// name ends in "-2147483648"; such keys sort as text, before "0000000000",
// which is what Curator does and so what zkcoord must do to agree with it.
func compareKeys(a, b string) int {
	// Fast path: byte order equals UTF-16 order up to the first byte that
	// is not ASCII.
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmpInt(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return cmpInt(int(a[i]), int(b[i]))
	}
	// Back up to the start of the rune that differs and compare the rest
	// as UTF-16.
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
			return cmpInt(int(ua[i]), int(ub[i]))
		}
	}
	return cmpInt(len(ua), len(ub))
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareNodes orders two participant names: by Curator's key, then, for
// the (in practice impossible) case of equal keys, by the whole name so
// that every zkcoord process agrees.
func compareNodes(a, b string) int {
	if c := compareKeys(sortKey(a), sortKey(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// participants returns the participant names among children, in election
// order (the first leads), and the names it ignored.
func participants(children []string) (sorted, ignored []string) {
	type keyed struct{ name, key string }
	ps := make([]keyed, 0, len(children))
	for _, c := range children {
		if isParticipant(c) {
			ps = append(ps, keyed{c, sortKey(c)}) // once per name, not per comparison
		} else {
			ignored = append(ignored, c)
		}
	}
	slices.SortFunc(ps, func(a, b keyed) int {
		if c := compareKeys(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	sorted = make([]string, len(ps))
	for i, p := range ps {
		sorted[i] = p.name
	}
	return sorted, ignored
}

// position returns the index of name in sorted, or -1.
func position(sorted []string, name string) int {
	for i, s := range sorted {
		if s == name {
			return i
		}
	}
	return -1
}
