// Package barrier implements ZooKeeper barriers.
//
// A [Barrier] is the simple barrier of the ZooKeeper recipes: a node whose
// existence holds processes back. One process sets it, any number wait on
// it, and all of them proceed when it is removed. The node layout is the
// same as Apache Curator's DistributedBarrier (a plain node at the barrier
// path), so Java and Go processes can share a barrier.
//
// A [DoubleBarrier] synchronises the start and the end of a computation
// among a fixed number of members: Enter returns once that many members
// have entered, and Leave returns once every member has left. Its layout is
// that of Curator's DistributedDoubleBarrier: each member is an ephemeral
// node named by a random UUID under the barrier path, and the member that
// completes the group creates a persistent node named "ready". Enter and
// Leave follow Curator's algorithm step by step, so Java and Go members can
// share one double barrier.
//
// Children of a double barrier's path other than "ready" and UUID-named
// members are ignored (Curator counts every child on entry; with no foreign
// children the two agree).
//
// # Loss
//
// Every blocking call returns when its context ends or when the Session
// ends, wrapping the Session's error (zkcoord.ErrSessionExpired,
// ErrSessionLost or ErrSessionClosed). A double-barrier member is an
// ephemeral node: when its Session ends, the member leaves the barrier,
// and the others carry on without it. Members waiting in Enter still wait
// for a full group of live members (a newcomer may take its place);
// members in Leave stop waiting for it, but still wait for every other
// member to leave. (Curator's Leave, when the member that ended was the
// lowest, lets members that had already deleted their nodes return while
// others are still in; this package waits for them.)
//
// # Concurrency
//
// A Barrier is safe for concurrent use. A DoubleBarrier is one member: its
// Enter and Leave must not be called concurrently with each other.
package barrier
