package rebalance

import (
	"bytes"
	"context"
	"errors"

	"github.com/zkcoord/zkcoord"
)

// A resource's handover mark, handovers/<resource>, tells how its last
// barrier went, so that a member with a lock-delay (WithLockDelay) waits
// only after a barrier that vanished without a clean release. Every
// member maintains the marks, with the option or without:
//
//   - the transaction that creates a barrier sets the mark to "held", at
//     the version the member read before (or creates it, if there was
//     none), so it fails if anyone took or released the resource in
//     between;
//   - the transaction that releases a barrier cleanly (after Unassigned
//     returned) deletes it and sets the mark to "released".
//
// An expiry, an operator's delete or a release by a zkcoord that predates
// the marks leaves the mark "held". So the mark read before a successful
// create is "released" exactly when the previous barrier was released
// cleanly and no marked barrier came and went since; "held", or no mark
// (a new resource, a group run by an older zkcoord), counts as a barrier
// that vanished. The barrier records the answer (barrierInfo.Clean).
//
// RemoveResource deletes the mark with the resource. A release that finds
// no mark deletes its barrier alone; a takeover that finds none creates
// it, so a takeover racing a removal may leave a mark behind, which the
// resource reuses if it comes back.

// Data of a handover mark.
var (
	markHeld     = []byte("held")
	markReleased = []byte("released")
)

// mark is a resource's handover mark as read before its barrier is
// created.
type mark struct {
	data    []byte
	version int32
	exists  bool
}

// readMark reads the handover mark at path; a missing mark is no error.
func readMark(ctx context.Context, sess *zkcoord.Session, path string) (mark, error) {
	data, st, err := sess.Get(ctx, path)
	switch {
	case errors.Is(err, zkcoord.ErrNoNode):
		return mark{}, nil
	case err != nil:
		return mark{}, err
	}
	return mark{data: data, version: st.Version, exists: true}, nil
}

// released reports whether the mark says that the resource's last barrier
// was released cleanly.
func (mk mark) released() bool { return mk.exists && bytes.Equal(mk.data, markReleased) }

// take returns the operation that, in the transaction creating the
// barrier, marks the resource held, provided the mark at path is still as
// read.
func (mk mark) take(path string) zkcoord.Op {
	if mk.exists {
		return zkcoord.SetOp(path, markHeld, mk.version)
	}
	return zkcoord.CreateOp(path, markHeld, zkcoord.FlagPersistent)
}

// releaseOp returns the operation that, in the transaction deleting a
// barrier after its resource stopped, marks the resource released.
func releaseOp(path string) zkcoord.Op { return zkcoord.SetOp(path, markReleased, -1) }
