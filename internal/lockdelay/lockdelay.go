// Package lockdelay is the one lock-delay of zkcoord: when the owner of a
// lock or a leadership leaves without a clean release (its session
// expired, or someone deleted its node), the next owner waits a delay
// before it acts, so that an owner paused past its session timeout (a GC
// pause, a stopped VM) has time to wake, see its loss and stop. Package
// lock and the election engine (and so election and failover) share it.
//
// # Telling a clean release from an expiry
//
// A clean release deletes the owner's node and, in the same transaction,
// writes the node's name as the data of its parent directory (Release,
// Mark). Nothing else writes that data, so:
//
//   - A waiter that saw its predecessor P in a listing and then finds
//     itself first reads the directory: if its data names P, P released
//     cleanly, and, as only an owner writes the mark, P was the last
//     owner before it. Anything else (P's session expired, P gave up
//     waiting, P was deleted by an operator or by a client that does not
//     mark, such as Curator or Kazoo, or another release overwrote the
//     mark meanwhile) counts as an expiry: the waiter waits the delay.
//   - A contender that finds itself first on its first listing read the
//     directory before creating its node (Arrive). It acts at once only if
//     the directory then held no contender, its last change of children
//     was a marked release (the transaction that deleted a child also
//     wrote the data: pzxid equals mzxid; or the directory had never had
//     a child, or was missing), and no child vanished since: read again
//     once the contender is first, the directory's cversion (the number
//     of creates and deletes of its children) has grown by exactly the
//     number of children that came meanwhile, its own node included.
//     Otherwise it waits the delay.
//
// Every doubt falls on the side of waiting. No garbage is left: the mark
// is the directory's data, overwritten by the next release, and gone with
// the directory (a container) when it empties.
//
// # Time
//
// ZooKeeper does not say when a node vanished. The delay counts from the
// moment the contender found itself first (the listing that showed its
// predecessor gone), which is never earlier than the vanishing, so the
// wait is at least the delay after it.
package lockdelay

import (
	"context"
	"errors"
	"time"

	"github.com/zkcoord/zkcoord"
)

// Mark returns the operation that, in the transaction deleting node,
// records that node was released cleanly.
func Mark(node string) zkcoord.Op {
	return zkcoord.SetOp(zkcoord.Parent(node), []byte(zkcoord.Base(node)), -1)
}

// Release deletes node together with its mark, retrying over connection
// loss. A node already gone is success (and leaves no mark: whatever
// deleted it was not this release).
func Release(ctx context.Context, sess *zkcoord.Session, node string) error {
	return sess.Retry(ctx, func(ctx context.Context) error {
		_, err := sess.Multi(ctx, zkcoord.DeleteOp(node, -1), Mark(node))
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		return err
	})
}

// arrival is what a contender read of its directory before it created its
// node.
type arrival struct {
	read     bool
	absent   bool
	crowded  bool // a contender was there
	stat     zkcoord.Stat
	children int // how many children the directory had
}

// Arrive reads dir's children and stat before the contender's node is
// created, and returns the contender's Tracker for a delay of d: nil,
// without a read, when d <= 0. isContender tells contenders from other
// children.
func Arrive(ctx context.Context, sess *zkcoord.Session, dir string, d time.Duration, isContender func(string) bool) (*Tracker, error) {
	if d <= 0 {
		return nil, nil
	}
	children, st, err := sess.Children(ctx, dir)
	switch {
	case errors.Is(err, zkcoord.ErrNoNode):
		return &Tracker{d: d, arrival: arrival{read: true, absent: true}}, nil
	case err != nil:
		return nil, err
	}
	a := arrival{read: true, stat: *st, children: len(children)}
	for _, c := range children {
		if isContender(c) {
			a.crowded = true
		}
	}
	return &Tracker{d: d, arrival: a}, nil
}

// free reports whether the directory, when the contender arrived, was
// free after a clean release (or had never been used).
func (a arrival) free() bool {
	return a.read && !a.crowded && (a.absent || a.stat.Pzxid == a.stat.Mzxid)
}

// clean reports whether a directory free on arrival that now has these
// children and this stat lost no child meanwhile.
func (a arrival) clean(children []string, st *zkcoord.Stat) bool {
	return st.Cversion == a.stat.Cversion+int32(len(children)-a.children)
}

// Tracker follows one contender, from its arrival to the moment it is
// first, and says how long it must then wait. It is owned by the
// contender's goroutine.
type Tracker struct {
	d       time.Duration
	arrival arrival
	pred    string // the last predecessor a listing showed
	passed  bool   // the delay was waited since pred was seen
}

// Behind records that a listing showed pred (a path) just before the
// contender.
func (t *Tracker) Behind(pred string) {
	if t != nil && pred != t.pred {
		t.pred, t.passed = pred, false
	}
}

// Passed records that the contender waited the delay out: it need not
// wait again until a listing shows another predecessor.
func (t *Tracker) Passed() {
	if t != nil {
		t.passed = true
	}
}

// Wait returns how long the contender, whose node is node and which a
// listing has just found first, must wait before it acts: 0 after a clean
// release, the delay otherwise. It reads the directory's mark when the
// contender had a predecessor.
func (t *Tracker) Wait(ctx context.Context, sess *zkcoord.Session, node string) (time.Duration, error) {
	if t == nil || t.d <= 0 || t.passed {
		return 0, nil
	}
	if t.pred == "" {
		if !t.arrival.free() {
			return t.d, nil
		}
		children, st, err := sess.Children(ctx, zkcoord.Parent(node))
		if err != nil {
			return 0, err
		}
		if t.arrival.clean(children, st) {
			return 0, nil
		}
		return t.d, nil
	}
	data, _, err := sess.Get(ctx, zkcoord.Parent(node))
	if err != nil {
		return 0, err
	}
	if string(data) == zkcoord.Base(t.pred) {
		return 0, nil
	}
	return t.d, nil
}
