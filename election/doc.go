// Package election is herd-free leader election on ZooKeeper, with the node
// layout of Apache Curator's LeaderLatch so that Go and Java services can
// share one election.
//
// Campaign blocks until this process leads and returns its Leadership:
// act as leader under Leadership.Context, pass Leadership.Token to every
// resource the leader writes, and Resign when done. Lead campaigns again
// after each leadership ends (Curator's LeaderSelector with auto-requeue).
// Leader tells anyone who leads now, Observe (a zkcoord.Watcher) the
// newest leader after every change, and
// Participants lists the whole queue. WithEvents reports every transition
// of a candidate in order, standing by (EventFollowing) included.
//
// Each candidate creates an ephemeral sequential node under the path and
// watches only its predecessor. The lowest node leads once its owner has
// checked it, bumped the term node and written the leader node
// (<path>-term and <path>-leader, beside the directory); a newer term
// deposes it (ErrDeposed). Leadership ends, and Done closes, as soon as the
// Session declares itself Lost, before the server can expire the session,
// so no successor can overlap with it, unless the process paused past the
// session timeout: a resource can refuse its token, and WithLockDelay makes
// the next leader wait after a leader that left without a clean release
// (docs/protocol.md#lock-delay). Leader.Acting reports that the
// leader took office (wrote the leader node), not that its work has
// started.
//
// A leader advertises a value with WithValue and Leadership.Proclaim
// (etcd's Proclaim); Revoke asks the acting leader to give its leadership
// up (Leadership.Revoked); End ends the election for every participant.
//
// Curator's LeaderLatch on the same path agrees on the leader; a Curator
// leader is never Acting, advertises nothing and cannot be revoked. After
// the directory's sequence counter wraps, candidates refuse to lead with
// zkcoord.ErrSequenceWrapped.
//
// The protocol, its state machine, observers, revocation, the wrap and the
// limits are in docs/protocol.md#election.
package election
