package console

import (
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
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
// none. A counter (a leaf holding 4 bytes) is recognised by its data, and
// a simple barrier not at all.
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
// contenders: by the text after the last occurrence of the marker, as
// strings, then by name.
func ordered(kids []string, markers ...string) []string {
	type named struct{ name, key string }
	var out []named
	for _, k := range kids {
		if !zkcoord.IsProtected(k) {
			continue
		}
		for _, mk := range markers {
			if i := strings.LastIndex(k, mk); i >= 0 {
				out = append(out, named{k, k[i+len(mk):]})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b named) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(out))
	for i, n := range out {
		names[i] = n.name
	}
	return names
}
