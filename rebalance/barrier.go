package rebalance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// takeover is what acquireBarrier returns: the barrier's fencing token
// (its czxid), a watch on it, whether the resource's previous barrier
// was released cleanly, and the version of the handover mark that the
// take left (-1: unknown), which guards the release.
type takeover struct {
	token int64
	watch <-chan zkcoord.Event
	clean bool
	held  int32
}

// acquireBarrier creates the ephemeral barrier node at path for client
// owner, first waiting (with an existence watch, never polling) for any
// other barrier there to be deleted. The create runs in one transaction
// with the set of the resource's handover mark at markPath to "held", at
// the version read before (see handover.go), so the mark read tells
// exactly how the previous barrier went.
//
// It returns an error only when no barrier of this client exists at path:
// the create itself is never abandoned half-way, so a cancelled acquisition
// cannot leave an orphan barrier behind.
func acquireBarrier(ctx context.Context, sess *zkcoord.Session, path, markPath, owner string, gen int64) (takeover, error) {
	// Once a create has been sent, its outcome is settled without regard
	// for ctx (but never beyond the Session's life).
	settle := context.WithoutCancel(ctx)
	created := false // a create may have succeeded
	unknown := false // a create's reply was lost
	free := false    // the other client's barrier was seen deleted
	var mk mark      // the handover mark, as read before the next create
	for {
		c := ctx
		if created {
			c = settle
		}
		if unknown {
			// The reply was lost with the connection, and the Session may
			// have reconnected to a server that has not applied the create
			// yet: a read there would report no barrier, and this client
			// would give up and leave its barrier behind as an orphan (or
			// retry). A sync makes the server catch up with the leader.
			if err := sess.Sync(settle, zkcoord.Parent(path)); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
				return takeover{}, err
			}
			unknown = false
		}
		if free {
			// Seen deleted: read how it went and create at once; a create
			// that finds another client's barrier, or the mark moved, looks
			// again.
			free = false
			if err := ctx.Err(); err != nil {
				return takeover{}, err
			}
			var err error
			if mk, err = readMark(ctx, sess, markPath); err != nil {
				return takeover{}, err
			}
		} else {
			b, err := lookAtBarrier(c, settle, sess, path, markPath, owner, created)
			if err != nil {
				return takeover{}, err
			}
			if b.ok {
				if b.mine {
					// Just created, or created by an attempt whose reply was
					// lost: its data say what the mark was then. The mark
					// stays as that take left it while the barrier exists.
					held := mk.held()
					if !created {
						held = -1
						if b.mark.exists {
							held = b.mark.version
						}
					} else if b.info.Clean && mk.exists {
						// Was the mark the take set the one read before?
						now, err := readMark(settle, sess, markPath)
						if err != nil {
							return takeover{}, err
						}
						if !now.exists || now.czxid != mk.czxid {
							b.info.Clean = false
						}
					}
					return takeover{token: b.st.Czxid, watch: b.w, clean: b.info.Clean, held: held}, nil
				}
				created = false
				ev, err := recipe.WaitEvent(ctx, sess, b.w)
				if err != nil {
					return takeover{}, err
				}
				free = ev.Type == zkcoord.EventNodeDeleted
				continue
			}
			if created {
				created = false // settled: it was not created; the mark read before still guards the next create
				if err := ctx.Err(); err != nil {
					return takeover{}, err
				}
			} else {
				mk = b.mark
			}
		}
		if testHookBeforeCreate != nil {
			testHookBeforeCreate()
		}
		b, err := createBarrier(settle, sess, path, markPath, owner, gen, mk)
		switch {
		case err == nil && b.mine:
			return takeover{token: b.st.Czxid, watch: b.w, clean: b.info.Clean, held: mk.held()}, nil
		case err == nil:
			created = true // look at the node again to learn the token
		case zkcoord.IsRetryable(err):
			created, unknown = true, true // look at the node to learn the outcome
		case errors.Is(err, zkcoord.ErrNodeExists), errors.Is(err, zkcoord.ErrBadVersion):
			// Another barrier, or the mark moved (someone else took or
			// released the resource): look again.
		case errors.Is(err, zkcoord.ErrNoNode):
			// A parent is missing (a group made before handover marks), or
			// the mark was deleted with its resource: make sure of the
			// parents and look again.
			for _, p := range []string{zkcoord.Parent(path), zkcoord.Parent(markPath)} {
				if err := sess.EnsurePath(ctx, p); err != nil {
					return takeover{}, err
				}
			}
		default:
			return takeover{}, err
		}
	}
}

// testHookBeforeCreate, if set, runs after the mark is read and before
// the transaction that creates a barrier is sent.
var testHookBeforeCreate func()

