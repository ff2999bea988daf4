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
// A write whose reply is lost with the connection is settled by
// [zkcoord.Settle]: once reconnected, the node is read after a
// sync, and the outcome decided only when the node proves it. A set still
// at the version given did not happen and is sent again; a set whose next
// version holds other data lost to another writer (ErrConflict). A create
// that finds no node is sent again; one that finds other data than its own
// lost to another creator (ErrExists). But a node holding exactly the data
// written, at the version the write would have made, proves nothing:
// another writer may have written the same bytes from the same version (two
// Updates computing the same value, two creators of the same default).
// Taking it for this write's would tell both writers they won, and lose an
// update. Set, Create, Update and CompareAndSet then fail with an error
// wrapping [zkcoord.ErrOutcomeUnknown]; the write may or may not have
// happened, and the caller reads the node to decide. So does a write whose
// context ends while it is in flight, and a set whose node is gone or has
// moved on by more than one version. Writes with AnyVersion are sent again.
// Delete reads the node first and settles a lost reply by the node's czxid,
// so it never deletes a node created again at the same path meanwhile.
//
// # Compare-and-set by value
//
// Node.CompareAndSet writes only if the node holds exactly the expected
// bytes, as Curator's DistributedAtomicValue does; Set with a version is
// the compare-and-set by version.
//
// # Which form
//
// A Node or JSON reads, writes and watches through a Session of the
// caller's, and its Watch ends with that Session: use it where the
// configuration serves work bound to the Session, and for writes.
// [WatchConfig] and [WatchJSONConfig] watch a node on Sessions they open
// themselves from a zkcoord.Config through zkcoord.Supervise, the recovery
// loop every recipe shares: after a Session is Lost or Expired the watch
// carries on on a new one, delivering the version the node holds then if
// it is newer than the last delivered (a node deleted meanwhile as a
// Version with Exists false). Use them to follow configuration for as
// long as the process runs; WithRecoveryEvents reports each step of the
// recovery.
//
// # Concurrency
//
// Node, JSON and Watcher are safe for concurrent use.
package config
