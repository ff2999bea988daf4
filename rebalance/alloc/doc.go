// Package alloc computes how a rebalancer shares resources among clients,
// and encodes the result for the resources znode.
//
// The package is pure: no ZooKeeper, no clocks, no randomness. Every function
// is deterministic for the same inputs, whatever the order of the input
// slices, and treats ids as opaque strings ordered bytewise (sequence-numbered
// client names such as "c_0000000123" therefore sort by sequence).
//
// # Allocations
//
// An [Assignment] maps a client id to the sorted ids of the resources it owns.
// Assignments made here are balanced: with N clients and M resources, M mod N
// clients own ceil(M/N) resources and the others floor(M/N). Every client
// given to [Balanced] or [Sticky] appears as a key, possibly with an empty
// (non-nil) list, so a client can tell "I own nothing" from "I am unknown".
//
// [Balanced] forgets the past: clients sorted by id receive contiguous runs of
// the sorted resources, larger shares first. [Sticky] keeps every resource
// with its previous owner whenever the balance allows it, so that the fewest
// resources move (the minimum is reached exactly; see [Sticky]). [Moved]
// lists what changed owner between two assignments and [Diff] what one client
// lost and gained. [Assignment.Check] is an independent validity check used
// by tests.
//
// # Weights and allocations of one's own
//
// [WeightedSticky] and [WeightedBalanced] share resources in proportion to
// the clients' weights (capacities), counting each resource's weight
// (cost): a client's load minus its heaviest resource never exceeds its
// share, and with resources of weight 1 every client owns its share
// rounded down or up, with the fewest moves. With every weight 1 they are
// Sticky and Balanced.
//
// A [Func] computes an assignment of the caller's own; [Run] calls it and
// [Validate] checks its result: every resource given to exactly one live
// client, nothing else listed. A result that fails is refused whole.
// [Assignment.Covers] tells whether an allocation in force still matches
// a group, whatever its shares.
//
// # Encoding
//
// A [Record] (coordinator term, generation, assignment) is what a coordinator
// writes into the resources znode. [Encode] produces a compact, versioned,
// checksummed, deflate-compressed form: 1,000 clients and 10,000 resources
// with realistic ids ("c_0000000123", "resource-000123") take about 0.5 KB
// (507 bytes) when balanced from scratch, 1.1 KB after 60 clients were
// replaced one by one, and 16 KB (16,409 bytes), the worst case, when owners
// are scattered at random: far below ZooKeeper's 1 MB node limit;
// anything larger than [MaxEncodedSize] fails with [ErrTooLarge]. [Decode]
// turns empty data into the zero Record (a fresh group) and anything it does
// not recognise (foreign, truncated or corrupt data) into an error wrapping
// [ErrCorrupt]; it never panics and bounds the memory it allocates.
//
// # Concurrency
//
// Functions are safe for concurrent use. An Assignment is a plain map: it may
// be read concurrently but not mutated while others read it. Functions never
// modify their arguments and never return slices aliasing them.
package alloc