// createBarrier sends the transaction that creates the barrier at path
// and marks the resource held at markPath, provided the mark is still mk,
// and, in the same round trip, the read of the barrier that learns its
// token and sets its watch (ZooKeeper runs it after the transaction). The
// read counts only if the transaction succeeded; if it failed the caller
// looks at the barrier again. (A read retries over a lost connection, so
// a transaction whose reply was lost returns once the Session is back in
// contact, or has ended.)
func createBarrier(ctx context.Context, sess *zkcoord.Session, path, markPath, owner string, gen int64, mk mark) (barrierLook, error) {
	data := mustJSON(barrierInfo{Client: owner, Generation: gen, Clean: mk.released()})
	var (
		b       barrierLook
		got     []byte
		readErr error
	)
	res, err := sess.MultiThen(ctx, []zkcoord.Op{mk.take(markPath), zkcoord.CreateOp(path, data, zkcoord.FlagEphemeral)},
		func(ctx context.Context) { got, b.st, b.w, readErr = sess.GetW(ctx, path) })
	if err != nil || readErr != nil {
		return barrierLook{}, err
	}
	b.ok = true
	b.info, b.mine = barrierOf(sess, owner, b.st, got)
	if b.info.Clean && len(res) > 0 && mk.remade(res[0].Stat) {
		b.info.Clean = false
	}
	return b, nil
}

// barrierLook is what lookAtBarrier found.
type barrierLook struct {
	ok   bool // the barrier exists
	st   *zkcoord.Stat
	w    <-chan zkcoord.Event
	mine bool        // it is this client's
	info barrierInfo // its data, if mine
	mark mark        // the handover mark, read alongside unless created
}

// lookAtBarrier reads the barrier at path with a watch: whether it exists,
// its stat, the watch, and whether it is this client's. After a create
// that may have succeeded the node is read with its data, which tell
// whose it is, in one round trip; otherwise its existence is watched (a
// missing node must be watched too), the handover mark at markPath is read
// in the same round trip, and only a node of this Session is read again.
func lookAtBarrier(ctx, settle context.Context, sess *zkcoord.Session, path, markPath, owner string,
	created bool) (barrierLook, error) {
	var b barrierLook
	if created {
		data, st, w, err := sess.GetW(ctx, path)
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
			return b, nil // not created after all: no watch needed, it creates next
		case err != nil:
			return b, err
		}
		b.info, b.mine = barrierOf(sess, owner, st, data)
		b.ok, b.st, b.w = true, st, w
		return b, nil
	}
	var err, markErr error
	elect.Parallel(
		func() { b.ok, b.st, b.w, err = sess.ExistsW(ctx, path) },
		func() { b.mark, markErr = readMark(ctx, sess, markPath) },
	)
	if err != nil {
		return barrierLook{}, err
	}
	if markErr != nil {
		return barrierLook{}, markErr
	}
	if !b.ok {
		return b, nil
	}
	b.info, b.mine, err = ownBarrier(settle, sess, path, owner, b.st)
	return b, err
}

// barrierOf reports whether a barrier read with its data belongs to this
// client: its Session, and its client id in the data (several clients may
// share one Session). It returns the data decoded.
func barrierOf(sess *zkcoord.Session, owner string, st *zkcoord.Stat, data []byte) (barrierInfo, bool) {
	var bi barrierInfo
	mine := st.EphemeralOwner == sess.ID() && json.Unmarshal(data, &bi) == nil && bi.Client == owner
	return bi, mine
}

// ownBarrier reports whether the existing barrier with stat st belongs to
// this client: its Session, and its client id in the data (several clients
// may share one Session). It returns the data decoded.
func ownBarrier(ctx context.Context, sess *zkcoord.Session, path, owner string, st *zkcoord.Stat) (barrierInfo, bool, error) {
	if st.EphemeralOwner != sess.ID() {
		return barrierInfo{}, false, nil
	}
	data, st2, err := sess.Get(ctx, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return barrierInfo{}, false, nil
	}
	if err != nil {
		return barrierInfo{}, false, err
	}
	bi, mine := barrierOf(sess, owner, st2, data)
	return bi, mine && st2.Czxid == st.Czxid, nil
}

