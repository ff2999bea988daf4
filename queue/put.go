package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// receiptName follows the protected prefix in the name of a Put's receipt.
const receiptName = "put"

// isReceipt reports whether a child of the claims node is a Put's receipt
// (rather than a taker's marker, named after an item).
func isReceipt(name string) bool {
	return zkcoord.IsProtected(name) && zkcoord.StripProtected(name) == receiptName
}

// testHookPutUnknown runs when a Put has lost the reply to its create and
// starts finding out whether it committed (tests only).
var testHookPutUnknown func()

// Put appends an item and returns the path of its node. Data larger than
// the Session's limit is refused with an error wrapping
// zkcoord.ErrTooLarge.
//
// A Put adds its item exactly once, even when the reply to its create is
// lost with the connection and a taker takes the item before the putter is
// connected again: the item is created together with an ephemeral receipt
// "claims/_c_<uuid>-put" of the putter's Session, which tells whether the
// create committed, and which is deleted (in the background) once the Put
// knows. The path returned is empty if the item was taken before the Put
// could find it. Once a create
// has been sent, Put waits for its outcome even if ctx ends, for at most as
// long as the Session lives: it returns ctx's error only when the item was
// not added. If the Session ends while the create is in flight, Put
// returns its error and the item may or may not have been added.
func (q *Queue) Put(ctx context.Context, data []byte) (string, error) {
	return q.put(ctx, -1, data)
}

func (q *Queue) put(ctx context.Context, priority int, data []byte) (string, error) {
	if data == nil {
		data = []byte{}
	}
	prefix := zkcoord.ProtectedPrefix + uuid.NewString() + "-"
	item := zkcoord.Join(q.path, prefix+itemName(priority))
	receipt := zkcoord.Join(q.path, claimsNode, prefix+receiptName)
	path, err := q.create(ctx, item, receipt, prefix, data)
	if err != nil {
		return "", fmt.Errorf("queue: put to %s: %w", q.path, err)
	}
	return path, nil
}

// create creates item (sequential) and receipt in one transaction, then
// finds the item if the reply was lost.
func (q *Queue) create(ctx context.Context, item, receipt, prefix string, data []byte) (string, error) {
	path, err := putOnce(ctx, q.sess, item, receipt, data, func(ctx context.Context) error {
		return q.sess.EnsureContainers(ctx, zkcoord.Parent(receipt))
	})
	if err != nil || path != "" {
		return path, err
	}
	return q.find(context.WithoutCancel(ctx), prefix)
}

// putOnce creates item (sequential) with data and receipt (ephemeral) in
// one transaction, and deletes the receipt in the background once it knows
// the outcome. A transaction whose reply is lost is settled by the
// receipt, and sent again if it did not commit; then putOnce returns ""
// for the item's path, which the reply would have told. ensure creates
// the parents a transaction found missing. Once a transaction is sent,
// its outcome is awaited even if ctx ends, for as long as the Session
// lives.
func putOnce(ctx context.Context, sess *zkcoord.Session, item, receipt string, data []byte, ensure func(context.Context) error) (string, error) {
	octx := context.WithoutCancel(ctx) // an outcome, once asked for, is awaited
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		res, err := sess.Multi(octx,
			zkcoord.CreateOp(item, data, zkcoord.FlagSequence),
			zkcoord.CreateOp(receipt, nil, zkcoord.FlagEphemeral))
		switch {
		case err == nil:
			recipe.EnsureDeletedLater(sess, receipt)
			return res[0].String, nil
		case zkcoord.IsRetryable(err):
			if testHookPutUnknown != nil {
				testHookPutUnknown()
			}
			committed, err := committed(octx, sess, receipt)
			if err != nil {
				return "", err
			}
			if !committed {
				continue // nothing happened: try again
			}
			recipe.EnsureDeletedLater(sess, receipt)
			return "", nil
		case len(res) == 2 && (errors.Is(res[0].Error, zkcoord.ErrNoNode) || errors.Is(res[1].Error, zkcoord.ErrNoNode)):
			if err := ensure(ctx); err != nil {
				return "", err
			}
		default:
			return "", err
		}
	}
}

// committed finds out, after a lost reply, whether the transaction that
// creates receipt committed: the receipt, ephemeral and deleted only once
// the Put knows the outcome, exists if and only if it did.
func committed(ctx context.Context, sess *zkcoord.Session, receipt string) (bool, error) {
	var ok bool
	err := sess.Retry(ctx, func(ctx context.Context) error {
		if err := sess.Sync(ctx, zkcoord.Parent(receipt)); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return err
		}
		var st *zkcoord.Stat
		var err error
		ok, st, err = sess.Exists(ctx, receipt)
		ok = ok && st.EphemeralOwner == sess.ID()
		return err
	})
	return ok, err
}

// find returns the path of the item with prefix, or "" if it was taken.
func (q *Queue) find(ctx context.Context, prefix string) (string, error) {
	var found string
	err := q.sess.Retry(ctx, func(ctx context.Context) error {
		children, _, err := q.sess.Children(ctx, q.path)
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return err
		}
		for _, c := range children {
			if strings.HasPrefix(c, prefix) {
				found = zkcoord.Join(q.path, c)
			}
		}
		return nil
	})
	return found, err
}
