// Package elect is the election engine shared by package election and the
// rebalancer's coordinator role: each participant holds an ephemeral
// sequential node in one directory; the first node in the layout's order
// leads; every other participant watches only its predecessor and, on any
// notification or periodic re-check, reads all participants again. A new
// leader bumps the version of a term node in the transaction that also
// checks that its own node still exists, and every guarded write of that
// leader checks the term's version, so a write by a deposed leader fails.
// A bump whose reply is lost is settled by zkcoord.Settle (a sync,
// then the term node read): office is taken only when the term node is one
// version on and holds exactly this contender's term data, which no other
// contender writes; otherwise the contender looks again, and bumps again
// if it still leads.
//
// What differs between the users is the Layout: how participant nodes are
// ordered and when that order is not to be trusted (RefuseOrder: package
// election refuses Curator's order once its sequence counter wrapped),
// where the term node is, what it holds, and whether a leader node is
// written beside it. A Contender is owned by one goroutine.
package elect
