package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/end"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Claim is one item a consumer holds: of a WorkQueue, or of a Curator
// queue with a lock path. It is safe for concurrent use.
type Claim struct {
	q      *claimer
	name   string
	data   []byte
	items  [][]byte // decoded from data (Curator queues); nil: data alone
	marker string
	tag    []byte // the marker's data

	ended *end.End // by Ack, Release or the end of the Session
	stop  func() bool

	own recipe.OwnContext
}

func newClaim(q *claimer, name string, data, tag []byte) *Claim {
	c := &Claim{q: q, name: name, data: data, marker: zkcoord.Join(q.taken, name), tag: tag, ended: end.New()}
	c.stop = context.AfterFunc(q.sess.Context(), func() {
		c.end(fmt.Errorf("%w: %w", ErrClaimLost, q.sess.Err()))
	})
	return c
}

// Data returns the item's node data, as stored. For a WorkQueue that is
// the item; a Curator queue's node holds its items in Curator's framing:
// use Items.
func (c *Claim) Data() []byte { return c.data }

// Items returns the items the claim holds: for a WorkQueue, Data alone; for
// a Curator queue, the items of its node (one, or all of one PutMulti, in
// order).
func (c *Claim) Items() [][]byte {
	if c.items != nil {
		return c.items
	}
	return [][]byte{c.data}
}

// Name returns the item's node name, for example "entry-100-0000000007" (a
// WorkQueue's) or "queue-0000000007" (a Curator queue's).
func (c *Claim) Name() string { return c.name }

// Done is closed when the claim ends: acknowledged, released, or lost with
// the Session (Err says which). After a loss the item is visible to other
// consumers once the server has expired the Session; stop working on it.
func (c *Claim) Done() <-chan struct{} { return c.ended.Done() }

// Err returns nil while the claim is held, then why it ended.
func (c *Claim) Err() error { return c.ended.Err() }

func (c *Claim) end(err error) {
	if c.ended.End(err) {
		c.stop()
	}
}

var (
	errAcked    = errors.New("queue: claim acknowledged")
	errReleased = errors.New("queue: claim released")
)

// testHookAckUnknown runs when an acknowledgement has lost its reply
// (tests only).
var testHookAckUnknown func()

// Ack acknowledges the item: it deletes the item and the claim in one
// transaction, so an item is acknowledged at most once. It fails with an
// error wrapping ErrClaimLost if the claim had ended. Once the transaction
// is sent, Ack waits for its outcome even if ctx ends, for at most as long
// as the Session lives (a lost reply is settled by the claim: it exists
// until the acknowledgement commits); if the Session ends first, Ack fails
// with an error wrapping ErrOutcomeUnknown (it may have been applied).
func (c *Claim) Ack(ctx context.Context) error {
	if err := c.held(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("queue: ack %s: %w", c.name, err)
	}
	entry := zkcoord.Join(c.q.entries, c.name)
	err := c.q.sess.Retry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		_, err := c.q.sess.Multi(ctx, zkcoord.DeleteOp(entry, -1), zkcoord.DeleteOp(c.marker, -1))
		if !zkcoord.IsRetryable(err) {
			return err
		}
		if testHookAckUnknown != nil {
			testHookAckUnknown()
		}
		// Committed or not? The claim is there until it commits.
		mine, _, rerr := c.q.holds(ctx, c.marker, c.tag)
		switch {
		case rerr != nil:
			return rerr
		case mine:
			return err // not applied: send it again
		}
		// Only the claim's holder deletes the entry with the claim.
		ok, _, rerr := c.q.sess.Exists(ctx, entry)
		switch {
		case rerr != nil:
			return rerr
		case ok:
			return fmt.Errorf("%w: %s was deleted", zkcoord.ErrNoNode, c.marker)
		}
		return nil
	})
	if err != nil {
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
			err = fmt.Errorf("%w: %w", ErrClaimLost, err)
			c.end(err)
		case c.q.sess.Err() != nil:
			// The Session ended with the transaction in flight: it may
			// have been applied. The claim is gone either way.
			c.end(fmt.Errorf("%w: %w", ErrClaimLost, err))
			err = fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
		}
		return fmt.Errorf("queue: ack %s: %w", c.name, err)
	}
	c.end(errAcked)
	return nil
}

// Release gives the item back without acknowledging it: another consumer
// (or this one) takes it next.
func (c *Claim) Release(ctx context.Context) error {
	if err := c.held(); err != nil {
		return err
	}
	if err := recipe.EnsureDeleted(ctx, c.q.sess, c.marker); err != nil {
		return fmt.Errorf("queue: release %s: %w", c.name, err)
	}
	c.end(errReleased)
	return nil
}

// held returns why the claim cannot be used any more, or nil.
func (c *Claim) held() error {
	select {
	case <-c.ended.Done():
		if err := c.Err(); errors.Is(err, ErrClaimLost) {
			return err
		}
		return fmt.Errorf("queue: %s: %w", c.name, c.Err())
	default:
		return nil
	}
}

// Context returns a context cancelled when the claim ends (acknowledged, released or lost), with Err as its cause:
// do the owner's work under it.
func (c *Claim) Context() context.Context { return c.own.Get(c.Done(), c.Err) }
