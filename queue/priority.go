package queue

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// PriorityQueue is a distributed queue that serves items by priority (lower
// first), and items of equal priority in FIFO order. It is safe for
// concurrent use.
type PriorityQueue struct {
	q *Queue
}

// NewPriority returns the priority queue at path. It does no I/O.
func NewPriority(sess *zkcoord.Session, path string, opts ...Option) (*PriorityQueue, error) {
	q, err := New(sess, path, opts...)
	if err != nil {
		return nil, err
	}
	q.fresh = true
	return &PriorityQueue{q: q}, nil
}

// Path returns the queue node's path.
func (p *PriorityQueue) Path() string { return p.q.path }

// Put adds an item with a priority in [MinPriority, MaxPriority]; lower is
// served first. It returns the path of the item's node. See Queue.Put.
func (p *PriorityQueue) Put(ctx context.Context, priority int, data []byte) (string, error) {
	if priority < MinPriority || priority > MaxPriority {
		return "", fmt.Errorf("%w: %d not in [%d, %d]", ErrPriority, priority, MinPriority, MaxPriority)
	}
	return p.q.put(ctx, priority, data)
}

// Take removes the item with the highest priority (lowest number) and
// returns its data, blocking until there is one. A taker that loses a race
// for an item re-reads the queue, so an item of higher priority put
// meanwhile is served first. See Queue.Take.
func (p *PriorityQueue) Take(ctx context.Context) ([]byte, error) { return p.q.Take(ctx) }

// TryTake is Take without waiting: it returns ErrEmpty if the queue has no
// item.
func (p *PriorityQueue) TryTake(ctx context.Context) ([]byte, error) { return p.q.TryTake(ctx) }

// TakeN takes up to n items, highest priority first, as Queue.TakeN does.
func (p *PriorityQueue) TakeN(ctx context.Context, n int) ([][]byte, error) { return p.q.TakeN(ctx, n) }

// TryTakeN is TakeN without waiting: it returns ErrEmpty if the queue has no
// item.
func (p *PriorityQueue) TryTakeN(ctx context.Context, n int) ([][]byte, error) {
	return p.q.TryTakeN(ctx, n)
}

// Peek returns the data of the item that Take would return next, without
// removing it, or ErrEmpty.
func (p *PriorityQueue) Peek(ctx context.Context) ([]byte, error) { return p.q.Peek(ctx) }

// Len returns the number of items in the queue.
func (p *PriorityQueue) Len(ctx context.Context) (int, error) { return p.q.Len(ctx) }
