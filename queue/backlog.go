package queue

import "sync"

// backlog holds what a taker's last listing left untried, in serving
// order: a taker works through one listing before it lists again, as the
// recipe advises, instead of listing the whole queue for every item. It is
// safe for concurrent use; its zero value is empty.
type backlog[T any] struct {
	mu   sync.Mutex
	rest []T
}

// pop takes what is left of the last listing.
func (b *backlog[T]) pop() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	rest := b.rest
	b.rest = nil
	return rest
}

// keep keeps the untried rest of a listing for the next take, unless
// another take has kept the rest of its own meanwhile.
func (b *backlog[T]) keep(rest []T) {
	if len(rest) == 0 {
		return
	}
	b.mu.Lock()
	if b.rest == nil {
		b.rest = rest
	}
	b.mu.Unlock()
}
