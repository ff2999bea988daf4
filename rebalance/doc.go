// Package rebalance shares resources (queues, partitions, shards, jobs)
// among the members of a group of clients through ZooKeeper: consumer-group
// behaviour for anything.
//
// Two invariants hold:
//
//  1. No Double Resource Access: no two clients ever run the same resource
//     at the same time, whatever fails.
//  2. All Resources Evenly Accessed: after every completed rebalancing each
//     resource is run by exactly one live client, and the numbers of
//     resources per client differ by at most one (with weights: are in
//     proportion to the clients' weights; with WithAllocator: are what the
//     group's function decided).
//
// # Using it
//
// A client joins a group with Start (on a caller's *zkcoord.Session) or
// StartConfig (on Sessions it opens itself, which allows WithAutoRecovery)
// and leaves it with Stop. Its Handler learns what it runs: Assigned is
// called for each resource it gains, with the resource's fencing token and a
// context that is cancelled as soon as the resource is taken away;
// Unassigned is called when the resource goes, and must return only once the
// resource is no longer used; Aborted reports the end of a client that was
// not stopped. State, ID and Assignments report the client's state.
//
// A stop that fails (Unassigned returns an error or panics) leaves the
// resource fenced, since it may still be in use: its barrier, and the
// Session that holds it, are kept, so no other client starts the
// resource, while StopFailed reports the failure and Unassigned is called
// again, with backoff, until it succeeds. Only then is the barrier deleted;
// Stop, and with StartConfig the closing of the Session, wait for it. The
// client's other resources carry on and move as usual. A resource that can
// never be stopped is released by the end of the Session, as when the
// process exits.
//
// # Weights and allocations of one's own
//
// WithWeight gives a client a capacity, advertised in its client node:
// resources are shared in proportion to the weights (clients that give
// none, also those of earlier versions, weigh 1). WithResourceWeights
// makes some resources count more. The allocation is then
// alloc.WeightedSticky, sticky in the incremental mode as without
// weights. WithAllocator replaces it with a function of the group's own
// (an alloc.Func): its result must give every resource to exactly one
// live client and list nothing else, or it is refused before anything
// moves; the allocation in force stays, the coordinator logs the refusal
// and its Client.AllocationError returns it (wrapping
// ErrAllocationRefused) until it writes a valid allocation. Every client
// of a group must be given the same functions.
//
// # Recovery
//
// A Session is one ZooKeeper session, so a client started with Start ends
// with its Session. A client started with StartConfig runs under
// zkcoord.Supervise, the recovery loop every recipe shares: each Session it
// opens carries one incarnation of the client. With WithAutoRecovery, when
// the Session is Lost or Expired, or the client hits a recoverable error on
// a live one (deposed coordinator, client node deleted, a group node
// missing), it stops every resource (Unassigned is called for each),
// Supervise closes the Session, opens a new one with the same Config, with
// backoff (WithMaxRecoveryBackoff), and the client joins again as a new
// member with a new ID; its handlers then get fresh assignments with new
// fencing tokens: nothing held before is presented as continued. A failure
// of Assigned, corrupt group data or rejected credentials end the client
// instead (a stop that fails is retried first: see above). WithRecoveryEvents passes on Supervise's events (session
// started, session ended with its cause, recovering, recovered).
//
// Operators register resources with AddResource, remove them with
// RemoveResource and list them with ListResources; Describe reports a
// group's members, coordinator, term, allocation, barrier holders and
// progress. A lost reply is settled, not guessed: an AddResource that finds
// the resource registered after its create's reply was lost fails with
// ErrResourceExists wrapped together with zkcoord.ErrOutcomeUnknown (by
// this call or another operator), and RemoveResource deletes only the
// resource node it read (by its czxid), so a resource added again
// meanwhile stays.
//
// # Protocol
//
// Under /<root>/<group> (root defaults to DefaultRoot) each client owns an
// ephemeral sequential node under clients/; the oldest is the coordinator,
// and every other client watches only its predecessor and re-lists
// clients/ periodically (WithRecheck) in case a notification is lost. The
// coordinator is elected by the same engine as package election, on this
// package's own layout. Clients are ordered by the serial order of their
// sequence numbers, so the running coordinator keeps office after the
// sequence counter wraps (see
// docs/protocol.md#sequence-numbers-and-their-wrap). The coordinator bumps the term node, watches clients/,
// resources/ and term, and after every change writes an allocation into the
// data of resources/, conditional on its term and on the version it read, so
// that a deposed coordinator can never write. Each client takes a resource
// over by creating the ephemeral barriers/<resource> node, which requires the
// previous owner's barrier to be gone (waited for with a watch), and
// deletes its barrier only after Unassigned has returned without error. The
// fencing token is the barrier's creation zxid. A client whose Session is
// lost (zkcoord declares that before the server can expire the session: the
// self-expiry of the protocol) stops every resource at once.
//
// Three modes (WithMode): Incremental, the default, moves only the resources
// that must move (a sticky allocation; the rest never pause);
// ResourceBarrier stops everything on every new allocation and restarts
// through the barriers; GlobalBarrier drives every client through
// StopActivity, check-in, ResourcesAssigned, check-out and StartConfirmed
// phases. See docs/protocol.md for the diagrams and the safety
// argument.
//
// # Concurrency
//
// A Client's methods are safe for concurrent use. Each client runs its state
// machines on goroutines of its own; Handler functions are called one at a
// time from a single goroutine. Package-level functions are safe for
// concurrent use.
package rebalance
