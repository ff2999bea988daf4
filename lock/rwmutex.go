package lock

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// RWMutex is a distributed read/write lock with the node layout of Apache
// Curator's InterProcessReadWriteLock: readers create
// <path>/_c_<uuid>-__READ__<seq>, writers <path>/_c_<uuid>-__WRIT__<seq>,
// and contenders are ordered by sequence number. A writer holds the lock
// when it is first; a reader holds it when no writer is before it, so many
// readers hold it at once while no writer does. Curator clients and
// RWMutex values on the same path exclude each other as they should. Both
// sides refuse a path that holds the contenders of a Mutex or a Semaphore,
// with ErrOtherKind (see the package documentation).
//
// Waiting is herd-free: a writer watches the contender just before it, a
// reader the nearest writer before it.
//
// An RWMutex value holds at most one lease at a time, read or write: a
// second RLock or Lock through the same value returns ErrAlreadyHeld (so
// neither re-entry nor upgrading can deadlock). Use one value per holder.
// Downgrade turns the write lock it holds into a read lock without letting
// another writer in between; there is no upgrade.
//
// An RWMutex is safe for concurrent use.
type RWMutex struct {
	path  string
	read  contention
	write contention
	slot  slot
}

// NewRWMutex returns an RWMutex on the lock directory path.
func NewRWMutex(sess *zkcoord.Session, path string, opts ...Option) (*RWMutex, error) {
	o := newOptions(opts)
	if err := checkArgs(sess, path, o); err != nil {
		return nil, err
	}
	if err := o.onlyForMutex(rwKind); err != nil {
		return nil, err
	}
	if err := o.onlyForSemaphore(rwKind); err != nil {
		return nil, err
	}
	return &RWMutex{
		path:  path,
		read:  contention{sess: sess, dir: path, name: readName, data: o.data, recognise: rwContender, kind: rwKind},
		write: contention{sess: sess, dir: path, name: writeName, data: o.data, recognise: rwContender, kind: rwKind},
	}, nil
}

// Path returns the lock directory.
func (rw *RWMutex) Path() string { return rw.path }

// Lock waits until it holds the write lock, ctx ends or the Session ends.
func (rw *RWMutex) Lock(ctx context.Context) (*Lease, error) {
	return rw.slot.lock(ctx, kindWrite, rw.write, false)
}

// TryLock acquires the write lock if nobody holds or waits for the lock,
// and returns ErrLocked otherwise.
func (rw *RWMutex) TryLock(ctx context.Context) (*Lease, error) {
	return rw.slot.lock(ctx, kindWrite, rw.write, true)
}

// Unlock releases the write lock held through this value.
func (rw *RWMutex) Unlock(ctx context.Context) error {
	return rw.slot.release(ctx, kindWrite)
}

// RLock waits until it holds a read lock, ctx ends or the Session ends.
// Readers queue behind writers that came first, so writers do not starve.
func (rw *RWMutex) RLock(ctx context.Context) (*Lease, error) {
	return rw.slot.lock(ctx, kindRead, rw.read, false)
}

// TryRLock acquires a read lock if no writer holds or waits for the lock,
// and returns ErrLocked otherwise.
func (rw *RWMutex) TryRLock(ctx context.Context) (*Lease, error) {
	return rw.slot.lock(ctx, kindRead, rw.read, true)
}

// RUnlock releases the read lock held through this value.
func (rw *RWMutex) RUnlock(ctx context.Context) error {
	return rw.slot.release(ctx, kindRead)
}
