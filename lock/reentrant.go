package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// ReentrantMutex is a Mutex that its holder may lock again while holding
// it, as the thread holding Curator's InterProcessMutex may. Curator keys
// re-entrance by thread; Go has no goroutine identity, so the holder names
// itself: Lock and Unlock take a holder key (a request, job or worker
// identifier), and calls with the same key are the same holder. Lock by a
// key that holds the lock only counts, without a request to ZooKeeper, and
// returns the same Lease, whose Token is the outer hold's; Unlock counts
// down, and the last one releases the node. Keys that differ contend for
// the lock as separate Mutex values do, in the Mutex's node layout, with
// Mutexes and Curator's and Kazoo's clients alike.
//
// Re-entrance is opt-in because a key shared by mistake, between two
// holders that each believe they are alone, silently lets both in: a Mutex
// refuses a second Lock with ErrAlreadyHeld instead. Lock by a key whose
// acquisition is still running in another goroutine returns ErrAlreadyHeld
// too. A held lease that ended (lost, or released through Lease.Release)
// is not re-entered: Lock returns its error and keeps the count, which
// Unlock then counts down as usual.
//
// A ReentrantMutex is safe for concurrent use.
type ReentrantMutex struct {
	path string
	c    contention

	mu    sync.Mutex
	holds map[string]*hold
}

// hold is one holder key's hold on the lock.
type hold struct {
	lease *Lease // nil while being acquired
	count int
}

// NewReentrantMutex returns a ReentrantMutex on the lock directory path,
// as NewMutex does.
func NewReentrantMutex(sess *zkcoord.Session, path string, opts ...Option) (*ReentrantMutex, error) {
	c, err := mutexContention(sess, path, opts)
	if err != nil {
		return nil, err
	}
	return &ReentrantMutex{path: path, c: c, holds: map[string]*hold{}}, nil
}

// Path returns the lock directory.
func (m *ReentrantMutex) Path() string { return m.path }

// Lock takes the lock for holder, waiting as Mutex.Lock does, or, if
// holder holds it already, counts one more hold and returns its Lease.
func (m *ReentrantMutex) Lock(ctx context.Context, holder string) (*Lease, error) {
	return m.lock(ctx, holder, false)
}

// TryLock is Lock that returns ErrLocked instead of waiting for another
// holder, as Mutex.TryLock does.
func (m *ReentrantMutex) TryLock(ctx context.Context, holder string) (*Lease, error) {
	return m.lock(ctx, holder, true)
}

func (m *ReentrantMutex) lock(ctx context.Context, holder string, try bool) (*Lease, error) {
	m.mu.Lock()
	if h, ok := m.holds[holder]; ok {
		l := h.lease
		switch {
		case l == nil:
			m.mu.Unlock()
			return nil, fmt.Errorf("lock: %s: holder %q is still acquiring it: %w", m.path, holder, ErrAlreadyHeld)
		case !l.ended():
			h.count++
			m.mu.Unlock()
			return l, nil
		}
		m.mu.Unlock()
		return nil, fmt.Errorf("lock: %s: holder %q: %w", m.path, holder, l.Err())
	}
	h := &hold{}
	m.holds[holder] = h
	m.mu.Unlock()

	l, err := m.c.acquire(ctx, try)

	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		delete(m.holds, holder)
		return nil, err
	}
	h.lease, h.count = l, 1
	return l, nil
}

// Unlock gives up one hold of holder's. The last one releases the lock,
// as Lease.Release does, and returns what Release returns. One before the
// last returns nil, or the lease's error (wrapping ErrLost) if it was
// lost. Unlock by a key that holds nothing returns ErrNotHeld.
func (m *ReentrantMutex) Unlock(ctx context.Context, holder string) error {
	m.mu.Lock()
	h, ok := m.holds[holder]
	if !ok || h.lease == nil {
		m.mu.Unlock()
		return fmt.Errorf("lock: %s: holder %q: %w", m.path, holder, ErrNotHeld)
	}
	l := h.lease
	h.count--
	last := h.count == 0
	if last {
		delete(m.holds, holder)
	}
	m.mu.Unlock()
	if last {
		return l.Release(ctx)
	}
	if l.ended() {
		if err := l.Err(); !errors.Is(err, ErrReleased) {
			return err
		}
	}
	return nil
}

// Holds returns how many holds holder has on the lock: 0 when it holds
// none (or is still acquiring its first).
func (m *ReentrantMutex) Holds(holder string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.holds[holder]; ok && h.lease != nil {
		return h.count
	}
	return 0
}
