package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// SimpleQueue is a FIFO queue in the layout of Curator's
// SimpleDistributedQueue (offer, take, poll, peek): items are persistent
// sequential nodes "qn-<seq>" holding the item's bytes as they are, under
// a container node, served in the order of their names as strings. A
// taker reads the first item and deletes it at the version read: whoever
// deletes it has taken it, so no item is returned twice; if the reply to
// the delete is lost and the item is then gone, the Take fails with an
// error wrapping ErrOutcomeUnknown, and the item may be lost (at most
// once). It is safe for concurrent use.
type SimpleQueue struct {
	q *curatorQueue
}

// NewSimple returns the queue at path in the layout of Curator's
// SimpleDistributedQueue. It does no I/O.
func NewSimple(sess *zkcoord.Session, path string, opts ...Option) (*SimpleQueue, error) {
	if err := noLockPath(path, opts); err != nil {
		return nil, err
	}
	q, err := newCuratorQueue(sess, path, simpleLayout, nil)
	if err != nil {
		return nil, err
	}
	return &SimpleQueue{q}, nil
}

// Path returns the queue node's path.
func (s *SimpleQueue) Path() string { return s.q.path }

// Put appends an item (Curator's offer), creating the queue node if need
// be. A Put whose reply is lost fails with an error wrapping
// ErrOutcomeUnknown: the item may or may not have been added. Once its
// create is sent, Put waits for the outcome even if ctx ends, for as long
// as the Session lives.
func (s *SimpleQueue) Put(ctx context.Context, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	return s.q.put(ctx, simplePrefix, data)
}

// Take removes the item at the head of the queue and returns it, waiting
// until there is one (Curator's take), or until ctx or the Session ends.
func (s *SimpleQueue) Take(ctx context.Context) ([]byte, error) {
	_, data, err := s.q.takeDeleting(ctx, true)
	return data, err
}

// TryTake is Take without waiting (Curator's poll): it returns ErrEmpty if
// the queue has no item.
func (s *SimpleQueue) TryTake(ctx context.Context) ([]byte, error) {
	_, data, err := s.q.takeDeleting(ctx, false)
	return data, err
}

// Peek returns the item at the head of the queue without removing it, or
// ErrEmpty.
func (s *SimpleQueue) Peek(ctx context.Context) ([]byte, error) {
	for {
		names, _, _, err := s.q.list(ctx, false)
		if err != nil {
			return nil, fmt.Errorf("queue: peek at %s: %w", s.q.path, err)
		}
		if len(names) == 0 {
			return nil, ErrEmpty
		}
		for _, name := range names {
			data, _, err := s.q.sess.Get(ctx, zkcoord.Join(s.q.path, name))
			if errors.Is(err, zkcoord.ErrNoNode) {
				continue // taken meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("queue: peek at %s: %w", s.q.path, err)
			}
			return data, nil
		}
	}
}

// Len returns the number of items in the queue.
func (s *SimpleQueue) Len(ctx context.Context) (int, error) { return s.q.count(ctx) }
