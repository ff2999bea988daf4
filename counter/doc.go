// Package counter implements shared counters on a ZooKeeper node: a 32-bit
// [Counter], compatible with Apache Curator's SharedCount and with Kazoo's
// Counter(support_curator=True), and a 64-bit [Counter64], compatible with
// Curator's DistributedAtomicLong. Both are the one generic [Of]; they
// differ only in the width of the integer they store.
//
// # Format
//
// The node holds the count as a 4-byte (Counter) or 8-byte (Counter64)
// big-endian two's-complement integer, as Curator writes it. An empty node reads as the seed value, as Kazoo
// does (Kazoo creates the node empty). Any other length (a 64-bit counter's node read as a 32-bit one, too) is
// corrupt data:
// reads fail with an error wrapping zkcoord.ErrBadData, and nothing is
// overwritten. A read never writes: [Counter.Get] of a missing node
// returns the seed at version 0 and creates nothing. The first write
// ([Counter.Add], [Counter.SetCount], [Counter.TrySetCount]) that finds
// the node missing creates it with the seed value (persistent, with
// missing parents created as containers), as Curator's SharedCount.start
// does, and then writes, so a count read from the missing node is the one
// a conditional write starts from. (Curator itself
// cannot read an empty node: a counter shared with Curator should be created
// by Curator or by this package, not by Kazoo.)
//
// # Versions
//
// Every [Count] carries the node's data version. [Counter.TrySetCount]
// writes only if the version is unchanged (Curator's trySetCount);
// [Counter.SetCount] writes unconditionally (Curator's setCount);
// [Counter.Add] loops on TrySetCount (Kazoo's += and -=).
//
// A conditional write whose reply is lost with the connection is settled
// by [zkcoord.Settle]: once reconnected, the node is read after a
// sync. If it is still at the version the write expected, the write did
// not happen and is sent again; if the next version holds another count,
// another writer won and the write failed (Add reads again and retries).
// If the next version holds exactly the count this write would have made,
// nothing tells whether it was this write or another writer's equal one
// (two Add(1) from 5 both write 6 at the same version): the 4-byte format
// Curator reads leaves no room for a writer's mark, so the call fails with
// an error wrapping [zkcoord.ErrOutcomeUnknown] rather than count another
// writer's increment as its own. So does a write whose context ends while
// it is in flight. The caller decides: read the count, or treat the
// increment as possibly applied; repeating it blindly may count it twice.
//
// # Which form
//
// A Counter reads, writes and watches through a Session of the caller's,
// and its [Counter.Watch] ends with that Session: use it where the count
// serves work bound to the Session. [WatchConfig] watches a counter on
// Sessions it opens itself from a zkcoord.Config through
// zkcoord.Supervise, the recovery loop every recipe shares: after a
// Session is Lost or Expired it carries on on a new one, delivering the
// count the node holds then if it is newer than the last delivered (the
// counts written in between are skipped, as a reader that falls behind
// skips them). Use it to follow a count for as long as the process runs;
// its WithRecoveryEvents reports each step of the recovery.
//
// # Concurrency
//
// A Counter is safe for concurrent use.
package counter
