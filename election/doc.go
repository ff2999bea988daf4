// Package election is herd-free leader election on ZooKeeper, with the node
// layout of Apache Curator's LeaderLatch so that Go and Java services can
// share one election.
//
// # Protocol
//
// Each candidate creates an ephemeral sequential node
// <path>/_c_<uuid>-latch-<seq> (a protected create: it is found again after
// a lost reply) holding its participant id. Candidates are ordered by the
// text after the last "latch-", compared as Java strings, exactly as
// Curator compares them; the lowest leads. This is the Curator order of
// zkcoord's sequence-node module, because Java and Go candidates must
// agree on who leads. It is creation order only until the directory's
// sequence counter wraps past 2147483647: a node created after the wrap
// gets a negative number and sorts before the leader's. So a candidate
// that finds a participant with a negative number, whoever created it,
// neither leads nor follows: it deletes its node and finishes with an
// error wrapping zkcoord.ErrSequenceWrapped that names the election
// (Campaign and Nominate return it). A leader keeps leading. The
// directory is a container: once every participant has left it, the
// server deletes it and the next candidate starts its counter at 0 again
// (docs/protocol.md#sequence-numbers-and-their-wrap). Every other
// candidate watches only its predecessor, so a leader change wakes one
// candidate, not all of them. On every notification a
// candidate reads all children again rather than trusting a cached view:
// any number of candidates before it may have gone at once. A follower
// also re-reads the children periodically (WithRecheck), so a lost
// notification delays it by one interval, not forever.
//
// Before acting, the candidate holding the lowest node checks that the
// node's ephemeral owner is its own session, then in one transaction
// checks that its node exists, bumps the term node (<path>-term) and
// writes the leader node (<path>-leader, ephemeral: {"id", "node", "token",
// "term"}). It watches the term node and its own node: if anyone else
// bumps the term, it steps down (ErrDeposed). The term and leader nodes
// live beside the election directory, not inside it, because Curator
// treats every child of that directory as a participant.
//
// Leadership ends, and Leadership.Done closes, as soon as the Session
// declares itself Lost, which it does before the server can expire the
// session; so the old leader stops before its node can disappear and a
// successor be elected. A reconnect to another server within that window
// changes nothing: leaders keep leading, followers keep following.
//
// # Using it
//
// Campaign blocks until leadership is won and returns a Leadership with
// Done, Err, Context, a fencing Token and Resign. Nominate joins without
// blocking and returns a Candidate that reports its Role and State and
// streams every change through Watch. Leader and Observe tell anyone,
// candidate or not, who leads; Participants lists every participant in
// order with its id, session, token and creation time. WithEvents reports every transition (offer,
// determine, following whom, elected, lost, failed ...) in order; the same
// transitions are logged through slog. End ends the election for everyone.
//
// Many candidates may share one Session and one Election: each has its own
// node and goroutine.
//
// # The leader node and Acting
//
// Holding the lowest node does not mean that its owner knows it leads
// (ZooKeeper's recipe makes the same point). The leader node is the
// acknowledgement: it is written by the leader itself, in the transaction
// that takes office, after the leader checked that it owns the lowest
// node. Leader.Acting reports that the leader node names the current
// lowest node, so Acting means "took office", nothing more:
//
//   - it does not mean that the application's leader work has started:
//     Campaign returns, and Elected closes, a moment after the transaction
//     (once the term and node watches are set), and what the application
//     does then is not recorded. An application that needs observers to
//     know that its work is running publishes that itself, for example
//     with a guarded write (Leadership.Fence) of its own node;
//   - a candidate that takes office but fails at once (its node deleted,
//     the term bumped before its watch was set) never hands out a
//     Leadership; it deletes the leader node again when the term is still
//     its own; otherwise a later leader has replaced the leader node, or
//     it names a deleted participant, which is not Acting;
//   - the leader node is ephemeral and is deleted on Resign and End, so it
//     never outlives the leader's session.
//
// # Advertising a value
//
// A leader can advertise a value, such as the address it serves at, in the
// leader node beside its id, node, token and term: WithValue gives the
// value it takes office with, and Leadership.Proclaim (etcd's Proclaim)
// replaces it. Proclaim writes in a transaction that checks the leader's
// node and its term, so a leader that was deposed, resigned or lost its
// node is refused with zkcoord.ErrNotOwner, whether or not it has heard
// yet. Observers read the value in Leader.Value (Leader, Observe,
// Participants, `zkcoord leader`); Observe reports every new value. The
// participant nodes keep Curator's layout (their data is the id); a
// Curator leader, never Acting, advertises nothing.
//
// # Fencing
//
// Leadership.Token is the creation zxid of the leader's node. A leader that
// paused (GC, SIGSTOP, a VM migration) can outlive its session; a resource
// that remembers the largest token it has accepted rejects it. Token grows
// with every new leader until the election's sequence counter wraps; what
// happens then is in docs/protocol.md#sequence-numbers-and-their-wrap.
// Leadership.Fence gives guarded writes that succeed only while the
// leader's node exists. Where the resource cannot check tokens,
// WithLockDelay makes the next leader wait after a leader that left
// without a clean release, long enough for a paused leader to wake and
// stop (docs/protocol.md#lock-delay).
//
// # Revocation
//
// Election.Revoke asks the acting leader to give its leadership up: it
// writes the leader's term into the revocation node beside the term node.
// Leadership.Revoked closes, and EventRevokeRequested is emitted, when the
// request for this leader's term arrives; the leader keeps leading until
// it decides to Resign. A request names a term, so a stale one never
// reaches a later leader. Curator has no layout for revoking a leader, so
// this one is zkcoord's own; a Curator leader, never Acting, cannot be
// asked (ErrNotActing).
//
// # Interoperating with Curator
//
// Curator's LeaderLatch on the same path sees zkcoord candidates as
// participants and vice versa; both agree on the leader. Curator does not
// bump the term node nor write the leader node, so a Curator leader is
// never Acting in Leader and Observe, and End does not stop Curator
// participants (they recreate their nodes).
//
// # Limits
//
// A candidate that resigns leaves its
// one-shot watch registered on the server until the watched node changes or
// the Session ends. Children of the election node whose names do not contain
// "latch-" are ignored here but would be counted by Curator.
package election
