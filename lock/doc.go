// Package lock provides distributed locks on ZooKeeper: an exclusive Mutex,
// a read/write RWMutex and a counting Semaphore, in the node layouts of
// Apache Curator's InterProcessMutex, InterProcessReadWriteLock and
// InterProcessSemaphoreV2, so that Java and Go services can share a lock
// (a Mutex and an RWMutex also share locks with Kazoo's Lock, ReadLock and
// WriteLock, and a Semaphore WithKazooLayout with Kazoo's Semaphore).
// WithLimitFrom takes a Semaphore's limit from a counter node.
//
// Lock, RLock and Acquire return a [Lease], a zkcoord.Ownership: work under
// its Context, stop when Done closes, and pass Token (or write through
// Fence) to the resource. A Session declares itself Lost before the server
// can expire it, so a holder that stops on Done has stopped before the next
// holder starts; a session ended on purpose by the server, or a process
// paused past the session timeout, can still overlap, which the fencing
// token guards against; where the resource cannot check it, [WithLockDelay]
// makes the next holder wait after a holder that left without a clean
// release (docs/protocol.md#lock-delay).
//
// A waiter watches only the contender before it: a release wakes one
// waiter. Locks are not re-entrant ([ErrAlreadyHeld]), except a [ReentrantMutex],
// by a holder key the caller passes; one path holds one
// kind of lock ([ErrOtherKind]); a contender that finds a wrapped sequence
// number refuses (zkcoord.ErrSequenceWrapped). RWMutex.Downgrade turns a
// write lock into a read lock with no moment unlocked; Revoke asks a holder
// to give its lock up; Contenders, Holders and Break show and break locks;
// a [MultiLock] and Semaphore.AcquireN take several at once, all or nothing.
// Every type is safe for concurrent use.
//
// Layouts, order, interoperability, costs and limits:
// docs/protocol.md#locks-package-lock.
package lock
