package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// Kazoo's LockingQueue layout.
const (
	workEntries = "entries"
	workTaken   = "taken"
	workPrefix  = "entry-"
	// DefaultWorkPriority is the priority of an item Put without one, as in
	// Kazoo.
	DefaultWorkPriority = 100
)

// ErrClaimLost: a claim ended before it was acknowledged (its Session
// ended, or someone deleted the claim node); the item is visible to other
// consumers again.
var ErrClaimLost = errors.New("queue: claim lost")

// WorkQueue is an at-least-once work queue in the layout of Kazoo's
// LockingQueue: a consumer claims an item, processes it, and acknowledges
// it; an item whose consumer dies before acknowledging becomes visible
// again. See the package documentation. It is safe for concurrent use.
type WorkQueue struct {
	claimer

	mu      sync.Mutex
	pending []string // entry names listed but not yet tried, in order
	spread  spreader // after a lost race
}

// NewWork returns the work queue at path. It does no I/O.
func NewWork(sess *zkcoord.Session, path string, opts ...Option) (*WorkQueue, error) {
	if err := checkLockless(sess, path, opts); err != nil {
		return nil, err
	}
	q := &WorkQueue{claimer: claimer{
		sess: sess, path: path,
		entries: zkcoord.Join(path, workEntries),
		taken:   zkcoord.Join(path, workTaken),
	}}
	q.ensureDirs = q.ensure
	return q, nil
}

// Path returns the queue node's path.
func (q *WorkQueue) Path() string { return q.path }

// Put adds an item with a priority from MinPriority to MaxPriority (lower
// first; DefaultWorkPriority is Kazoo's default). Put is sent once: if its
// reply is lost with the connection, it fails with an error wrapping
// ErrOutcomeUnknown and the item may or may not have been added (Kazoo's
// layout leaves no room in the name to find it again).
func (q *WorkQueue) Put(ctx context.Context, data []byte, priority int) error {
	if priority < MinPriority || priority > MaxPriority {
		return fmt.Errorf("%w: %d", ErrPriority, priority)
	}
	if data == nil {
		data = []byte{}
	}
	name := fmt.Sprintf("%s/%s%03d-", q.entries, workPrefix, priority)
	for {
		_, err := q.sess.Create(ctx, name, data, zkcoord.FlagSequence)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zkcoord.ErrNoNode):
			if err := q.ensure(ctx); err != nil {
				return err
			}
			continue
		case zkcoord.IsRetryable(err):
			return fmt.Errorf("queue: put to %s: %w: %w", q.path, ErrOutcomeUnknown, err)
		}
		return fmt.Errorf("queue: put to %s: %w", q.path, err)
	}
}

// ensure creates the queue's two directories.
func (q *WorkQueue) ensure(ctx context.Context) error {
	for _, p := range []string{q.entries, q.taken} {
		if err := q.sess.EnsurePath(ctx, p); err != nil {
			return fmt.Errorf("queue: %w", err)
		}
	}
	return nil
}

// Take claims the first unclaimed item, waiting until there is one, ctx
// ends or the Session ends. The item stays in the queue, invisible to other
// consumers, until the Claim is acknowledged (Ack) or given back (Release),
// or the Session ends.
func (q *WorkQueue) Take(ctx context.Context) (*Claim, error) {
	return q.take(ctx, true)
}

// TryTake is Take without waiting: it returns ErrEmpty if no item is
// unclaimed.
func (q *WorkQueue) TryTake(ctx context.Context) (*Claim, error) {
	return q.take(ctx, false)
}

// TakeN claims up to n unclaimed items (at most MaxBatch) in serving order,
// waiting until there is at least one. It creates their claims in one
// transaction and reads the items with pipelined requests, so a batch costs
// about two round trips however many items it holds. Items another
// consumer claims first are skipped, so TakeN may return fewer than n. Each
// Claim is then acknowledged or released on its own, as one from Take.
func (q *WorkQueue) TakeN(ctx context.Context, n int) ([]*Claim, error) {
	return q.takeN(ctx, n, true)
}

