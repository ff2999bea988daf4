package election

import (
	"slices"
	"strings"

	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/seq"
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

// keyOf returns a participant keyed for the Curator order: by the text
// after the last "latch-", as LeaderLatch keys it.
func keyOf(name string) seq.Keyed {
	return seq.Keyed{Name: name, Key: seq.After(name, latchName)}
}

// participants returns the participant names among children, in election
// order (the first leads), and the names it ignored. The order is
// Curator's, whatever the keys hold: LeaderLatch sorts every name, not only
// those ending in a sequence number.
func participants(children []string) (sorted, ignored []string) {
	ps := make([]seq.Keyed, 0, len(children))
	for _, c := range children {
		if isParticipant(c) {
			ps = append(ps, keyOf(c)) // once per name, not per comparison
		} else {
			ignored = append(ignored, c)
		}
	}
	slices.SortFunc(ps, seq.CompareCurator)
	sorted = make([]string, len(ps))
	for i, p := range ps {
		sorted[i] = p.Name
	}
	return sorted, ignored
}

// wrappedParticipant returns the first of the participants sorted whose
// sequence number is negative, "" if none is: the election's sequence
// counter wrapped, and its order is no longer creation order.
func wrappedParticipant(sorted []string) string {
	for _, name := range sorted {
		if seq.Wrapped(seq.After(name, latchName)) {
			return name
		}
	}
	return ""
}

// position returns the index of name in sorted, or -1.
var position = elect.Position
