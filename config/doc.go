// Package config keeps a piece of configuration in one ZooKeeper node: read
// it, watch it for new versions, and change it with compare-and-set.
//
// A [Node] deals in raw bytes; [JSON] stores a Go value of any type as
// JSON. Every read returns the node's version (its data version, and the
// zxid of the write that produced it), and [Node.Set] writes only if the
// version is still the one the caller read, so concurrent editors never
// overwrite each other unknowingly. [Node.Update] runs a read-modify-write
// loop on top of that.
//
// [Node.Watch] delivers versions on a channel that always ends up holding
// the newest one: a reader that falls behind skips intermediate versions but
// never misses the latest. A deleted node is delivered as a Version with
// Exists false.
//
// The node is persistent; missing parents are created as persistent nodes.
// Data larger than the Session's limit is refused with an error wrapping
// zkcoord.ErrTooLarge. JSON that does not decode is reported with an error
// wrapping zkcoord.ErrBadData and never overwritten by Update.
//
// # Lost replies
//
// A conditional write whose reply is lost with the connection is resolved by
// reading the node again once reconnected: if it now holds exactly the data
// written, at the next version, the write is taken as done; if it is still
// at the version given, the write did not happen and is sent again, after a
// backoff. If the node has moved on further, Set reports ErrConflict, though
// its own write may have happened just before another writer's: the caller
// must read again either way (Update does). Only another writer storing
// identical bytes from the same version at that moment could be mistaken
// for this one, and the resulting state is the same. Writes with
// AnyVersion, and deletes, are simply sent again.
//
// # Compare-and-set by value
//
// Node.CompareAndSet writes only if the node holds exactly the expected
// bytes, as Curator's DistributedAtomicValue does; Set with a version is
// the compare-and-set by version.
//
// # Concurrency
//
// Node, JSON and Watcher are safe for concurrent use.
package config
