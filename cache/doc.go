// Package cache keeps a local copy of part of the ZooKeeper tree, current
// through watches: one node ([NewNode], Curator's NodeCache and Kazoo's
// DataWatch), a node's children with their data and stats ([NewChildren],
// Curator's PathChildrenCache and Kazoo's ChildrenWatch) or a subtree down
// to a depth limit ([NewTree] with [WithMaxDepth], Curator's TreeCache and
// CuratorCache, Kazoo's TreeCache). The watched node need not exist; it is
// reported once it does, and again after it is deleted and created anew.
// It may be "/": the whole tree, or the chroot's.
//
// # Which form
//
// NewNode, NewChildren and NewTree cache through a Session of the
// caller's and stop when it ends: use them when the copy serves work that
// ends with that Session too (what a leader or lock holder reads).
// [NewTreeConfig] opens its own Sessions from a zkcoord.Config through
// zkcoord.Supervise, the recovery loop every recipe shares, and keeps one
// copy across them: use it for a copy that the process reads for as long
// as it runs (configuration, a registry). It caches a tree, or with
// WithMaxDepth(0) a single node; its WithRecoveryEvents reports each step
// of the recovery (session started, session ended with its cause,
// recovering, recovered).
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
// its next change (on one-shot watches: at its parent's next listing) or
// at a resync.
//
// Events are never dropped: they wait in an unbounded queue until read,
// and the goroutine that owns the cache never waits for the reader. A
// reader that stops reading costs memory, not correctness; Close the
// cache when done with it.
//
// # Watches
//
// A tree or children cache follows its subtree on one persistent
// recursive watch on its root (ZooKeeper 3.6 and later), set before its
// first read: the watch reports every creation, data change and deletion
// below the root, so each change costs one read of the node it names and
// no node is listed to learn of a new child. Changes below the depth
// limit reach the Session too, and are dropped. A server that refuses the
// watch (before 3.6 it does not know the request; it then also closes
// the connection, which the cache reports and resyncs after like any
// other) leaves the cache on one-shot watches: a data watch on every
// cached node and, above the depth limit, a child watch, each set again
// by the read its event causes. Nothing is configured: the cache finds
// out when it starts. A node cache, and a tree limited to its root, use
// one one-shot watch on every server: it costs one read per change, as a
// persistent watch would.
//
// Servers before 3.9 hold one watch per Session and path, whatever its
// kind (ZOOKEEPER-4466): a one-shot watch that the same Session sets on a
// tree or children cache's root (GetW, ExistsW, ChildrenW on that path,
// or a node cache of it) replaces the cache's recursive watch on the
// server, which then no longer reports creations and data changes below
// the root: the cache misses them without knowing. Watch a cache's root
// through another Session, or through the cache itself. Watches on the
// nodes below the root do not interfere.
//
// # Reconnection and resync
//
// While the Session is Suspended the copy may fall behind. When the
// Session is Reconnected (same ZooKeeper session; the connection sets the
// existing watches again), the cache reads the whole subtree again,
// compares it with its copy and reports exactly the differences: nodes
// created, changed, deleted, or deleted and created again (Removed then
// Added) while it was cut off, each once. [Resynced] follows the last of
// them. A recursive watch does not report what changed while it was cut
// off; one-shot watches that the server fires afterwards for the same
// changes find nothing new and report nothing. When the Session ends, a
// cache of NewNode, NewChildren or NewTree reports its terminal state and
// stops.
//
// A cache of NewTreeConfig reports the terminal state too, and carries
// on: once Supervise has opened a new Session, it reports that Session's
// first state (StateChanged Connected), reads the whole subtree again on
// it, setting every watch anew, and reports exactly the differences from
// its copy, as after a reconnection, then [Resynced]. Nothing the old
// Session cached stays unless the new one reads it unchanged, and
// notifications of the old Session's watches still on their way are
// ignored. Its Events end after Close, or with a last StateChanged Closed
// event (its Err the cause) when Supervise gives up: credentials
// rejected, an invalid Config.
//
// # Costs
//
// On a recursive watch, a load reads the tree level by level in batches
// (multiRead): the nodes' data, then the children of those that have
// any. A node's data is known only once read and ZooKeeper does not bound
// a reply, so a batch of data reads holds at most 15 nodes: 15 of the
// largest a default server stores (1 MiB) fill the 16 MiB reply the
// Session accepts. Listings are packed by the children counts read with
// the data. A tree of 10,001 nodes (100 children of 99 leaves each) loads
// in about 670 requests instead of 20,002, eight in flight at once, and
// the server holds one watch for it instead of 20,002. After that a data
// change, a created node and a deleted node cost one read each (a created
// node with children, also the load of its subtree); the changes that
// come together are read together. A deletion is read before it is
// applied because the node may already exist again: the read then finds
// the new incarnation, which the cache reports as Removed then Added. A
// resync costs what a load costs.
//
// On one-shot watches, a load reads every node once with a data watch
// and, above the depth limit, lists its children with a child watch: two
// requests per node, pipelined. After that a data change costs one read,
// a created node one listing of its parent and the reads of its own
// subtree, a deleted node one listing of its parent and one read of the
// node (and, above the depth limit, one listing) that finds it gone. A
// resync costs as much as a load, with no new watches where one is set.
// Either way, requests per change are proportional to what changed, not
// to the size of the tree.
//
// Close stops every goroutine of the cache and removes its recursive
// watch from the server; a server before 3.9 cannot remove a recursive
// watch alone, so it keeps it until the Session's connection is next lost
// (the Session drops its notifications meanwhile). One-shot watches stay
// on the server until they fire (then nothing sets them again) or the
// Session ends.
//
// # Concurrency
//
// A Cache is safe for concurrent use.
package cache
