package console

import (
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// Markers in the names of sequential nodes, after the protected prefix.
const (
	latchMarker = "latch-"
	lockMarker  = "lock-"
	readMarker  = "__READ__"
	writeMarker = "__WRIT__"
	leaseMarker = "lease-"
	queueMarker = "queue-"
)

// classify recognises a recipe by the children of its node; "" means
// none. Protected children without a recipe's marker are the members of a
// group (group.Join). A counter (a leaf holding 4 bytes) and a service
// (see isService) are recognised by data, and a simple barrier not at all.
func classify(kids []string) Kind {
	has := func(name string) bool { return slices.Contains(kids, name) }
	if has("clients") && has("resources") && has("barriers") && has("term") {
		return KindGroup
	}
	if has("locks") && has("leases") {
		return KindSemaphore
	}
	for _, k := range kids {
		if !zkcoord.IsProtected(k) {
			continue
		}
		name := zkcoord.StripProtected(k)
		switch {
		case strings.Contains(name, latchMarker):
			return KindElection
		case strings.Contains(name, readMarker), strings.Contains(name, writeMarker):
			return KindRWLock
		case strings.Contains(name, lockMarker):
			return KindMutex
		case strings.HasPrefix(name, queueMarker):
			return KindQueue
		}
	}
	for _, k := range kids {
		if isUUID(k) {
			return KindDoubleBarrier
		}
	}
	for _, k := range kids {
		if zkcoord.IsProtected(k) {
			return KindMembership
		}
	}
	return ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// ordered returns the children carrying marker, ordered as Curator orders
// contenders (internal/seq's Curator order): by the text after the last
// occurrence of the marker, then by name.
func ordered(kids []string, markers ...string) []string {
	var out []seq.Keyed
	for _, k := range kids {
		if !zkcoord.IsProtected(k) {
			continue
		}
		for _, mk := range markers {
			if strings.Contains(k, mk) {
				out = append(out, seq.Keyed{Name: k, Key: seq.After(k, mk)})
				break
			}
		}
	}
	slices.SortFunc(out, seq.CompareCurator)
	names := make([]string, len(out))
	for i, n := range out {
		names[i] = n.Name
	}
	return names
}
