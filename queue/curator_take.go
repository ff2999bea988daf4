package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// curatorQueue is the engine of the queues in Curator's layouts: it puts
// items under their layout's names, lists them in their layout's order,
// and takes them by deleting them or, with a lock path, by claiming them
// first (through the claimer WorkQueue uses).
type curatorQueue struct {
	sess   *zkcoord.Session
	path   string
	lock   string // the lock path; "" when takers delete to take
	layout layout
	claims *claimer // with a lock path

	pending backlog[string]
	spread  spreader // after a lost race
	warned  atomic.Bool
}

func newCuratorQueue(sess *zkcoord.Session, path string, l layout, opts []Option) (*curatorQueue, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	q := &curatorQueue{sess: sess, path: path, layout: l, lock: lockPathOf(opts)}
	if q.lock != "" {
		if err := recipe.Validate(sess, q.lock); err != nil {
			return nil, fmt.Errorf("queue: lock path: %w", err)
		}
		if q.lock == q.path {
			return nil, fmt.Errorf("queue: lock path %s: %w: it must differ from the queue's", q.lock, zkcoord.ErrInvalidPath)
		}
		q.claims = &claimer{sess: sess, path: path, entries: path, taken: q.lock, ensureDirs: q.ensure}
	}
	return q, nil
}

// ensure creates the queue node and the lock node as Curator does before
// it first uses them: persistent nodes with missing parents as
// containers. A SimpleDistributedQueue's node is a container itself.
func (q *curatorQueue) ensure(ctx context.Context) error {
	if q.layout == simpleLayout {
		return q.sess.EnsureContainers(ctx, q.path)
	}
	for _, p := range []string{q.path, q.lock} {
		if p == "" {
			continue
		}
		if err := recipe.EnsureNode(ctx, q.sess, p, nil, 0); err != nil {
			return err
		}
	}
	return nil
}

// putItems puts items in one node, in Curator's framing; none is
// ErrBatch.
func (q *curatorQueue) putItems(ctx context.Context, prefix string, items [][]byte) error {
	if len(items) == 0 {
		return fmt.Errorf("queue: put to %s: %w", q.path, ErrBatch)
	}
	return q.put(ctx, prefix, encodeItems(items))
}

// put creates an item named prefix plus the sequence number. With a lock
// path the create goes with a receipt under the lock path, which settles
// a lost reply, so the item is added exactly once; without one, a lost
// reply fails with ErrOutcomeUnknown. Once the create is sent, its outcome
// is awaited even if ctx ends, for as long as the Session lives.
func (q *curatorQueue) put(ctx context.Context, prefix string, data []byte) error {
	item := zkcoord.Join(q.path, prefix)
	if q.lock != "" {
		receipt := zkcoord.Join(q.lock, zkcoord.ProtectedPrefix+uuid.NewString()+"-"+receiptName)
		if _, err := putOnce(ctx, q.sess, item, receipt, data, q.ensure); err != nil {
			return fmt.Errorf("queue: put to %s: %w", q.path, err)
		}
		return nil
	}
	octx := context.WithoutCancel(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("queue: put to %s: %w", q.path, err)
		}
		_, err := q.sess.Create(octx, item, data, zkcoord.FlagSequence)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zkcoord.ErrNoNode):
			if err := q.ensure(ctx); err != nil {
				return fmt.Errorf("queue: put to %s: %w", q.path, err)
			}
			continue
		case zkcoord.IsRetryable(err), q.sess.Err() != nil:
			if testHookPutUnknown != nil {
				testHookPutUnknown()
			}
			return fmt.Errorf("queue: put to %s: %w: %w", q.path, ErrOutcomeUnknown, err)
		}
		return fmt.Errorf("queue: put to %s: %w", q.path, err)
	}
}

// list returns the names of the items ready to be taken, in serving order,
// leaving out foreign children, items a consumer has locked, and delay
// items not yet due. With none ready and watch set, it also returns a
// watch that fires when that may have changed (the watch is set only
// then, so that a busy queue leaves no watches behind), and when the next
// delay item is due (zero if none).
func (q *curatorQueue) list(ctx context.Context, watch bool) ([]string, <-chan zkcoord.Event, time.Time, error) {
	children, _, err := q.sess.Children(ctx, q.path)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil, time.Time{}, err
	}
	var locked []string
	if q.lock != "" && len(children) > 0 {
		if locked, _, err = q.sess.Children(ctx, q.lock); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, nil, time.Time{}, err
		}
	}
	ready, next := q.ready(children, locked)
	if len(ready) > 0 || !watch {
		return ready, nil, next, nil
	}
	children, w, err := watchChildren(ctx, q.sess, q.path)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	if q.lock != "" {
		var wl <-chan zkcoord.Event
		if locked, wl, err = watchChildren(ctx, q.sess, q.lock); err != nil {
			return nil, nil, time.Time{}, err
		}
		w = either(w, wl)
	}
	ready, next = q.ready(children, locked)
	return ready, w, next, nil
}

