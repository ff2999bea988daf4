// Package node keeps a node present in ZooKeeper, like Curator's
// PersistentNode and PersistentTtlNode: [Keep] creates the node and
// creates it again whenever it is deleted, for as long as its Session
// lives; its data can be changed while it is kept.
//
// An ephemeral node (the default) belongs to the Session and vanishes with
// it; to keep it across Sessions, run Keep inside zkcoord.Supervise, which
// starts it again on every new Session. A persistent node with
// WithTTL is what Curator's PersistentTtlNode is for: it outlives the
// Session, and the server deletes it once nobody has touched it for the
// TTL, so a crashed keeper's node goes away on its own. Keep touches it
// (writes its data again) every third of the TTL.
//
// A node at the path that another Session created is not taken over: Keep
// waits for it to go away and then creates its own (Conflict reports the
// wait).
package node
