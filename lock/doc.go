// Package lock provides distributed locks on ZooKeeper: an exclusive
// [Mutex], a read/write [RWMutex] and a counting [Semaphore].
//
// # Compatible with Curator and Kazoo
//
// The node layouts are those of Apache Curator's recipes, so Java services
// using Curator and Go services using this package can share a lock:
//
//	Mutex      InterProcessMutex          <path>/_c_<uuid>-lock-<seq>
//	RWMutex    InterProcessReadWriteLock  <path>/_c_<uuid>-__READ__<seq>
//	                                      <path>/_c_<uuid>-__WRIT__<seq>
//	Semaphore  InterProcessSemaphoreV2    <path>/locks/_c_<uuid>-lock-<seq>
//	                                      <path>/leases/_c_<uuid>-lease-<seq>
//
// Contenders are ordered exactly as Curator orders them (the Curator order
// of zkcoord's sequence-node module), because a lock is only safe when
// every client of it, Java or Go, agrees on who is first: by comparing, as
// Java strings, the text after the last occurrence of the lock name
// ("lock-", "__READ__"/"__WRIT__"). That order stops being creation order
// once the directory's sequence counter wraps past 2147483647: a contender
// created after the wrap gets a negative number, which sorts before the
// holder's. So Lock, RLock and Acquire (and their Try forms) take no lock
// in a directory that holds a contender with a negative number, whoever
// created it: they delete their own node and fail with an error wrapping
// zkcoord.ErrSequenceWrapped that names the directory. A holder keeps its
// lock. The directory is a container: once every contender has left it,
// the server deletes it and the next contender starts its counter at 0
// again. See docs/protocol.md#sequence-numbers-and-their-wrap.
//
// A Mutex also recognises the nodes of Kazoo's Lock
// (<hex>__lock__<seq>), and Kazoo recognises a Mutex's nodes when created
// with extra_lock_patterns=["-lock-"], so Go and Python clients can share
// a Mutex. Kazoo orders the sequence suffixes it recognises as Python
// strings, which for these ASCII suffixes is the same order. Its pattern
// (an optional "-" and ten digits) misses the suffixes "-999999999" to
// "-000000001" of a wrapped counter, which a Mutex sees. Curator orders
// Kazoo's nodes by their whole name, which is wrong: do not let Curator and
// Kazoo clients share a lock.
//
// An RWMutex likewise recognises Kazoo's ReadLock (<hex>__rlock__<seq>)
// and WriteLock (<hex>__lock__<seq>) nodes; Kazoo recognises an RWMutex's
// nodes when its ReadLock is created with extra_lock_patterns=["__WRIT__"]
// and its WriteLock with extra_lock_patterns=["__READ__", "__WRIT__"].
// A Semaphore shares leases with Kazoo's Semaphore when created
// WithKazooLayout, and otherwise refuses a path that Kazoo's layout uses.
// WithLimitFrom takes a Semaphore's limit from a counter node, as Curator's
// InterProcessSemaphoreV2 takes it from a SharedCount.
//
// Children of a lock directory that are not contenders (other names,
// persistent nodes, nodes with children) are ignored. Curator treats them
// as contenders that sort by their whole name; ignoring them never lets two
// holders in at once, because both libraries order the real contenders the
// same way.
//
// # One kind of lock per path
//
// A Mutex, an RWMutex (its read and write sides are one kind) and a
// Semaphore are three kinds of lock with different layouts, and none sees
// the others' nodes: on one path they would not exclude each other. So
// each refuses a path that holds contenders of another kind, whichever
// library created them: it deletes its own node and returns an error
// wrapping [ErrOtherKind] that names both kinds and the other's node. Of
// two contenders of different kinds, the one that came last refuses (two
// that start together may both refuse), so two kinds never hold one path
// at once. Curator's and Kazoo's contenders of the same kind count as
// usual (Kazoo's Lock and WriteLock nodes are the same, and both a Mutex
// and an RWMutex take them for their own). Curator and Kazoo clients do not
// make this check: one that arrives after a lock of another kind is taken
// is not stopped. A Semaphore's subdirectories locks/ and leases/ stay for
// a while after its last lease is released (the server removes empty
// containers periodically); without contenders in them they do not stand
// in a Mutex's or an RWMutex's way. With contenders they do, whoever put
// them there: do not nest another lock at <path>/locks or <path>/leases.
//
// # Holding a lock
//
// Lock, RLock and Acquire return a [Lease]. Its Done channel closes when
// the lease ends: released, or lost because the Session ended (Lost,
// Expired or Closed) or because another client deleted its node. Its Err
// then tells which. A Session declares itself Lost from the time of the
// last server response, before the server can expire it and hand the lock
// to someone else, so a holder that stops when Done closes has stopped
// before the next holder starts. A brief disconnection (Session state
// Suspended, then Reconnected) does not end a lease.
//
// That order has a limit, and no client library can lift it. If the server
// ends the session on purpose (an operator, or a test harness, closing it
// from another connection), it deletes the node at once, and the next
// contender may acquire before the old holder hears anything: its Done
// closes, with zkcoord.ErrSessionExpired, but possibly after someone else
// has acquired. The same holds for a process paused for longer than the
// session timeout (a long GC, a stopped VM). For resources that must never
// see two holders, pass the lease's fencing [Lease.Token] (the creation
// zxid of its node, larger for every later holder) to the resource, or
// write through zkcoord's guarded writes with [Lease.Fence], which fail
// with zkcoord.ErrNotOwner once the node is gone.
//
// # Waiting
//
// A waiting contender watches exactly one node: the contender just before
// it (for a read lock, the nearest writer before it). A release wakes only
// the next waiter: no herd effect. A contender whose ctx ends, or that
// fails, deletes its node; a node whose create reply was lost with the
// connection is found again (zkcoord.Session.CreateProtected) and deleted
// as well, so no orphan node is left to block the lock.
//
// # Not re-entrant
//
// Locks are not re-entrant. Lock on a Mutex value that holds the lock, or is
// acquiring it in another goroutine, returns [ErrAlreadyHeld] instead of
// deadlocking; an RWMutex value holds one lease at a time, read or write.
// Use one Mutex or RWMutex value per holder. A Semaphore value may hold any
// number of leases. A [ReentrantMutex] is re-entrant by a holder key that
// the caller passes, since Go has no goroutine identity to key it by.
//
// # Downgrading
//
// RWMutex.Downgrade turns a held write lock into a read lock with no
// moment unlocked: in one transaction it creates a read node that sorts
// where the write node was and deletes the write node, so readers waiting
// behind the writer get in and writers waiting behind it wait on. The read
// node is named as Curator's InterProcessReadWriteLock names a write
// holder's read node since Curator 5.5 (CURATOR-621), and Curator orders
// it the same way. Curator before 5.5 gives a write holder's read lock a
// new sequence number, behind any writer that waits, which then takes the
// lock as soon as the write lock is released: a Curator client that
// downgrades needs Curator 5.5 or later.
//
// # Seeing and breaking locks
//
// Mutex.Contenders, RWMutex.Contenders and Semaphore.Holders list who
// holds and who waits, in order, with each node's session, fencing token,
// creation time and data, Curator's and Kazoo's contenders included.
// Mutex.Break deletes the holder's node: the holder's Lease closes Done
// with ErrNodeDeleted and the next waiter takes the lock.
//
// # Revocation
//
// Revoke and Mutex.Revoke ask a holder to give its lock up, in Curator's
// layout: they write "__REVOKE__" into the holder's node. A Lease sees the
// request on Revoked (a Curator holder made revocable sees it too, and
// Curator's Revoker reaches a Lease); the holder decides, and the lease
// stays held, its guarded writes working, until it is released.
//
// # Several locks at once
//
// A [MultiLock] takes several Mutexes all or nothing, like Curator's
// InterProcessMultiLock, always in the order of their paths, so that
// MultiLocks over overlapping sets never deadlock. Its [MultiLease] ends
// as soon as any one of its leases ends.
//
// Semaphore.AcquireN takes several leases of a Semaphore all or nothing,
// in Curator's layout, and returns them as a MultiLease too: released
// together, or one by one.
//
// # Cost
//
// An uncontended Lock and Unlock cost three round trips, as Curator's do:
// the create; then the listing of the directory together with the read of
// the new node's stat (its fencing token) and loss watch; then the delete.
// Lock returns as soon as the listing shows it holds the lock; Token and
// Fence wait for the stat if it is still on its way. Many locks may share
// one Session; nothing in this package serialises them.
//
// # Concurrency
//
// Mutex, RWMutex, Semaphore, MultiLock, Lease and MultiLease are safe for
// concurrent use.
package lock
