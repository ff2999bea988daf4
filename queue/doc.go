// Package queue implements distributed FIFO and priority queues on
// ZooKeeper, following the queue recipes of the ZooKeeper documentation, a
// work queue in Kazoo's LockingQueue layout, and queues in the layouts of
// Curator's, shared with Java services (see "Curator's queues" below).
//
// # Layout
//
// Every item is a persistent sequential child of the queue node. A [Queue]
// names its items "queue-<seq>"; a [PriorityQueue] names them
// "queue-<ppp>-<seq>", where ppp is the priority as three digits (000 to
// 999, lower first, as with UNIX nice values). Both carry the protected
// prefix "_c_<uuid>-". Takers serve items by priority,
// then by sequence number; items put by a Queue rank as priority 0, so a
// Queue and a PriorityQueue may share a path. Children with other names are
// ignored, except "claims", which this package uses (see below).
//
// # Put: exactly once
//
// A Put creates its item and an ephemeral receipt "claims/_c_<uuid>-put"
// (the item's uuid) in one multi-operation. If the reply is lost with the
// connection, the putter syncs and looks for its receipt once connected
// again on the same session: it exists if and only if the item was added,
// even if a taker has taken the item meanwhile, so the item is never added
// twice and never dropped. The putter deletes its receipt once it knows
// the outcome (in the background, after Put returned). If the Session ends
// while a Put is in flight, the Put fails and the item may or may not have
// been added.
//
// # Sequence numbers that wrap
//
// Items of a Queue or PriorityQueue are ordered by the serial order of
// their sequence numbers, which keeps serving them oldest first after
// ZooKeeper's sequence counter wraps; the argument and its one condition
// are in docs/protocol.md#sequence-numbers-and-their-wrap.
//
// # Take: exactly one taker
//
// To take an item, a taker reads the lowest item and deletes it, in one
// multi-operation together with the creation of an ephemeral marker node
// "claims/<item>". ZooKeeper's delete is the commit point: of several takers
// racing for an item, exactly one multi succeeds, and that taker owns the
// item; the others move on. A taker that lost a race skips a random
// number of the next items of its listing (up to 16, or four times its
// batch, doubled for every race lost in a row): takers working through the
// same listing would otherwise move down it in step, all of them trying
// every item. A taker only ever moves
// forward through a listing, and what it skips is served by the others or
// found by its next listing; a taker alone loses no race and serves the
// queue in order. WorkQueue consumers do the same.
//
// If the connection drops while the multi is in flight, its outcome is
// unknown to the taker, but not lost: once connected again on the same
// session, the taker syncs and looks for its marker. Marker present: the
// delete committed and the item is returned. Marker and item absent:
// another taker committed, and this one moves on. Item present: nothing
// happened, and the take is tried again. So an item is never returned to
// two takers, and a connection loss alone never loses one.
//
// The guarantee, precisely: every item put is returned by at most one Take.
// It is returned by exactly one Take unless the taker whose delete committed
// loses its Session before it learns the outcome; that Take returns an error
// wrapping [ErrOutcomeUnknown] (and the Session's error), and the item is
// gone (at-most-once delivery). Once Take has sent its delete it waits for
// the outcome even if ctx ends, for at most as long as the Session lives.
// Afterwards the taker deletes its marker.
//
// # Batch takes
//
// [Queue.TakeN] takes up to n items in one transaction: it reads them with
// pipelined requests, then deletes all of them, each with its marker, in one
// multi-operation, so a batch costs about three round trips where n Takes
// cost 3n. An item another taker got first fails that transaction without
// applying any of it; the taker drops the item and sends the rest again, so
// a batch may hold fewer than n items. Every item of a batch has the
// guarantee of a Take: a lost reply is settled by the first item's marker
// (the transaction is all or nothing), and a Session lost with the
// transaction in flight fails TakeN with ErrOutcomeUnknown, the whole batch
// possibly gone. [WorkQueue.TakeN] creates up to n claims in one
// transaction and returns a Claim for each, acknowledged or released on
// its own.
//
// # WorkQueue: at least once
//
// A work queue cannot lose an item because its consumer died. A
// [WorkQueue] keeps Kazoo's LockingQueue layout, so Go and Python
// consumers share one queue: items are persistent sequential nodes
// "<path>/entries/entry-<ppp>-<seq>" (ppp a three-digit priority, lower
// first), served in the order of their names as strings, as Kazoo serves
// them. Take claims an item by creating the ephemeral node
// "<path>/taken/<entry>" and leaves the item in place; [Claim.Ack] deletes
// the item and the claim in one transaction;
// [Claim.Release] deletes only the claim. A claim ends with its Session,
// so the item of a consumer that crashed, paused past its session or was
// cut off is taken again by another consumer once the server has expired
// that session. Each item is therefore processed at least once and
// acknowledged at most once; consumers must tolerate a repeat.
//
// A claim's data is "<session id>-<claim id>" (16 hexadecimal digits, a
// dash, 32 more), unique to the claim, so a consumer tells its own claims
// from every other one's, its own other goroutines' included (Kazoo writes
// its consumer id there and compares it only with its own, so each sees
// the other's claims as foreign). A claim transaction whose reply is lost
// is settled after a sync by its first claim: it holds this claim's data
// if and only if the transaction committed. A Take whose ctx ends while
// its claim transaction is in flight returns ctx's error at once; the
// outcome is awaited in the background and claims that turn out to exist
// are given back, so no claim outlives a Take that returned an error. An
// Ack, once sent, waits for its outcome even if ctx ends (for at most as
// long as the Session lives) and settles a lost reply the same way.
//
// A consumer lists the queue once and works through that sorted list
// before listing again (the recipe's advice), so a deep queue costs one
// listing per many items rather than one per item. A Put whose reply is
// lost fails with ErrOutcomeUnknown: Kazoo's names leave no room to find
// the node again, so the item may or may not have been added.
//
// # Curator's queues
//
// [CuratorQueue], [CuratorPriorityQueue], [CuratorDelayQueue] and
// [CuratorIDQueue] keep the layouts of Curator's DistributedQueue,
// DistributedPriorityQueue, DistributedDelayQueue and DistributedIdQueue,
// and [SimpleQueue] that of its SimpleDistributedQueue, so that Java
// services using Curator and Go services share queues: either side puts,
// either side takes. Items are persistent sequential children of the queue
// node, named "queue-<seq>"; "queue-<s><8 hex digits><seq>" with a
// priority; "queue-|<hex millis>|<seq>" with a due time; "queue-|<id>|<seq>"
// with an id; "qn-<seq>" in a SimpleQueue. A node's data frames its items
// as Curator's ItemSerializer does: one item, or the several of one
// PutMulti, which a taker gets together; each item is the bytes the Java
// service's QueueSerializer reads. A SimpleQueue's node holds its item as
// it is. Items are served in Curator's order: by name compared as Java
// strings (not creation order once ZooKeeper's sequence counter wraps,
// unlike the serial order above), an id queue's ignoring the ids, a delay
// queue's by due time, each item once due by the taker's clock.
//
// Without a lock path a taker reads an item and deletes it at the version
// read, as Curator does: the delete is the take, and no item is returned
// twice. A delete whose reply is lost, the item then gone, cannot be told
// from another taker's: Take fails with [ErrOutcomeUnknown], and the item
// may be lost (at most once). A Put whose reply is lost fails the same
// way: Curator's names leave no room to find the item again.
//
// [WithLockPath] is Curator's lockPath, and every consumer of the queue,
// Java or Go, must use the same one. A taker first creates the ephemeral
// node "<lock path>/<item>", the claim of a WorkQueue's protocol with its
// tags, then reads the item; Take deletes item and lock in one
// transaction, and a lost reply is settled by the lock, so every item is
// returned by exactly one Take unless the taker's Session ends. Claim
// keeps the lock until the claim is acknowledged or released, or the
// Session ends: at least once. A Put goes with a receipt
// "<lock path>/_c_<uuid>-put", which settles a lost reply: exactly once.
//
// A node with an item's name whose data is not in Curator's framing is
// never dropped silently (Curator logs and deletes it): Take removes it and
// returns its data in a [CorruptError], and Claim returns its claim in
// one. Other children are left alone, as Curator leaves them. A queue node
// holds one layout: do not point a Queue, a WorkQueue and a Curator queue
// at one path.
//
// # Concurrency
//
// Queue, PriorityQueue, WorkQueue, Claim, the Curator queues and SimpleQueue
// are safe for concurrent use; any number of goroutines and processes may
// put and take.
package queue
