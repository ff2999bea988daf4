// Package cache keeps a local copy of part of the ZooKeeper tree, current
// through watches: one node ([NewNode], Curator's NodeCache and Kazoo's
// DataWatch), a node's children with their data and stats ([NewChildren],
// Curator's PathChildrenCache and Kazoo's ChildrenWatch) or a subtree down
// to a depth limit ([NewTree] with [WithMaxDepth], Curator's TreeCache and
// CuratorCache, Kazoo's TreeCache). The watched node need not exist; it is
// reported once it does, and again after it is deleted and created anew.
//
// # Reads and events
//
// [Cache.Get], [Cache.Children] and [Cache.Snapshot] read the local copy
// under a short lock and never wait for ZooKeeper. [Cache.Events] delivers
// what changed, in the order the cache saw it: first an [Added] event for
// every node of the initial load (parents before children) and
// [Initialized], then [Added], [Updated] (the data changed: its
// modification zxid moved) and [Removed] (descendants before their parent)
// as they happen, and [StateChanged] for each state of the Session. States
// are reported as soon as the Session reports them, even while the cache
// waits for a read that a disconnection interrupted. The local copy is
// updated before an event is queued, so reads may be ahead of the events
// received. Children names only the children the cache holds: a child
// whose read found it gone or failed is not named, and is read again at
// its parent's next listing.
//
// Events are never dropped: they wait in an unbounded queue until read,
// and the goroutine that owns the cache never waits for the reader. A
// reader that stops reading costs memory, not correctness; Close the
// cache when done with it.
//
// # Reconnection and resync
//
// While the Session is Suspended the copy may fall behind. When the
// Session is Reconnected (same ZooKeeper session; the connection sets the
// existing watches again), the cache reads the whole subtree again,
// compares it with its copy and reports exactly the differences: nodes
// created, changed, deleted, or deleted and created again (Removed then
// Added) while it was cut off, each once. [Resynced] follows the last of
// them. Watches that the server fires for the same changes afterwards find
// nothing new and report nothing. When the Session ends, the cache reports
// its terminal state and stops; a cache does not move to a new Session.
//
// # Costs
//
// A load reads every node once with a data watch and, above the depth
// limit, lists its children with a child watch: two requests per node,
// pipelined. After that a data change costs one read, a created node one
// listing of its parent and the reads of its own subtree, a deleted node
// one listing of its parent and one read of the node (and, above the depth
// limit, one listing) that finds it gone: requests per change are
// proportional to what changed, not to the size of the tree. A deletion is
// read before it is applied because the node may already exist again: the
// parent's listing then names the new node, which the cache reports as
// Removed then Added and follows from then on. A resync costs as much as a load, with no new
// watches where one is set.
//
// Close stops every goroutine of the cache. The watches already set stay
// on the server until they fire (then nothing sets them again) or the
// Session ends.
//
// # Concurrency
//
// A Cache is safe for concurrent use.
package cache
