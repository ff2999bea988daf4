// Package twophase implements two-phase commit through ZooKeeper, after the
// ZooKeeper recipe: a coordinator creates a transaction node with one child
// per participating site, every site votes commit or abort, and one
// decision is written for all to see.
//
// # Layout
//
// Under the transaction path P:
//
//	P                the transaction's payload (persistent)
//	P/sites          the site names, one per line (persistent)
//	P/sites/<site>   the site's vote: empty until the site joins, then
//	                 "joined", then "commit" or "abort" (persistent)
//	P/alive/<site>   created by the site when it joins (ephemeral)
//	P/coordinator    created by the coordinator (ephemeral)
//	P/decision       empty until decided, then "commit", or "abort" and a
//	                 line giving the reason (persistent)
//
// [Begin] creates all of it in one multi-operation. [Join] creates the
// site's own ephemeral node and marks the site joined, atomically, so that
// the failure of a site is visible: a site whose ephemeral node vanishes
// before the decision aborts the transaction. [Participant.Vote] records a
// vote, only while the site's ephemeral node exists.
//
// # The decision
//
// The decision node is written once: every writer sets it at version 0, so
// exactly one write succeeds and every participant reads the same outcome.
// The outcome is abort as soon as one site votes abort, or one joined site
// vanishes, or the coordinator vanishes while sites wait on it; it is
// commit when every site has voted commit. A commit is written together with
// a check that every site's ephemeral node still exists, in one
// multi-operation, so a site that vanishes before the commit is written
// always aborts the transaction.
//
// # Who watches the votes
//
// In the recipe's basic form every site watches every vote, which costs
// O(n²) notifications. By default this package uses the recipe's scalable
// variant: only the coordinator watches the votes and the sites' ephemeral
// nodes, and decides, inside [Coordinator.Outcome] (so the coordinator
// must call it); the sites watch only the decision and the coordinator's
// ephemeral node, and abort if the coordinator vanishes undecided. A site
// that joins with [WithSitesDecide] watches the votes itself and decides
// without the coordinator, as in the basic form; the two may be mixed.
//
// # Loss
//
// Every wait returns when its context ends or its Session ends. A
// participant whose Session ends before the decision cannot learn the
// outcome through that Session; [Lookup] reads it later with another one.
//
// # Concurrency
//
// Coordinator and Participant are safe for concurrent use.
package twophase