// ready picks the items out of children, leaves out those locked, sorts
// them and splits off those not yet due.
func (q *curatorQueue) ready(children, locked []string) ([]string, time.Time) {
	held := make(map[string]bool, len(locked))
	for _, l := range locked {
		held[l] = true
	}
	names := make([]string, 0, len(children))
	foreign := 0
	for _, c := range children {
		switch {
		case !strings.HasPrefix(c, q.layout.prefix()):
			foreign++
		case !held[c]:
			names = append(names, c)
		}
	}
	if foreign > 0 && !q.warned.Swap(true) {
		// Left alone, as Curator does, and said once per queue value.
		q.sess.Logger().Warn("queue: foreign nodes in a Curator queue are left alone",
			"path", q.path, "layout", q.layout.String(), "count", foreign)
	}
	q.layout.sort(names)
	return q.layout.due(names, time.Now())
}

// candidates returns the names to try next, in serving order: what is
// left of the last listing, or a new listing. With none ready it waits, if
// block is set, for a change or for the next delay item to come due;
// otherwise it returns ErrEmpty.
func (q *curatorQueue) candidates(ctx context.Context, block bool) ([]string, error) {
	if names := q.pending.pop(); len(names) > 0 {
		return names, nil
	}
	for {
		names, w, next, err := q.list(ctx, block)
		if err != nil {
			return nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
		}
		if len(names) > 0 {
			return names, nil
		}
		if !block {
			return nil, ErrEmpty
		}
		if err := q.wait(ctx, w, next); err != nil {
			return nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
		}
	}
}

// wait waits for w to fire, or until next (if not zero), or for ctx or the
// Session to end.
func (q *curatorQueue) wait(ctx context.Context, w <-chan zkcoord.Event, next time.Time) error {
	wctx := ctx
	if !next.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, next)
		defer cancel()
	}
	_, err := recipe.WaitEvent(wctx, q.sess, w)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return nil // the next delay item is due
	}
	return err
}

// keep keeps the untried rest of a listing for the next take, unless the
// layout lists afresh for every take.
func (q *curatorQueue) keep(rest []string) {
	if !q.layout.fresh() {
		q.pending.keep(rest)
	}
}

// takeDeleting takes the first item it can by reading it and deleting it
// at the version read, and returns its name and data.
func (q *curatorQueue) takeDeleting(ctx context.Context, block bool) (string, []byte, error) {
	for {
		names, err := q.candidates(ctx, block)
		if err != nil {
			return "", nil, err
		}
		for len(names) > 0 {
			name := names[0]
			data, won, err := q.remove(ctx, name)
			if err != nil {
				return "", nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
			}
			names = names[1:]
			if won {
				q.spread.won()
				q.keep(names)
				return name, data, nil
			}
			if q.layout.fresh() {
				break
			}
			names = skipAhead(names, q.spread.lost(1))
		}
	}
}

// remove reads the item name and deletes it at the version read: whoever
// deletes it has taken it. It reports false if another taker got it
// first. If the reply to the delete is lost, the item still there means
// that nothing happened, and the delete is sent again; the item gone
// cannot tell this taker's delete from another's, and remove fails with
// ErrOutcomeUnknown (the item may have been taken by this delete, and
// then it is lost). Once the delete is sent, its outcome is awaited even
// if ctx ends, for as long as the Session lives.
func (q *curatorQueue) remove(ctx context.Context, name string) ([]byte, bool, error) {
	p := zkcoord.Join(q.path, name)
	data, st, err := q.sess.Get(ctx, p)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if testHookCommit != nil {
		testHookCommit(p)
	}
	octx := context.WithoutCancel(ctx)
	for {
		err := q.sess.Delete(octx, p, st.Version)
		switch {
		case err == nil:
			return data, true, nil
		case isGone(err):
			return nil, false, nil
		case !zkcoord.IsRetryable(err):
			if q.sess.Err() != nil {
				return nil, false, fmt.Errorf("%w: delete %s: %w", ErrOutcomeUnknown, p, q.sess.Err())
			}
			return nil, false, err
		}
		if testHookDeleteUnknown != nil {
			testHookDeleteUnknown()
		}
		there := false
		err = q.sess.Retry(octx, func(ctx context.Context) error {
			if err := q.sess.Sync(ctx, q.path); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
				return err
			}
			ok, now, err := q.sess.Exists(ctx, p)
			there = ok && now.Czxid == st.Czxid
			return err
		})
		if err != nil {
			return nil, false, fmt.Errorf("%w: delete %s: %w", ErrOutcomeUnknown, p, err)
		}
		if !there {
			return nil, false, fmt.Errorf("%w: the reply to the delete of %s was lost and the item is gone, taken by this delete or another taker's", ErrOutcomeUnknown, p)
		}
	}
}

