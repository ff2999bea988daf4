// Package failover runs an active/standby group on ZooKeeper in the manner
// of Hadoop's ActiveStandbyElector: at most one instance is active, and
// before an instance becomes active it fences the previous active one if
// that one did not stop cleanly.
//
// # Protocol
//
// Under the failover path live the lock, an election (package election,
// Curator LeaderLatch layout) whose leader may be active, and a persistent
// breadcrumb node naming the last active instance. An instance that wins
// the lock:
//
//  1. reads the breadcrumb; if there is one (and it is not this Run's own
//     earlier activation, which has already stopped), it runs the user's
//     fencing function against it, which must succeed, or the lock is given
//     up and the instance tries again later;
//  2. writes its own breadcrumb (id, fencing token, session, WithData) in a
//     transaction that checks it still holds the lock;
//  3. runs the user's active function with a context cancelled when the
//     lock is lost (the Session declared itself Lost, before the server can
//     expire it; or the instance was deposed) or when Run's context ends.
//
// A clean stop (Run's context ends, or the active function returns nil)
// deletes the breadcrumb, again guarded by the lock, so the next active has
// nothing to fence. Any other exit leaves it: a crash, a lost session, an
// error from the active function.
//
// Once the election's sequence counter has wrapped, its order is no longer
// creation order and no candidate may lead (see package election): an
// instance that competes then deletes its node and Run returns an error
// wrapping zkcoord.ErrSequenceWrapped; the active instance stays active.
//
// # Health
//
// With WithHealthCheck an instance stands only while it is healthy: once
// its check has failed the given number of times in a row, a standby
// withdraws from the election and an active instance steps down (its
// context ends with ErrUnhealthy; its breadcrumb stays, so the next active
// fences it, since a failing instance may be wedged rather than stopped).
// It stands again after the first check that passes. Events
// EventUnhealthy and EventHealthy say so.
//
// The lock says who may act; it cannot stop a process that paused past the
// end of its session from acting. The fencing function can (kill it, cut
// its access), and so can the token: Activation.Token grows with every
// activation, so a resource that rejects tokens older than the newest it
// has seen rejects a stale active. So can time: with WithLockDelay the
// next active waits, after an active that did not stop cleanly, before it
// fences and takes over, long enough for a paused one to wake and stop.
package failover
