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
//     returned) deletes it and sets the mark to "released", or deletes the
//     mark too if the resource was removed.
//
// An expiry, an operator's delete or a release by a zkcoord that predates
// the marks leaves the mark "held". So the mark read before a successful
// create is "released" exactly when the previous barrier was released
// cleanly and no marked barrier came and went since; "held", or no mark
// (a resource registered by an older zkcoord, a race with a removal),
// counts as a barrier that vanished. A version does not survive a
// delete, so the take also compares the creation zxid of the mark it set
// (in the transaction's reply) with that of the mark it read: a mark
// deleted and created again since counts as not released either
// (mark.remade). The barrier records the answer of the version check
// (barrierInfo.Clean); a member that learns its take only from a read
// after a lost reply compares the zxids by reading the mark again.
//
// A mark is deleted only by a removed resource's clean release and by
// RemoveResource (forgetMark), which deletes a "released" mark at the
// version read; a "held" one stays after an expiry, so that a resource
// added again waits. So when no mark exists, no marked barrier exists and
// the last one, if any, was released cleanly: AddResource writes a new
// resource's mark "released" (markNew), and its first takeover does not
// wait. A take that finds no mark still waits: the resource may have been
// run by a zkcoord that predates the marks.

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
	czxid   int64
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
	return mark{data: data, version: st.Version, czxid: st.Czxid, exists: true}, nil
}

// remade reports whether the mark that a take's transaction set, with
// stat st (nil: not known), is not the node mk was read from: deleted and
// created again since, it may have reached the version read with another
// owner's "held" (docs/protocol.md, Lock-delay). The take then counts as
// not clean.
func (mk mark) remade(st *zkcoord.Stat) bool {
	return mk.exists && (st == nil || st.Czxid != mk.czxid)
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

// held returns the version the mark has once take's transaction
// succeeded: nothing else writes it while the barrier it created exists.
func (mk mark) held() int32 {
	if mk.exists {
		return mk.version + 1
	}
	return 0
}

// releaseOp returns the operation that, in the transaction deleting a
// barrier after its resource stopped, marks the resource released,
// provided the mark is still at version held, as the barrier's take left
// it (-1: any version).
func releaseOp(path string, held int32) zkcoord.Op { return zkcoord.SetOp(path, markReleased, held) }

// forgetOp returns the operation that, in the transaction deleting the
// barrier of a removed resource after it stopped, deletes its mark,
// provided it is still at version held.
func forgetOp(path string, held int32) zkcoord.Op { return zkcoord.DeleteOp(path, held) }

// markNew writes the mark of a resource just registered: "released",
// unless a mark is there already (it tells how the resource's last
// barrier went, and stays).
func markNew(ctx context.Context, sess *zkcoord.Session, path string) error {
	return sess.Retry(ctx, func(ctx context.Context) error {
		_, err := sess.Create(ctx, path, markReleased, zkcoord.FlagPersistent)
		if errors.Is(err, zkcoord.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// forgetMark deletes the mark at path if it says "released", at the
// version read: nobody took the resource since that clean release, so no
// barrier of it exists. A mark that says "held" stays.
func forgetMark(ctx context.Context, sess *zkcoord.Session, path string) error {
	return sess.Retry(ctx, func(ctx context.Context) error {
		mk, err := readMark(ctx, sess, path)
		if err != nil || !mk.released() {
			return err
		}
		err = sess.Delete(ctx, path, mk.version)
		if errors.Is(err, zkcoord.ErrNoNode) || errors.Is(err, zkcoord.ErrBadVersion) {
			return nil // gone, or taken since: that barrier's end decides
		}
		return err
	})
}
