// Package seq is zkcoord's one place for the names of sequential nodes:
// reading the number ZooKeeper appends, and the two orders recipes put
// such nodes in.
//
// # The number
//
// ZooKeeper appends to a sequential node's name the parent's child
// version, a signed 32-bit counter that every create and every delete of a
// child advances, printed with Java's "%010d". Past 2147483647 the counter
// wraps to -2147483648, so a name may end in anything from "-2147483648"
// (eleven characters) through "-000000001" (ten) and "0000000000" to
// "2147483647". [Parse] accepts exactly those forms and [Format] prints
// them.
//
// # The Curator order
//
// Layouts shared with Apache Curator (locks, leader latches) and Kazoo
// (its Lock) must be ordered as those libraries order them, or a mixed
// fleet would disagree on who holds a lock or leads. Curator orders the
// children of a lock or latch directory by a key, the text after the last
// occurrence of the lock name ([After]), compared with
// java.lang.String.compareTo, that is by UTF-16 code units
// ([CompareText]). Kazoo's Lock orders its contenders by the sequence
// suffix it matches, compared as Python strings; for the ASCII suffixes
// ZooKeeper prints that is the same order. The numbers are compared as
// text, so once the counter wraps the order is no longer creation order:
// "-2147483648" sorts before "0000000000", and the negative numbers sort
// among themselves as text ("-000000001" < "-1000000000" < "-2147483648" <
// "-999999999"). [CompareCurator] keeps that order on purpose.
//
// # The serial order
//
// zkcoord's own layouts (queues, the rebalancer's clients) need not agree
// with anyone else, so they use the order that survives the wrap:
// serial-number arithmetic in the manner of RFC 1982. The numbers present
// are placed on the circle of 2^32 values and read starting just after the
// largest empty gap ([Serial]). While the numbers present span fewer than
// 2^31 values, which holds unless billions of nodes are alive at once,
// this is creation order, whatever wrapped, and it equals RFC 1982's
// pairwise comparison; for numbers that never went negative it is plain
// numeric order. Otherwise it is still a total order that every reader of
// the same set agrees on.
package seq
