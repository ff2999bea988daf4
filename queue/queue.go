package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Errors of this package.
var (
	// ErrEmpty: the queue has no item (TryTake, Peek).
	ErrEmpty = errors.New("queue: empty")
	// ErrPriority: a priority outside [MinPriority, MaxPriority].
	ErrPriority = errors.New("queue: priority out of range")
	// ErrOutcomeUnknown: the Session ended, or the connection dropped,
	// while a write was in flight (a Queue's take, a WorkQueue's Put or
	// Ack): it may or may not have been applied.
	ErrOutcomeUnknown = errors.New("queue: outcome unknown")
	// ErrBatch: a batch take asked for fewer than one item.
	ErrBatch = errors.New("queue: batch size below one")
)

// Queue is a distributed FIFO queue of byte strings. It is safe for
// concurrent use.
type Queue struct {
	sess *zkcoord.Session
	path string
	// fresh makes takers re-read the children after losing a race for an
	// item, so that a higher-priority item put meanwhile is served first.
	fresh bool

	pending backlog[item]
	spread  spreader // after a lost race
}

// New returns the queue at path. It does no I/O; the queue node is created
// (as a container) by the first Put.
func New(sess *zkcoord.Session, path string, opts ...Option) (*Queue, error) {
	if err := checkLockless(sess, path, opts); err != nil {
		return nil, err
	}
	return &Queue{sess: sess, path: path}, nil
}

// Path returns the queue node's path.
func (q *Queue) Path() string { return q.path }

// Take removes the item at the head of the queue and returns its data,
// blocking until there is one. It returns early when ctx ends or the
// Session ends. See the package documentation for what exactly one taker
// means, and for ErrOutcomeUnknown.
func (q *Queue) Take(ctx context.Context) ([]byte, error) {
	return q.take(ctx, true)
}

// TryTake is Take without waiting: it returns ErrEmpty if the queue has no
// item.
func (q *Queue) TryTake(ctx context.Context) ([]byte, error) {
	return q.take(ctx, false)
}

// TakeN removes up to n items (at most MaxBatch) from the head of the
// queue and returns their data in serving order, blocking until there is at
// least one. It takes them in one transaction: one round trip for the
// reads, pipelined, and one for the deletes, however many items. Items
// another taker gets first are skipped, so TakeN may return fewer than n
// even when the queue holds more. Each item is taken as by Take, with the
// same guarantee (see the package documentation): if the Session ends while
// the transaction is in flight, TakeN returns an error wrapping
// ErrOutcomeUnknown and the items may be gone.
func (q *Queue) TakeN(ctx context.Context, n int) ([][]byte, error) {
	return q.takeN(ctx, n, true)
}

// TryTakeN is TakeN without waiting: it returns ErrEmpty if the queue has no
// item.
func (q *Queue) TryTakeN(ctx context.Context, n int) ([][]byte, error) {
	return q.takeN(ctx, n, false)
}

func (q *Queue) take(ctx context.Context, block bool) ([]byte, error) {
	got, err := q.takeN(ctx, 1, block)
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

func (q *Queue) takeN(ctx context.Context, n int, block bool) ([][]byte, error) {
	if n < 1 {
		return nil, fmt.Errorf("queue: take %d items from %s: %w", n, q.path, ErrBatch)
	}
	n = min(n, MaxBatch)
	for {
		items := q.pending.pop()
		var w <-chan zkcoord.Event
		if len(items) == 0 {
			var err error
			if items, w, err = q.items(ctx, block); err != nil {
				return nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
			}
		}
		listed := len(items) > 0
		for len(items) > 0 {
			k := min(n, len(items))
			got, err := q.claimN(ctx, items[:k])
			if err != nil {
				return nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
			}
			rest := items[k:]
			if len(got) < k {
				rest = skipAhead(rest, q.spread.lost(k)) // lost a race
			} else {
				q.spread.won()
			}
			if len(got) > 0 {
				q.keepPending(rest)
				return got, nil
			}
			if q.fresh {
				break
			}
			items = rest
		}
		if listed {
			continue // lost every race: look again
		}
		if !block {
			return nil, ErrEmpty
		}
		select {
		case <-w:
		case <-ctx.Done():
			return nil, fmt.Errorf("queue: take from %s: %w", q.path, ctx.Err())
		case <-q.sess.Done():
			return nil, fmt.Errorf("queue: take from %s: %w", q.path, q.sess.Err())
		}
	}
}

// keepPending keeps the untried rest of a listing for the next take. A
// priority queue keeps nothing: an item of higher priority may come in
// meanwhile.
func (q *Queue) keepPending(rest []item) {
	if !q.fresh {
		q.pending.keep(rest)
	}
}

// testHookList, if set, runs before every listing of the queue.
var testHookList func()

// items returns the queue's items in serving order. When there are none
// and watch is set, it also returns a watch that fires when that may have
// changed; the watch is only set in that case, so that a busy queue leaves
// no watches behind.
func (q *Queue) items(ctx context.Context, watch bool) ([]item, <-chan zkcoord.Event, error) {
	if testHookList != nil {
		testHookList()
	}
	children, _, err := q.sess.Children(ctx, q.path)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil, err
	}
	if items := parseItems(children); len(items) > 0 || !watch {
		return items, nil, nil
	}
	children, w, err := watchChildren(ctx, q.sess, q.path)
	if err != nil {
		return nil, nil, err
	}
	return parseItems(children), w, nil
}

// watchChildren lists the children of path with a watch that fires when
// they change, or when path is created (see recipe.WatchChildren).
func watchChildren(ctx context.Context, sess *zkcoord.Session, path string) ([]string, <-chan zkcoord.Event, error) {
	children, _, w, err := recipe.WatchChildren(ctx, sess, path)
	return children, w, err
}

// Peek returns the data of the item at the head of the queue without
// removing it, or ErrEmpty.
func (q *Queue) Peek(ctx context.Context) ([]byte, error) {
	for {
		items, _, err := q.items(ctx, false)
		if err != nil {
			return nil, fmt.Errorf("queue: peek at %s: %w", q.path, err)
		}
		if len(items) == 0 {
			return nil, ErrEmpty
		}
		for _, it := range items {
			data, _, err := q.sess.Get(ctx, zkcoord.Join(q.path, it.name))
			if errors.Is(err, zkcoord.ErrNoNode) {
				continue // taken meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("queue: peek at %s: %w", q.path, err)
			}
			return data, nil
		}
	}
}

// Len returns the number of items in the queue.
func (q *Queue) Len(ctx context.Context) (int, error) {
	items, _, err := q.items(ctx, false)
	if err != nil {
		return 0, fmt.Errorf("queue: length of %s: %w", q.path, err)
	}
	return len(items), nil
}
