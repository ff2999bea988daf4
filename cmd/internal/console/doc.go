// Package console is the live web console behind `zkcoord ui`: a
// single-page view of who leads, holds and owns what under a ZooKeeper
// root, updated as it changes.
//
// The console walks the tree under a root (or a list of paths) and
// recognises recipes by their node layouts: rebalancer groups (clients/,
// resources/, barriers/ and term), elections (_c_<uuid>-latch-<seq>
// children), mutexes (-lock-), read/write locks (__READ__, __WRIT__),
// semaphores (locks/ and leases/), queues (queue-<seq> items), double
// barriers (UUID members and ready), counters (a leaf holding 4 bytes),
// groups of the group package (other protected children, _c_<uuid>-<id>)
// and services of the discovery package (<base>/<service>/<id>: told from
// a double barrier by the instance JSON its first child holds). A simple
// barrier is a plain node and is shown only when named in Options.Paths as
// "barrier:<path>"; so are groups whose members are not protected names
// ("membership:<path>"). A root that does not exist is walked once its
// cache reports it created.
//
// One goroutine owns the model. It reads the tree from caches of package
// cache: one tree cache for each root (and each path named in
// Options.Paths outside the roots), on one persistent recursive watch
// where the server has them (ZooKeeper 3.6 and later), one-shot watches on
// older servers. The model never sets a watch of its own: on a server
// before 3.9 one set by the same Session on a cache's root would replace
// the cache's recursive watch (ZOOKEEPER-4466). The caches load and resync
// in batches (multiRead) and report what changed; the views that read a
// changed node are built again from the local copy, so a change costs
// reads of what changed, not of the whole group. The number of watches
// does not grow with the number of browsers: each browser subscribes to
// server-sent events fed from the model through a coalescing queue of its
// own, so a slow browser never holds the model up. The page itself
// (static/) is embedded in the binary.
//
// A console follows one Session at a time. While that Session is out of
// contact with ZooKeeper, and after it ended, the status says so
// (Status.Connected) and the views stay as last read. Once it is in
// contact again, the caches compare their copies with ZooKeeper, and the
// views are built again when they all have: what changed meanwhile is
// published once, as changes. Console.Resume moves
// the console to a new Session: it reads every recipe it knew again and
// publishes what differs as changes, while the page and its event streams
// carry on.
//
// The console is read-only unless Options.Admin is set; admin actions
// (break a lock, add or remove a rebalancer resource) need a confirmation
// parameter repeating their target and are logged.
package console
