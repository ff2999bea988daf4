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
// as it runs (configuration, a registry). With WithMaxDepth(0) it caches
// a single node; its WithRecoveryEvents reports each step of a recovery.
//
// # Reads and events
//
// [Cache.Get], [Cache.Children] and [Cache.Snapshot] read the local copy
// and never wait for ZooKeeper; the copy is updated before the event that
// reports the change is queued. [Cache.Events] delivers, in order, an
// [Added] event for every node of the initial load (parents first) and
// [Initialized], then [Added], [Updated] and [Removed] (descendants before
// their parent) as they happen, and [StateChanged] for each state of the
// Session. Events are never dropped: they wait in an unbounded queue, and
// the cache never waits for its reader.
//
// After a reconnection the cache reads its subtree again and reports
// exactly what changed while it was cut off, each change once, then
// [Resynced]. When the Session ends, a cache of NewNode, NewChildren or
// NewTree reports the terminal state and stops; a cache of NewTreeConfig
// reports it too, then resyncs on the next Session the same way.
//
// # Watches and costs
//
// A tree or children cache follows its subtree on one persistent
// recursive watch on its root (ZooKeeper 3.6 and later) and loads it in
// batches of multiRead requests: a tree of 10,001 nodes in about 670
// requests, one watch on the server; each change then costs one read of
// the node it names. A server that refuses the watch leaves the cache on
// one-shot watches (two per node), found out at start, never configured.
//
// Servers before 3.9 hold one watch per Session and path, whatever its
// kind (ZOOKEEPER-4466): a one-shot watch that the same Session sets on a
// tree or children cache's root (GetW, ExistsW, ChildrenW, or a node cache
// of that path) replaces the cache's recursive watch, and the cache then
// misses changes below the root without knowing. Watch a cache's root
// through another Session, or through the cache itself.
//
// Close stops every goroutine of the cache and removes its recursive
// watch from the server. A Cache is safe for concurrent use. The watches,
// batches, resync and costs in detail: docs/protocol.md, "Caches".
package cache