// testHookDeleteUnknown runs when a take's delete has lost its reply
// (tests only).
var testHookDeleteUnknown func()

// claimOne claims the first item it can under the lock path and decodes
// it; a corrupt item is returned in a CorruptError with its claim.
func (q *curatorQueue) claimOne(ctx context.Context, block bool) (*Claim, error) {
	if q.claims == nil {
		return nil, fmt.Errorf("queue: claim from %s: %w", q.path, ErrNoLockPath)
	}
	for {
		names, err := q.candidates(ctx, block)
		if err != nil {
			return nil, err
		}
		for len(names) > 0 {
			cs, err := q.claims.claim(ctx, names[:1])
			if err != nil {
				return nil, err
			}
			names = names[1:]
			if len(cs) == 1 {
				q.spread.won()
				q.keep(names)
				return q.decode(cs[0])
			}
			if q.layout.fresh() {
				break
			}
			names = skipAhead(names, q.spread.lost(1))
		}
	}
}

// decode reads a claimed node's items.
func (q *curatorQueue) decode(c *Claim) (*Claim, error) {
	items, err := decodeItems(c.data)
	if err != nil {
		return nil, &CorruptError{Path: zkcoord.Join(q.path, c.name), Data: c.data, Claim: c, Err: err}
	}
	c.items = items
	return c, nil
}

// take removes the item at the head of the queue and returns its items:
// by deleting it, or, with a lock path, by claiming it and acknowledging
// the claim at once.
func (q *curatorQueue) take(ctx context.Context, block bool) ([][]byte, error) {
	if q.claims == nil {
		name, data, err := q.takeDeleting(ctx, block)
		if err != nil {
			return nil, err
		}
		items, err := decodeItems(data)
		if err != nil {
			return nil, &CorruptError{Path: zkcoord.Join(q.path, name), Data: data, Err: err}
		}
		return items, nil
	}
	c, err := q.claimOne(ctx, block)
	var corrupt *CorruptError
	if errors.As(err, &corrupt) {
		c, corrupt.Claim = corrupt.Claim, nil
	} else if err != nil {
		return nil, err
	}
	// The claim is ours: finish the take whatever becomes of ctx.
	if err := c.Ack(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	if corrupt != nil {
		return nil, corrupt
	}
	return c.Items(), nil
}

// count returns the number of items, locked ones included.
func (q *curatorQueue) count(ctx context.Context) (int, error) {
	children, _, err := q.sess.Children(ctx, q.path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue: length of %s: %w", q.path, err)
	}
	n := 0
	for _, c := range children {
		if strings.HasPrefix(c, q.layout.prefix()) {
			n++
		}
	}
	return n, nil
}

// removeID removes the items whose id is id, each as a take would (with a
// lock path: locked first, and left alone if another consumer holds it),
// and returns how many it removed.
func (q *curatorQueue) removeID(ctx context.Context, id string) (int, error) {
	children, _, err := q.sess.Children(ctx, q.path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue: remove %q from %s: %w", id, q.path, err)
	}
	n := 0
	for _, name := range children {
		if got, _ := splitID(name); !strings.HasPrefix(name, itemPrefix) || got != id {
			continue
		}
		removed, err := q.removeOne(ctx, name)
		if err != nil {
			return n, fmt.Errorf("queue: remove %q from %s: %w", id, q.path, err)
		}
		if removed {
			n++
		}
	}
	return n, nil
}

// removeOne removes the item name, unless another taker has it.
func (q *curatorQueue) removeOne(ctx context.Context, name string) (bool, error) {
	if q.claims != nil {
		cs, err := q.claims.claim(ctx, []string{name})
		if err != nil || len(cs) == 0 {
			return false, err
		}
		return true, cs[0].Ack(context.WithoutCancel(ctx))
	}
	p := zkcoord.Join(q.path, name)
	err := q.sess.Delete(ctx, p, -1)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, zkcoord.ErrNoNode):
		return false, nil
	case zkcoord.IsRetryable(err):
		// Gone either way once this returns; by whose delete, unknown.
		return false, recipe.EnsureDeleted(context.WithoutCancel(ctx), q.sess, p)
	}
	return false, err
}
