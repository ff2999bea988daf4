// Package fifo is an unbounded first-in first-out queue with a wake-up
// channel, for handing events from a goroutine that must never block (a
// connection's callback, a state machine) to one that may be slow; Feed
// is the one way events reach a channel a caller passed in (an option's
// WithEvents), and Relay the one way a caller of ours reads such a
// channel with a function.
package fifo

import (
	"context"
	"sync"
)

// Queue is safe for concurrent use. Its zero value is not usable; use New.
type Queue[T any] struct {
	mu     sync.Mutex
	items  []T
	notify chan struct{}
}

// New returns an empty queue.
func New[T any]() *Queue[T] {
	return &Queue[T]{notify: make(chan struct{}, 1)}
}

// Push appends v without blocking.
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Ready receives a value after one or more Pushes; then PopAll.
func (q *Queue[T]) Ready() <-chan struct{} { return q.notify }

// PopAll removes and returns everything queued, oldest first.
func (q *Queue[T]) PopAll() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// Forward delivers queued values to out, in order, until it has delivered
// one for which last reports true, or ctx ends; then it calls done and
// closes out.
func (q *Queue[T]) Forward(ctx context.Context, out chan<- T, last func(T) bool, done func()) {
	defer close(out)
	defer done()
	for {
		select {
		case <-q.notify:
		case <-ctx.Done():
			return
		}
		for _, v := range q.PopAll() {
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
			if last(v) {
				return
			}
		}
	}
}
