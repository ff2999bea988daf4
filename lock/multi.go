package lock

import (
	"context"
	"errors"
	"fmt"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"slices"
	"strings"
	"sync"
)

// MultiLock takes several Mutexes all or nothing, like Curator's
// InterProcessMultiLock: Lock returns once it holds every one of them, and
// if it cannot take one it releases those it took. It takes them in a
// fixed order, sorted by path, whatever order they were given in, so two
// MultiLocks over overlapping sets cannot deadlock each other (Curator
// takes them in the order given).
//
// A MultiLock is safe for concurrent use; like a Mutex it is not
// re-entrant.
type MultiLock struct {
	mutexes []*Mutex
}

// NewMultiLock returns a MultiLock over the given Mutexes, which must be on
// distinct paths.
func NewMultiLock(mutexes ...*Mutex) (*MultiLock, error) {
	if len(mutexes) == 0 {
		return nil, errors.New("lock: a MultiLock needs at least one Mutex")
	}
	sorted := slices.Clone(mutexes)
	for _, m := range sorted {
		if m == nil {
			return nil, errors.New("lock: nil Mutex in a MultiLock")
		}
	}
	slices.SortFunc(sorted, func(a, b *Mutex) int { return strings.Compare(a.path, b.path) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].path == sorted[i-1].path {
			return nil, fmt.Errorf("lock: %s appears twice in a MultiLock", sorted[i].path)
		}
	}
	return &MultiLock{mutexes: sorted}, nil
}

// Lock waits until it holds every lock, ctx ends or the Session ends. On
// failure it has released whatever it took and returns the error of the
// lock it could not take.
func (m *MultiLock) Lock(ctx context.Context) (*MultiLease, error) {
	leases := make([]*Lease, 0, len(m.mutexes))
	for _, mu := range m.mutexes {
		l, err := mu.Lock(ctx)
		if err != nil {
			releaseAll(leases)
			return nil, fmt.Errorf("lock: multi-lock on %s: %w", mu.path, err)
		}
		leases = append(leases, l)
	}
	return newMultiLease(leases), nil
}

// releaseAll releases leases in reverse order, in the background if the
// Session is slow: each Lease deletes its node as long as its Session lives.
func releaseAll(leases []*Lease) {
	for _, l := range slices.Backward(leases) {
		l.releaseAsync()
	}
}

// MultiLease holds several leases as one: what a MultiLock holds (one
// Lease per lock, in lock order), or the leases of Semaphore.AcquireN.
type MultiLease struct {
	leases []*Lease
	done   chan struct{}
	own    recipe.OwnContext

	mu  sync.Mutex
	err error
}

func newMultiLease(leases []*Lease) *MultiLease {
	ml := &MultiLease{leases: leases, done: make(chan struct{})}
	cases := make(chan *Lease, len(leases))
	for _, l := range leases {
		go func() { <-l.Done(); cases <- l }()
	}
	go func() {
		first := <-cases // the first lease to end ends them all
		ml.mu.Lock()
		ml.err = first.Err()
		ml.mu.Unlock()
		close(ml.done)
		for range len(leases) - 1 {
			<-cases
		}
	}()
	return ml
}

// Leases returns the held leases: a MultiLock's sorted by lock path, a
// Semaphore's in no particular order. Each has its own fencing token, and
// each may be released on its own (Lease.Release), which ends the
// MultiLease.
func (ml *MultiLease) Leases() []*Lease { return slices.Clone(ml.leases) }

// Done is closed as soon as any of the leases ends: the MultiLease no
// longer holds every lease.
func (ml *MultiLease) Done() <-chan struct{} { return ml.done }

// Err returns nil while every lease is held, then the error of the first
// lease that ended (ErrReleased, or one wrapping ErrLost).
func (ml *MultiLease) Err() error {
	ml.mu.Lock()
	defer ml.mu.Unlock()
	return ml.err
}

// Release releases every lease, in reverse lock order, and returns their
// errors joined (nil if each was held until released).
func (ml *MultiLease) Release(ctx context.Context) error {
	var errs []error
	for _, l := range slices.Backward(ml.leases) {
		if err := l.Release(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Context returns a context cancelled when the multi-lease ends (as soon as any of its leases ends), with Err as its cause:
// do the owner's work under it.
func (ml *MultiLease) Context() context.Context { return ml.own.Get(ml.Done(), ml.Err) }
