// Package queue implements distributed FIFO and priority queues on
// ZooKeeper, following the queue recipes of the ZooKeeper documentation, a
// work queue in Kazoo's LockingQueue layout, and queues in the layouts of
// Curator's, shared with Java services.
//
// A [Queue] or [PriorityQueue] hands every item to exactly one Take: Put
// adds an item exactly once (a receipt settles a lost reply), and a take
// deletes the item in one transaction with an ephemeral marker, so a lost
// reply is settled too; only a taker whose Session ends before it learns
// the outcome gets [ErrOutcomeUnknown], the item gone (at most once). The
// two may share a path; items are served by priority, then oldest first,
// also after the sequence counter wraps. TakeN takes a batch in one
// transaction.
//
// A [WorkQueue] delivers at least once: Take returns a [Claim], an
// ephemeral node beside the item, and the item stays until Claim.Ack; a
// consumer that dies leaves its item to another once its session expires.
// It keeps Kazoo's LockingQueue layout.
//
// [CuratorQueue], [CuratorPriorityQueue], [CuratorDelayQueue],
// [CuratorIDQueue] and [SimpleQueue] keep the layouts and framing of
// Curator's queues, so either side puts and either side takes; with
// [WithLockPath] (Curator's lockPath, the same for every consumer) a take
// is exactly once and Claim at least once. An item whose data is not in
// Curator's framing comes back in a [CorruptError]. One path holds one
// layout. Every type is safe for concurrent use.
//
// Layouts, the take protocols and their guarantees in full:
// docs/protocol.md#queues-package-queue.
package queue
