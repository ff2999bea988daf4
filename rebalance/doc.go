// Package rebalance shares resources (queues, partitions, shards, jobs)
// among the members of a group of clients through ZooKeeper: consumer-group
// behaviour for anything. No two clients ever run the same resource at
// once, whatever fails; after every completed rebalancing each resource is
// run by exactly one live client, and the numbers of resources per client
// differ by at most one.
//
// A client joins the group at a path with Start (on a caller's
// *zkcoord.Session) or StartConfig (on Sessions it opens itself, which
// allows WithAutoRecovery: after a Session loss it stops everything and
// joins again as a new member) and leaves with Stop. Its [Handler] learns
// what it runs: Assigned for each resource it gains, with a fencing token
// and a context cancelled as soon as the resource is taken away;
// Unassigned when the resource goes, returning only once the resource is no
// longer used (a failed stop keeps the resource fenced and is retried).
//
// WithWeight gives a client a capacity and WithResourceWeights makes some
// resources count more: resources are then shared in proportion to the
// weights. WithAllocator replaces the allocation with a function of the
// group's own, whose result is checked before anything moves. Every client
// of a group must be given the same functions.
//
// Operators register resources with AddResource, remove them with
// RemoveResource and list them with ListResources; Describe reports a
// group's members, coordinator, term, allocation, barriers and progress.
//
// The oldest client coordinates and writes each allocation, fenced by its
// term; a client starts a resource only once the previous owner's barrier
// is gone. Three modes (WithMode): Incremental (the default) moves only
// what must move, ResourceBarrier restarts everything through the
// barriers, GlobalBarrier drives all clients through phases.
// WithLockDelay makes a client wait before it starts a resource whose
// previous barrier vanished without a clean release (an expiry), so that
// an owner paused past its session stops first. A Client is
// safe for concurrent use; Handler functions are called one at a time.
//
// The protocol, its modes, recovery and the safety argument:
// docs/protocol.md#the-rebalancer-protocol-package-rebalance.
package rebalance
