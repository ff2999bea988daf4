package rebalance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// acquireBarrier creates the ephemeral barrier node at path for client
// owner, first waiting (with an existence watch, never polling) for any
// other barrier there to be deleted. It returns the barrier's fencing token
// (its czxid) and a watch on it.
//
// It returns an error only when no barrier of this client exists at path:
// the create itself is never abandoned half-way, so a cancelled acquisition
// cannot leave an orphan barrier behind.
func acquireBarrier(ctx context.Context, sess *zkcoord.Session, path, owner string, gen int64) (int64, <-chan zkcoord.Event, error) {
	data := mustJSON(barrierInfo{Client: owner, Generation: gen})
	// Once a create has been sent, its outcome is settled without regard
	// for ctx (but never beyond the Session's life).
	settle := context.WithoutCancel(ctx)
	created := false // a create may have succeeded
	unknown := false // a create's reply was lost
	free := false    // the other client's barrier was seen deleted
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
				return 0, nil, err
			}
			unknown = false
		}
		if free {
			// Seen deleted: create at once; a create that finds another
			// client's barrier looks again.
			free = false
			if err := ctx.Err(); err != nil {
				return 0, nil, err
			}
		} else {
			ok, st, w, mine, err := lookAtBarrier(c, settle, sess, path, owner, created)
			if err != nil {
				return 0, nil, err
			}
			if ok {
				if mine {
					return st.Czxid, w, nil // just created, or created by an attempt whose reply was lost
				}
				created = false
				ev, err := sess.WaitEvent(ctx, w)
				if err != nil {
					return 0, nil, err
				}
				free = ev.Type == zkcoord.EventNodeDeleted
				continue
			}
			if created {
				created = false // settled: it was not created
				if err := ctx.Err(); err != nil {
					return 0, nil, err
				}
			}
		}
		_, err := sess.Create(settle, path, data, zkcoord.FlagEphemeral)
		switch {
		case err == nil:
			created = true // look at the node to learn the token
		case zkcoord.IsRetryable(err):
			created, unknown = true, true // look at the node to learn the outcome
		case errors.Is(err, zkcoord.ErrNodeExists):
		case errors.Is(err, zkcoord.ErrNoNode):
			if err := sess.EnsurePath(ctx, zkcoord.Parent(path)); err != nil {
				return 0, nil, err
			}
		default:
			return 0, nil, err
		}
	}
}

// lookAtBarrier reads the barrier at path with a watch: whether it exists,
// its stat, the watch, and whether it is this client's. After a create
// that may have succeeded the node is read with its data, which tell
// whose it is, in one round trip; otherwise its existence is watched (a
// missing node must be watched too) and only a node of this Session is
// read again.
func lookAtBarrier(ctx, settle context.Context, sess *zkcoord.Session, path, owner string,
	created bool) (ok bool, st *zkcoord.Stat, w <-chan zkcoord.Event, mine bool, err error) {
	if created {
		data, st, w, err := sess.GetW(ctx, path)
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
			return false, nil, nil, false, nil // not created after all: no watch needed, it creates next
		case err != nil:
			return false, nil, nil, false, err
		}
		return true, st, w, barrierOf(sess, owner, st, data), nil
	}
	ok, st, w, err = sess.ExistsW(ctx, path)
	if err != nil || !ok {
		return ok, st, w, false, err
	}
	mine, err = ownBarrier(settle, sess, path, owner, st)
	return ok, st, w, mine, err
}

// barrierOf reports whether a barrier read with its data belongs to this
// client: its Session, and its client id in the data (several clients may
// share one Session).
func barrierOf(sess *zkcoord.Session, owner string, st *zkcoord.Stat, data []byte) bool {
	var bi barrierInfo
	return st.EphemeralOwner == sess.ID() && json.Unmarshal(data, &bi) == nil && bi.Client == owner
}

// ownBarrier reports whether the existing barrier with stat st belongs to
// this client: its Session, and its client id in the data (several clients
// may share one Session).
func ownBarrier(ctx context.Context, sess *zkcoord.Session, path, owner string, st *zkcoord.Stat) (bool, error) {
	if st.EphemeralOwner != sess.ID() {
		return false, nil
	}
	data, st2, err := sess.Get(ctx, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return barrierOf(sess, owner, st2, data) && st2.Czxid == st.Czxid, nil
}

// releaseBarrier deletes the barrier at path if it is still the one with
// the given token; a barrier that is gone, or that belongs to a later
// owner, is left alone.
func releaseBarrier(ctx context.Context, sess *zkcoord.Session, path string, token int64) error {
	for {
		ok, st, err := sess.Exists(ctx, path) // retries while disconnected
		if err != nil {
			return fmt.Errorf("rebalance: delete barrier %s: %w", path, err)
		}
		if !ok || st.Czxid != token {
			return nil
		}
		err = sess.Delete(ctx, path, st.Version)
		switch {
		case err == nil, errors.Is(err, zkcoord.ErrNoNode):
			return nil
		case errors.Is(err, zkcoord.ErrBadVersion), zkcoord.IsRetryable(err):
			// changed, or the reply was lost: look again
		default:
			return fmt.Errorf("rebalance: delete barrier %s: %w", path, err)
		}
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
