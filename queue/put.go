package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/zkcoord/zkcoord"
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
// "claims/_c_<uuid>-put" of the putter's Session, so the receipt tells
// whether the create committed. (The receipt is deleted by this Queue's
// next Put; the last one goes with the Session.) The path returned is then
// empty if the item was taken before the Put could find it. Once a create
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

// create creates item (sequential) and receipt in one transaction, which
// also deletes the receipts of earlier Puts.
func (q *Queue) create(ctx context.Context, item, receipt, prefix string, data []byte) (string, error) {
	octx := context.WithoutCancel(ctx) // an outcome, once asked for, is awaited
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		stale := q.takeReceipts()
		ops := []any{
			zkcoord.CreateOp(item, data, zkcoord.FlagSequence),
			zkcoord.CreateOp(receipt, nil, zkcoord.FlagEphemeral),
		}
		for _, r := range stale {
			ops = append(ops, zkcoord.DeleteOp(r, -1))
		}
		res, err := q.sess.Multi(octx, ops...)
		switch {
		case err == nil:
			q.addReceipts(receipt)
			return res[0].String, nil
		case zkcoord.IsRetryable(err):
			if testHookPutUnknown != nil {
				testHookPutUnknown()
			}
			committed, err := q.committed(octx, receipt)
			if err != nil {
				q.addReceipts(stale...)
				return "", err
			}
			if committed {
				q.addReceipts(receipt)
				return q.find(octx, prefix)
			}
			q.addReceipts(stale...)
			continue
		}
		// The transaction failed as a whole; say why.
		q.addReceipts(stale...)
		if len(res) == len(ops) {
			for i := 2; i < len(ops); i++ {
				if errors.Is(res[i].Error, zkcoord.ErrNoNode) {
					q.dropReceipt(stale[i-2]) // already gone
				}
			}
			if errors.Is(res[0].Error, zkcoord.ErrNoNode) || errors.Is(res[1].Error, zkcoord.ErrNoNode) {
				if err := q.sess.EnsureContainers(ctx, zkcoord.Parent(receipt)); err != nil {
					return "", err
				}
				continue
			}
			if hasNoNode(res[2:]) {
				continue
			}
		}
		return "", err
	}
}

func hasNoNode(res []zkcoord.MultiResponse) bool {
	for _, r := range res {
		if errors.Is(r.Error, zkcoord.ErrNoNode) {
			return true
		}
	}
	return false
}

// committed finds out, after a lost reply, whether the transaction that
// creates receipt committed: the receipt, ephemeral and deleted only by
// this Queue, exists if and only if it did.
func (q *Queue) committed(ctx context.Context, receipt string) (bool, error) {
	var ok bool
	err := q.sess.Retry(ctx, func(ctx context.Context) error {
		if err := q.sess.Sync(ctx, q.path); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return err
		}
		var st *zkcoord.Stat
		var err error
		ok, st, err = q.sess.Exists(ctx, receipt)
		ok = ok && st.EphemeralOwner == q.sess.ID()
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

// takeReceipts returns the receipts due for deletion, which the caller
// deletes or gives back.
func (q *Queue) takeReceipts() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	rs := q.receipts
	q.receipts = nil
	return rs
}

func (q *Queue) addReceipts(rs ...string) {
	q.mu.Lock()
	q.receipts = append(q.receipts, rs...)
	q.mu.Unlock()
}

func (q *Queue) dropReceipt(r string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.receipts {
		if x == r {
			q.receipts = append(q.receipts[:i], q.receipts[i+1:]...)
			return
		}
	}
}