// TryTakeN is TakeN without waiting: it returns ErrEmpty if no item is
// unclaimed.
func (q *WorkQueue) TryTakeN(ctx context.Context, n int) ([]*Claim, error) {
	return q.takeN(ctx, n, false)
}

func (q *WorkQueue) take(ctx context.Context, block bool) (*Claim, error) {
	cs, err := q.takeN(ctx, 1, block)
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

func (q *WorkQueue) takeN(ctx context.Context, n int, block bool) ([]*Claim, error) {
	if n < 1 {
		return nil, fmt.Errorf("queue: take %d items from %s: %w", n, q.path, ErrBatch)
	}
	n = min(n, MaxBatch)
	for {
		names, w, err := q.next(ctx, n, block)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			if !block {
				return nil, ErrEmpty
			}
			if _, err := recipe.WaitEvent(ctx, q.sess, w); err != nil {
				return nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
			}
			continue
		}
		cs, err := q.claim(ctx, names)
		switch {
		case err != nil:
		case len(cs) < len(names):
			// Lost a race: skip ahead, as a Queue's taker does.
			span := q.spread.lost(len(names))
			q.mu.Lock()
			q.pending = skipAhead(q.pending, span)
			q.mu.Unlock()
		default:
			q.spread.won()
		}
		if len(cs) > 0 || err != nil {
			return cs, err
		}
	}
}

// next returns up to n entries to try. Consumers keep the sorted list of
// entries from one listing and work through it before listing again (the
// recipe's advice, which keeps a deep queue from costing a listing per
// item). With an empty list it returns none and a watch that fires when an
// entry is added or a claim is given up.
func (q *WorkQueue) next(ctx context.Context, n int, watch bool) ([]string, <-chan zkcoord.Event, error) {
	q.mu.Lock()
	if len(q.pending) > 0 {
		k := min(n, len(q.pending))
		names := q.pending[:k:k]
		q.pending = q.pending[k:]
		q.mu.Unlock()
		return names, nil, nil
	}
	q.mu.Unlock()
	entries, taken, w, err := q.list(ctx, watch)
	if err != nil {
		return nil, nil, err
	}
	free := slices.DeleteFunc(entries, func(e string) bool {
		_, claimed := slices.BinarySearch(taken, e)
		return claimed || !strings.HasPrefix(e, workPrefix)
	})
	slices.SortFunc(free, seq.CompareText) // Kazoo's order: the names as strings
	if len(free) == 0 {
		return nil, w, nil
	}
	k := min(n, len(free))
	q.mu.Lock()
	q.pending = append(q.pending, free[k:]...)
	q.mu.Unlock()
	return free[:k:k], nil, nil
}

// list reads the entries and the claims, with a watch on both if asked.
func (q *WorkQueue) list(ctx context.Context, watch bool) (entries, taken []string, w <-chan zkcoord.Event, err error) {
	for {
		var we, wt <-chan zkcoord.Event
		entries, _, we, err = recipe.Read(ctx, q.entries, watch, q.sess.Children, q.sess.ChildrenW)
		if err == nil {
			taken, _, wt, err = recipe.Read(ctx, q.taken, watch, q.sess.Children, q.sess.ChildrenW)
		}
		if errors.Is(err, zkcoord.ErrNoNode) {
			if err := q.ensure(ctx); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("queue: list %s: %w", q.path, err)
		}
		slices.Sort(taken)
		return entries, taken, either(we, wt), nil
	}
}

// either returns a channel that receives the first event of a or b.
func either(a, b <-chan zkcoord.Event) <-chan zkcoord.Event {
	if a == nil || b == nil {
		return nil
	}
	out := make(chan zkcoord.Event, 1)
	go func() {
		select {
		case ev := <-a:
			out <- ev
		case ev := <-b:
			out <- ev
		}
	}()
	return out
}

// Len returns the number of items in the queue, claimed ones included.
func (q *WorkQueue) Len(ctx context.Context) (int, error) {
	entries, _, err := q.sess.Children(ctx, q.entries)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue: %w", err)
	}
	return len(entries), nil
}
