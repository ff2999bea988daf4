package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Test hooks: testHookCommit runs just before a taker sends the multi that
// deletes an item, testHookResolved after a taker has found out the outcome
// of a multi whose reply was lost.
var (
	testHookCommit   func(itemPath string)
	testHookResolved func(outcome)
)

// claim tries to take one item. It reports false, without error, if another
// taker got it first.
func (q *Queue) claim(ctx context.Context, it item) ([]byte, bool, error) {
	itemPath := zkcoord.Join(q.path, it.name)
	claims := zkcoord.Join(q.path, claimsNode)
	marker := zkcoord.Join(claims, it.name)
	for {
		data, st, err := q.sess.Get(ctx, itemPath)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if testHookCommit != nil {
			testHookCommit(itemPath)
		}
		// From here on the outcome matters more than ctx: the delete may
		// commit, and then the item is ours. Wait for the outcome as long as
		// the Session lives.
		octx := context.WithoutCancel(ctx)
		res, err := q.sess.Multi(octx,
			zkcoord.DeleteOp(itemPath, st.Version),
			zkcoord.CreateOp(marker, nil, zkcoord.FlagEphemeral))
		switch {
		case err == nil:
			q.dropMarker(octx, marker)
			return data, true, nil
		case len(res) == 2 && isGone(res[0].Error):
			return nil, false, nil
		case len(res) == 2 && errors.Is(res[1].Error, zkcoord.ErrNoNode):
			if err := q.sess.EnsureContainers(ctx, claims); err != nil {
				return nil, false, err
			}
			continue
		case zkcoord.IsRetryable(err):
			taken, err := q.resolve(octx, itemPath, marker)
			if err != nil {
				return nil, false, err
			}
			if testHookResolved != nil {
				testHookResolved(taken)
			}
			switch taken {
			case ours:
				q.dropMarker(octx, marker)
				return data, true, nil
			case theirs:
				return nil, false, nil
			}
			// nobody's: the multi never ran; try again.
		default:
			if q.sess.Err() != nil {
				return nil, false, fmt.Errorf("%w: %w", ErrOutcomeUnknown, q.sess.Err())
			}
			return nil, false, err
		}
	}
}

func isGone(err error) bool {
	return errors.Is(err, zkcoord.ErrNoNode) || errors.Is(err, zkcoord.ErrBadVersion)
}

type outcome int

const (
	nobodys outcome = iota
	ours
	theirs
)

// resolve finds out, after a lost reply, whether our take committed: our
// marker exists if and only if it did.
func (q *Queue) resolve(ctx context.Context, itemPath, marker string) (outcome, error) {
	var o outcome
	err := q.sess.Retry(ctx, func(ctx context.Context) error {
		if err := q.sess.Sync(ctx, q.path); err != nil {
			return err
		}
		ok, st, err := q.sess.Exists(ctx, marker)
		if err != nil {
			return err
		}
		if ok && st.EphemeralOwner == q.sess.ID() {
			o = ours
			return nil
		}
		ok, _, err = q.sess.Exists(ctx, itemPath)
		if err != nil {
			return err
		}
		if ok {
			o = nobodys
		} else {
			o = theirs
		}
		return nil
	})
	if err != nil && q.sess.Err() != nil {
		return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, q.sess.Err())
	}
	return o, err
}

// dropMarker deletes our marker. Failing that, it goes with the Session.
func (q *Queue) dropMarker(ctx context.Context, marker string) {
	err := q.sess.EnsureDeleted(ctx, marker)
	if err != nil {
		q.sess.Logger().Debug("queue: could not delete claim marker", "path", marker, "err", err)
	}
}
