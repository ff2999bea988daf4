// Package group implements group membership and rendezvous on ZooKeeper.
//
// # Membership
//
// [Join] adds a member to a group: an ephemeral node under the group path,
// holding the member's data and named "_c_<uuid>-<id>" (a protected name,
// so that a join whose reply was lost finds its node instead of joining
// twice). The member stays in the group for as long as its Session lives,
// or until [Membership.Leave]. Its [Membership.Done] closes when it is no
// longer a member, with the cause in Err: Leave, the Session's end, its
// node deleted by someone else, or any other error that stops the watch on
// its node (such as NoAuth once its ACL denies reading it), since a
// membership that is no longer watched could end unnoticed.
//
// Join makes a member of a Session of the caller's: the membership ends
// with that Session, which suits a member that must not outlive what else
// the process owns on it (a lock, a leadership). [JoinConfig] opens its
// own Sessions from a zkcoord.Config through zkcoord.Supervise, the
// recovery loop every recipe shares, and joins again on each new one
// after a Session is Lost or Expired: use it for a member that should be
// listed for as long as the process runs. Its WithRecoveryEvents reports
// each step (session started, session ended with its cause, recovering,
// recovered).
//
// [Members] lists a group and [Watch] follows it: a channel of snapshots
// that always ends up holding the newest one (a reader that falls behind
// skips intermediate snapshots, never the latest). A member's data is set
// when it joins; to change it, leave and join again.
//
// A member is any ephemeral child of the group node; its ID is the name
// without the protected prefix, so ephemeral members created by other
// libraries (such as Curator's GroupMember, which names nodes by their id)
// are listed too. Persistent children are not members and are ignored.
// Several members may share an ID; they are told apart by Path.
//
// # Rendezvous
//
// A rendezvous is a node that waits to be filled: one side creates it
// empty ([NewRendezvous]) and passes its path to a peer, which writes its
// data into it once ([Fill]); the creator, and anyone else who knows the
// path ([Await]), wakes up with the data. This is how a scheduler learns
// where the master it just started listens, for example. The node is
// ephemeral: it disappears with its creator.
//
// # Concurrency
//
// All types are safe for concurrent use.
package group
