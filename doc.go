// Package zkcoord coordinates distributed processes through Apache ZooKeeper.
//
// A [Session] owns exactly one ZooKeeper session, spoken over zkcoord's own
// implementation of ZooKeeper's client protocol: contexts on every call, a
// chroot, retries of idempotent reads, requests written in the order they
// are issued, protected sequential creates that never leave an orphan
// node, fencing tokens with guarded writes, and, most importantly, a
// connection-state stream that declares the session Lost from the time of the
// last server response, before the server can expire it.
//
// # Why Lost matters
//
// ZooKeeper ownership is advisory. A client cut off from the ensemble cannot
// learn that its session expired until it reconnects, which may be long after
// another client took over what it owned. A Session therefore watches the time
// since it last heard from any server. When that silence reaches
// [Config.LostAfter] of the negotiated session timeout, the Session declares
// itself Lost: [Session.Done] closes, [Session.Err] reports [ErrSessionLost],
// and every recipe built on it (locks, leadership, assignments) signals loss.
// Because the server cannot expire the session before a full timeout has
// passed since it last heard from the client, owners are told first and have
// the rest of the timeout to stop.
//
// # One Session, one ZooKeeper session
//
// After Lost, Expired or Close a Session is finished for good: its connection
// is closed and nothing more is sent, not even on a new ZooKeeper session.
// To carry on, a caller starts a fresh Session with
// [Connect] and re-establishes what it owned:
//
//	for {
//		sess, err := zkcoord.Connect(ctx, cfg)
//		if err != nil {
//			return err
//		}
//		runWork(ctx, sess) // returns when sess.Done() closes
//		sess.Close(ctx)
//		if ctx.Err() != nil {
//			return ctx.Err()
//		}
//	}
//
// [Supervise] is that loop, with backoff and [RecoveryEvent]s, and the one
// way recovery is done: each recipe that lives across Sessions has a form
// built on it that takes a [Config] instead of a Session
// (rebalance.StartConfig, cache.NewTreeConfig, discovery.RegisterConfig,
// group.JoinConfig, node.KeepConfig, counter.WatchConfig,
// config.WatchConfig; any [Watcher] through [NewWatcherConfig]), and
// reports the same events, asked for with a WithRecoveryEvents option.
// Each recipe's package documentation says which form to use when.
//
// # Servers that change
//
// Config.Servers are dialed by name, so a host name is resolved again on
// every connection attempt. On an ensemble that publishes its membership
// in ConfigNode (ZooKeeper 3.5 and later) and lists the server the Session
// is connected to, the Session follows it: servers added or removed by a
// reconfiguration (Session.Reconfig, zkCli's reconfig) are taken in or
// dropped from Session.Servers while the session goes on; a connection to
// a removed server moves to a member. Config.PinServers turns that off.
// See docs/kubernetes.md.
//
// # Event channels
//
// Transitions (a candidate elected, a failover instance active, a Session
// lost and recovered) are reported on a channel the caller passes to a
// WithEvents or WithRecoveryEvents option; newest values come through a
// [Watcher] instead. Every such channel follows the same rule. Its owner
// (the Election's candidate, failover's Run, Supervise, a supervised
// recipe) sends its events in order, none dropped while it lives, from a
// goroutine of its own through an unbounded queue, so a slow reader never
// delays the owner or a loss signal. Once the owner has ended, events still
// queued are sent only while the channel takes them at once (a reader
// waiting, or room in its buffer); the rest are dropped, and no goroutine
// is left behind. When the owner's end has been reported (its Done closed,
// its Run or Close returned), every event it will ever send is already in
// the channel. zkcoord never closes the channel: give it a buffer for the
// events to read after the owner ended.
//
// # Concurrency
//
// A Session is safe for concurrent use by many goroutines; many recipes may
// share one Session.
package zkcoord
