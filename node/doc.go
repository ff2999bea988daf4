// Package node keeps a node present in ZooKeeper, like Curator's
// PersistentNode and PersistentTtlNode: [Keep] creates the node and
// creates it again whenever it is deleted, for as long as its Session
// lives; its data can be changed while it is kept.
//
// # Which form
//
// Keep keeps the node on a Session of the caller's and ends with it: use
// it when the node must not outlive what else the process owns on that
// Session (a lock, a leadership). [KeepConfig] opens its own Sessions from
// a zkcoord.Config through zkcoord.Supervise, the recovery loop every
// recipe shares, and keeps the node across them: use it for a node that
// should be there for as long as the process runs (a registration, a
// liveness mark). After a Session is Lost or Expired it keeps the node on
// a new one with the data last given to it, creating an ephemeral node
// again (once the old Session's node is gone) and keeping on a TTL node
// that outlived the Session; WithRecoveryEvents reports each step
// (session started, session ended with its cause, recovering, recovered).
//
// An ephemeral node (the default) belongs to the Session and vanishes with
// it. A persistent node with
// WithTTL is what Curator's PersistentTtlNode is for: it outlives the
// Session, and the server deletes it once nobody has touched it for the
// TTL, so a crashed keeper's node goes away on its own. Keep touches it
// (writes its data again) every third of the TTL.
//
// A node at the path that another Session created is not taken over: Keep
// waits for it to go away and then creates its own (Conflict reports the
// wait). Meanwhile it neither writes that node (Set fails with
// zkcoord.ErrNotOwner, and its data is written once Keep's own node is
// there) nor deletes it on Close. A TTL node belongs to no session: Keep
// takes for its own only the TTL node it created (by its creation zxid),
// so a TTL node that another keeper created, or that a previous keeper of
// the same path left behind when it crashed, is waited out until it
// expires. A TTL create whose reply was lost is never known as Keep's own
// either (zkcoord.Settle takes no node with equal data as proof),
// so its node, too, is waited out; an ephemeral one is known by its owner.
// After a TTL create that returned, Keep takes for its own the node it
// reads next only if it is at version 0 with exactly the data created; one
// case is left open, a node deleted and replaced by another keeper's with
// the same data within that round trip (the client library does not
// return the create's zxid). Every write and delete reads the node first
// and is made conditional on the version read, so a node that changes
// hands in between is not touched, unless it was re-created at that same
// version within the round trip (the limit zkcoord.GuardedMulti
// describes).
package node
