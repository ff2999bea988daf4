package lock

import (
	"context"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// Mutex is a distributed exclusive lock with the node layout of Apache
// Curator's InterProcessMutex: each contender creates an ephemeral
// sequential node <path>/_c_<uuid>-lock-<seq>, and the first in order
// holds the lock. Curator clients and Mutex values on the same path exclude
// each other. Kazoo's Lock nodes (<hex>__lock__<seq>) are recognised as
// contenders too; Kazoo recognises ours with extra_lock_patterns=["-lock-"].
// Lock and TryLock refuse a path that holds the contenders of an RWMutex
// or a Semaphore, with ErrOtherKind (see the package documentation).
//
// A Mutex is not re-entrant: Lock on a Mutex value that holds the lock, or
// is acquiring it in another goroutine, returns ErrAlreadyHeld at once
// instead of deadlocking. Use one Mutex value per holder; many Mutex values,
// on the same or different paths, may share one Session.
//
// A Mutex is safe for concurrent use.
type Mutex struct {
	path string
	c    contention
	slot slot
}

// NewMutex returns a Mutex on the lock directory path, which is created (as
// a container node, removed by the server once empty) on first use.
func NewMutex(sess *zkcoord.Session, path string, opts ...Option) (*Mutex, error) {
	c, err := mutexContention(sess, path, opts)
	if err != nil {
		return nil, err
	}
	return &Mutex{path: path, c: c}, nil
}

// mutexContention checks the arguments of a Mutex or a ReentrantMutex and
// returns the contention for its lock.
func mutexContention(sess *zkcoord.Session, path string, opts []Option) (contention, error) {
	o := newOptions(opts)
	if err := checkArgs(sess, path, o); err != nil {
		return contention{}, err
	}
	if err := o.onlyForSemaphore(mutexKind); err != nil {
		return contention{}, err
	}
	return contention{sess: sess, dir: path, name: mutexName, data: o.data, recognise: mutexContender, kind: mutexKind, delay: o.delay}, nil
}

// Path returns the lock directory.
func (m *Mutex) Path() string { return m.path }

// Lock waits until it holds the lock, ctx ends or the Session ends. It
// watches only the contender just before its own node, so a release wakes
// one waiter. If it fails, its node is deleted: a waiter that gives up
// leaves nothing behind.
func (m *Mutex) Lock(ctx context.Context) (*Lease, error) {
	return m.slot.lock(ctx, kindWrite, m.c, false)
}

// TryLock acquires the lock if no other client holds it or waits for it,
// and returns ErrLocked otherwise. It costs about what Lock costs when the
// lock is free.
func (m *Mutex) TryLock(ctx context.Context) (*Lease, error) {
	return m.slot.lock(ctx, kindWrite, m.c, true)
}

// Unlock releases the lock held through this Mutex: it is Release on the
// Lease that Lock returned. It returns ErrNotHeld if no lease is held, and
// the lease's error (wrapping ErrLost) if it had been lost.
func (m *Mutex) Unlock(ctx context.Context) error {
	return m.slot.release(ctx, kindWrite)
}

// kind is what a slot holds.
type kind int

const (
	kindWrite kind = iota + 1 // a Mutex, or an RWMutex's write side
	kindRead
)

// slot holds the one lease a Mutex or RWMutex value may have at a time.
type slot struct {
	mu   sync.Mutex
	busy bool // an acquisition is running
	held *Lease
	kind kind
}

// lock acquires c's lock (without waiting if try) into the slot, as one of
// kind k: the acquisition of Lock, TryLock, RLock and TryRLock.
func (s *slot) lock(ctx context.Context, k kind, c contention, try bool) (*Lease, error) {
	return s.acquire(k, func() (*Lease, error) { return c.acquire(ctx, try) })
}

// acquire runs get unless the slot is busy or holds a live lease. A lease
// that has ended (lost, or released through Lease.Release) frees the slot.
func (s *slot) acquire(k kind, get func() (*Lease, error)) (*Lease, error) {
	s.mu.Lock()
	if s.busy || (s.held != nil && !s.held.ended()) {
		s.mu.Unlock()
		return nil, ErrAlreadyHeld
	}
	s.busy, s.held = true, nil
	s.mu.Unlock()
	return s.fill(k, get)
}

// fill runs get, for which the caller has marked the slot busy, and holds
// the lease it returns, as one of kind k.
func (s *slot) fill(k kind, get func() (*Lease, error)) (*Lease, error) {
	l, err := get()

	s.mu.Lock()
	s.busy = false
	if err == nil {
		s.held, s.kind = l, k
	}
	s.mu.Unlock()
	return l, err
}

// release releases the held lease of kind k.
func (s *slot) release(ctx context.Context, k kind) error {
	s.mu.Lock()
	l := s.held
	if l == nil || s.kind != k {
		s.mu.Unlock()
		return ErrNotHeld
	}
	s.held = nil
	s.mu.Unlock()
	return l.Release(ctx)
}
