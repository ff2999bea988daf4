package lock

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
)

// Downgrade turns the write lock held through this value into a read lock,
// without a moment in which the lock is free: no writer can take it in
// between, and readers waiting behind the write lock get in beside the new
// read lock. It returns the read lease; the write lease ends, its Err
// reporting ErrReleased. RUnlock (or Release on the new lease) releases
// the read lock. It fails with ErrNotHeld if this value holds no write
// lock.
//
// The read node takes the write node's place in the order, as Curator's
// InterProcessReadWriteLock places the read lock of a write holder since
// version 5.5 (CURATOR-621): it is created without a sequence number,
// named <path>/_c_<uuid>-__READ__<the write node's sequence number>, so
// every client, Curator's and Kazoo's too, sorts it where the write node
// was, before every writer that waits. It is created and the write node
// deleted in one transaction: one round trip, and never both nodes at once.
//
// If the transaction fails because the write node is gone (or the Session
// ended), the write lease is lost: the error wraps ErrLost and the cause.
// If ctx ends while the transaction is in flight, Downgrade returns an
// error wrapping zkcoord.ErrOutcomeUnknown: the write lease then either
// goes on (its Done open) or has ended, and the read lock it turned into
// is released in the background.
func (rw *RWMutex) Downgrade(ctx context.Context) (*Lease, error) {
	l, err := rw.slot.swap(kindWrite, kindRead, func(w *Lease) (*Lease, error) {
		return w.swapTo(ctx, rw.readInPlaceOf(w), rw.read.data)
	})
	if errors.Is(err, ErrNotHeld) {
		return nil, fmt.Errorf("lock: downgrade on %s: %w", rw.path, err)
	}
	return l, err
}

// readInPlaceOf names the read node that takes the place of the write
// lease w: protected, with the order key of w's node.
func (rw *RWMutex) readInPlaceOf(w *Lease) string {
	c, _ := rwContender(zkcoord.Base(w.path))
	return zkcoord.Join(rw.path, zkcoord.ProtectedPrefix+uuid.NewString()+"-"+readName+c.Key)
}

// swap replaces the held lease of kind from by one of kind to, which
// replace returns. It fails with ErrNotHeld unless the slot holds a live
// lease of kind from and nothing else is under way.
func (s *slot) swap(from, to kind, replace func(*Lease) (*Lease, error)) (*Lease, error) {
	s.mu.Lock()
	l := s.held
	if s.busy || l == nil || s.kind != from || l.ended() {
		s.mu.Unlock()
		return nil, ErrNotHeld
	}
	s.busy = true
	s.mu.Unlock()
	return s.fill(to, func() (*Lease, error) { return replace(l) })
}

// swap asks a Lease's goroutine to hand the lease over to node, a new
// ephemeral node holding data, created in the transaction that deletes the
// lease's node.
type swap struct {
	node string
	data []byte
	res  chan swapResult // buffered: the goroutine never waits for the caller
}

type swapResult struct {
	next *Lease
	err  error
}

// swapTo hands the lease over to node (see swap) and returns the lease of
// node. The lease ends released.
func (l *Lease) swapTo(ctx context.Context, node string, data []byte) (*Lease, error) {
	sw := swap{node: node, data: data, res: make(chan swapResult, 1)}
	select {
	case l.swaps <- sw:
	case <-l.finished:
		return nil, fmt.Errorf("lock: downgrade %s: %w: %w", l.path, ErrNotHeld, l.Err())
	case <-ctx.Done():
		return nil, fmt.Errorf("lock: downgrade %s: %w", l.path, ctx.Err())
	}
	select {
	case r := <-sw.res:
		return r.next, r.err
	case <-ctx.Done():
		// The transaction is on its way: whatever it did, the caller
		// gets no lease from it.
		go func() {
			if r := <-sw.res; r.next != nil {
				r.next.releaseAsync()
			}
		}()
		return nil, fmt.Errorf("lock: downgrade %s: %w: %w", l.path, zkcoord.ErrOutcomeUnknown, ctx.Err())
	}
}

// swapNode runs sw on the lease's goroutine, and reports whether the lease
// ended: handed over, or lost.
func (l *Lease) swapNode(sw swap) bool {
	next, err := l.replace(sw.node, sw.data)
	switch {
	case err == nil:
		l.released()
	case errors.Is(err, zkcoord.ErrNoNode):
		// The lease's node is gone (with it, perhaps, its directory).
		err = lost(ErrNodeDeleted)
		l.end(err)
	case l.sess.Err() != nil:
		err = lost(l.sess.Err())
		l.end(err)
	}
	if err != nil {
		err = fmt.Errorf("lock: downgrade %s: %w", l.path, err)
	}
	sw.res <- swapResult{next, err}
	return l.ended()
}

// replace creates node and deletes the lease's node in one transaction,
// and returns the new node's lease. A transaction whose reply is lost is
// settled by the new node: its name is unique, and the transaction is
// atomic, so the node there, ephemeral and this Session's, means done.
func (l *Lease) replace(node string, data []byte) (*Lease, error) {
	// A ctx without Done: the calls end with the Session at the latest.
	ctx := context.Background()
	create := zkcoord.Write{Kind: zkcoord.WriteCreate, Path: node, Data: data, Flags: zkcoord.FlagEphemeral}
	for {
		_, err := l.sess.Multi(ctx, zkcoord.CreateOp(node, data, zkcoord.FlagEphemeral), zkcoord.DeleteOp(l.path, -1))
		if err == nil {
			return newLease(l.sess, node, nil, false), nil
		}
		if !zkcoord.IsRetryable(err) {
			return nil, err
		}
		found, serr := zkcoord.Settle(ctx, l.sess, create, err)
		switch {
		case serr != nil:
			return nil, serr
		case found.Done:
			return newLease(l.sess, node, nil, false), nil
		}
		// Not applied: send it again.
	}
}
