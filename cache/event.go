package cache

import (
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// EventType says what an Event reports.
type EventType int

const (
	// Added: a node entered the cache (it was created, or found by the
	// initial load or a resync).
	Added EventType = iota + 1
	// Updated: a cached node's data changed (its modification zxid moved).
	Updated
	// Removed: a node left the cache (it was deleted, or a resync found it
	// gone). Event.Node holds its last cached value.
	Removed
	// Initialized: the initial load is complete; every node that existed
	// then has been reported as Added.
	Initialized
	// StateChanged: the Session changed state (Suspended, Reconnected, or a
	// terminal state, after which the channel is closed).
	StateChanged
	// Resynced: after a Reconnected state, or the first state of a new
	// Session (NewTreeConfig), the cache has compared itself with the
	// server and reported every difference; events between that
	// StateChanged and Resynced are exactly those differences.
	Resynced
	// Failed: a read failed for a reason other than a missing node or the
	// Session's end (Event.Err, for example ErrNoAuth). A cached node
	// keeps its last value; on one-shot watches it is no longer
	// followed, on a recursive watch it is read again at its next change.
	// A node not cached yet stays out of the cache (and of Children) and
	// is read again at its next change (on one-shot watches: at its
	// parent's next listing) or at a resync.
	Failed
)

var typeNames = [...]string{"", "Added", "Updated", "Removed", "Initialized", "StateChanged", "Resynced", "Failed"}

func (t EventType) String() string {
	if t > 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "Unknown"
}

// Event is one change of a cache, in the order the cache saw it.
type Event struct {
	Type EventType
	// Node is the node concerned (Added, Updated, Removed, Failed): its new
	// value, or for Removed its last one.
	Node Node
	// State is the Session's new state (StateChanged).
	State zkcoord.State
	// Err is the cause of a terminal state or of a Failed read.
	Err error
}

func (e Event) String() string {
	switch e.Type {
	case Added, Updated, Removed:
		return fmt.Sprintf("%s %s", e.Type, e.Node.Path)
	case StateChanged:
		return fmt.Sprintf("%s %s", e.Type, e.State)
	case Failed:
		return fmt.Sprintf("%s %s: %v", e.Type, e.Node.Path, e.Err)
	}
	return e.Type.String()
}

// last reports whether e is the last event of a cache.
func (e Event) last() bool { return e.Type == StateChanged && e.State.Terminal() }
