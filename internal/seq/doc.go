// Package seq is zkcoord's one place for the names of sequential nodes:
// reading the number ZooKeeper appends, and the two orders recipes put
// such nodes in. Why there are two, and what each does once ZooKeeper's
// sequence counter wraps, is argued once in
// docs/protocol.md#sequence-numbers-and-their-wrap.
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
// For layouts shared with Apache Curator (locks, leader latches) and Kazoo
// (its Lock): the text after the last occurrence of the lock name
// ([After]), compared with java.lang.String.compareTo, that is by UTF-16
// code units ([CompareText]), as Curator compares it ([CompareCurator]).
// Kazoo compares the same suffixes as Python strings, which for these
// ASCII suffixes is the same order. It is not creation order once the
// counter has wrapped, and [CompareCurator] keeps it so on purpose, to
// agree with them; [Wrapped] tells the negative suffixes that show the
// wrap, beside which zkcoord's locks and elections take no ownership.
//
// # The serial order
//
// For zkcoord's own layouts (queues, the rebalancer's clients):
// serial-number arithmetic in the manner of RFC 1982 ([SerialOf]). The
// numbers present are placed on the circle of 2^32 values and read
// starting just after the largest empty gap: creation order across the
// wrap while the numbers present span fewer than 2^31 values, plain
// numeric order for numbers that never went negative, and in every case a
// total order that every reader of the same set agrees on.
package seq