// releaseBarrier deletes the barrier at path if it is still the one with
// the given token, and in the same transaction marks the resource
// released at markPath, or, if the resource was removed (removed), deletes
// the mark; a barrier that is gone, or that belongs to a later owner, is
// left alone. A barrier whose takeover was not served (slot.served: given
// back during its lock-delay) leaves the mark "held", and the next owner
// waits, since the owner before this one may still be paused
// (model/handover.pml -DMARK_CANCELLED); the transaction only checks the
// mark then.
//
// The mark guards the delete: the transaction requires it at version
// held, as this barrier's take left it. A barrier has a fixed name and
// every barrier has version 0, so between the read of the barrier and
// the delete, a barrier deleted by hand and created again by the next
// owner would otherwise be deleted instead, and marked released: that
// owner would lose the resource behind its back, and the one after it
// would not wait. The next owner's take moves the mark, so the
// transaction fails, and the next read finds a barrier of another token.
// A mark that is missing or was changed by hand while the barrier is
// still this one's is not written: the barrier goes alone.
func releaseBarrier(ctx context.Context, sess *zkcoord.Session, path, markPath string, token int64, held int32, removed, served bool) error {
	r := newRelease(path, markPath, held, removed, served)
	for {
		ok, st, err := sess.Exists(ctx, path) // retries while disconnected
		if err != nil {
			return fmt.Errorf("rebalance: delete barrier %s: %w", path, err)
		}
		if !ok || st.Czxid != token {
			return nil
		}
		if done, err := r.try(ctx, sess, st.Version); done || err != nil {
			return err
		}
	}
}

// release is the transaction of releaseBarrier.
type release struct {
	path    string
	markOp  zkcoord.Op // guards the delete, and may write the mark
	guarded bool       // the mark is there to guard (and maybe to be written)
}

func newRelease(path, markPath string, held int32, removed, served bool) *release {
	r := &release{path: path, markOp: zkcoord.CheckOp(markPath, held), guarded: true}
	switch {
	case served && removed:
		r.markOp = forgetOp(markPath, held)
	case served:
		r.markOp = releaseOp(markPath, held)
	}
	return r
}

// try sends the transaction for the barrier read at version; done reports
// that there is nothing left to delete.
func (r *release) try(ctx context.Context, sess *zkcoord.Session, version int32) (done bool, err error) {
	ops := []zkcoord.Op{zkcoord.DeleteOp(r.path, version)}
	if r.guarded {
		ops = append(ops, r.markOp)
	}
	res, err := sess.Multi(ctx, ops...)
	switch {
	case err == nil:
		return true, nil
	case r.guarded && len(res) == 2 && (errors.Is(res[1].Error, zkcoord.ErrNoNode) || errors.Is(res[1].Error, zkcoord.ErrBadVersion)):
		// The mark is not as the take left it: someone took the resource
		// since (then the barrier is gone, and the next read says so), or
		// the mark is missing or was changed by hand: the barrier goes
		// alone.
		r.guarded = false
		return false, nil
	case errors.Is(err, zkcoord.ErrNoNode):
		return true, nil
	case errors.Is(err, zkcoord.ErrBadVersion), zkcoord.IsRetryable(err):
		return false, nil // changed, or the reply was lost: look again
	default:
		return true, fmt.Errorf("rebalance: delete barrier %s: %w", r.path, err)
	}
}

// watchBarrier reports evBarrierLost if the barrier with token at path is
// deleted or replaced (by someone else: the member cancels ctx before
// deleting its own) while ctx lives, or if it can no longer be watched
// while ctx and the Session live: an error of an unexpected kind means the
// ownership is lost, and the event carries the error, since the barrier
// may still be this client's.
func (m *member) watchBarrier(ctx context.Context, s *slot, path string, w <-chan zkcoord.Event) {
	defer m.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w:
			if !ok || ev.Type == zkcoord.EventNotWatching {
				return // the Session ended: the member handles that
			}
		}
		ok, st, w2, err := m.rereadBarrier(ctx, s.res, path)
		if err != nil {
			if ctx.Err() != nil || m.sess.Err() != nil {
				return // the slot or the Session ended: the member handles that
			}
			// Without a watch a deletion would go unnoticed: the barrier
			// can no longer be vouched for.
			m.send(evBarrierLost{res: s.res, attempt: s.attempt, err: err})
			return
		}
		if ok && st.Czxid == s.a.Token {
			w = w2
			continue
		}
		m.send(evBarrierLost{res: s.res, attempt: s.attempt})
		return
	}
}

// rereadBarrier reads the barrier at path again with a watch (retrying
// over connection loss), unless a test's fault hook fails the read.
func (m *member) rereadBarrier(ctx context.Context, res, path string) (bool, *zkcoord.Stat, <-chan zkcoord.Event, error) {
	if f := m.opts.barrierFault; f != nil {
		if err := f(res); err != nil {
			return false, nil, nil, err
		}
	}
	return m.sess.ExistsW(ctx, path)
}
