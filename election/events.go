package election

import (
	"context"
	"log/slog"
	"time"
)

// EventType names a transition of a candidate, after the events of
// ZooKeeper's LeaderElectionSupport recipe.
type EventType int

const (
	// EventOffer: the candidate is creating its node.
	EventOffer EventType = iota + 1
	// EventOffered: the node exists (Event.Node).
	EventOffered
	// EventDetermine: the candidate reads all participants to find its
	// place. Event.Notified tells whether a watch notification caused it
	// (rather than the candidate's first look, or a predecessor that
	// vanished before it could be watched).
	EventDetermine
	// EventFollowing: the candidate watches its predecessor
	// (Event.Following, whose id is Event.FollowingID).
	EventFollowing
	// EventElected: the candidate leads: it verified that it owns the
	// lowest node, bumped the term and wrote the leader node.
	EventElected
	// EventSuspended: the Session lost contact with the servers. A leader
	// still leads: the Session declares itself Lost in time.
	EventSuspended
	// EventReconnected: contact is back on the same ZooKeeper session.
	EventReconnected
	// EventLost: leadership ended (Event.Err says why; ErrResigned after
	// Resign). The leader's Done channel closed before it was emitted.
	EventLost
	// EventResigned: the candidate resigned and its node is deleted. Last
	// event of a candidate that resigned.
	EventResigned
	// EventFailed: the candidate ended for another reason (Event.Err).
	// Last event of such a candidate.
	EventFailed
	// EventRevokeRequested: another client asked the leader to give its
	// leadership up (Election.Revoke); it is seen once Leadership.Revoked
	// has been called. The leader still leads.
	EventRevokeRequested
)

var eventNames = [...]string{"", "offer", "offered", "determine", "following", "elected",
	"suspended", "reconnected", "lost", "resigned", "failed", "revoke-requested"}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "unknown"
}

// Event is one transition of a candidate.
type Event struct {
	Type EventType
	At   time.Time
	// ID is the participant id of the candidate, Node its node's path
	// (empty before EventOffered).
	ID   string
	Node string
	// Notified is set on EventDetermine caused by a watch notification.
	Notified bool
	// Following is the path of the watched predecessor and FollowingID
	// its participant id (EventFollowing).
	Following   string
	FollowingID string
	// Token and Term are set from EventElected on.
	Token int64
	Term  int64
	// Err is the cause of EventLost and EventFailed.
	Err error
}

// role is a candidate's part in the election.
type role int

const (
	// roleOffering: the candidate's node is being created or its place is
	// being determined for the first time.
	roleOffering  role = iota + 1
	roleFollowing      // waits behind its predecessor
	roleLeading
	roleFinished // resigned or failed; see candidate.Err
)

var roleNames = [...]string{"", "offering", "following", "leading", "finished"}

func (r role) String() string {
	if r > 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "unknown"
}

// snapshot is the state of a candidate.
type snapshot struct {
	Role role
	// ID is the candidate's participant id and Node its node's path.
	ID   string
	Node string
	// Following is the predecessor's path and FollowingID its id, while
	// following.
	Following   string
	FollowingID string
	// Token and Term are set while leading (and kept once finished).
	Token int64
	Term  int64
	// Err is why the candidate finished.
	Err error
}

// emit reports an event to the log and, off the state machine's
// goroutine, to the callback.
func (c *candidate) emit(ev Event) {
	ev.At = time.Now()
	ev.ID = c.el.opts.id
	if ev.Node == "" {
		ev.Node = c.node
	}
	c.feed.Push(ev)
	attrs := []any{"path", c.el.path, "id", ev.ID, "node", ev.Node}
	level := slog.LevelDebug
	switch ev.Type {
	case EventFollowing:
		attrs = append(attrs, "following", ev.Following, "following_id", ev.FollowingID)
	case EventElected:
		level = slog.LevelInfo
		attrs = append(attrs, "token", ev.Token, "term", ev.Term)
	case EventDetermine:
		attrs = append(attrs, "notified", ev.Notified)
	case EventLost, EventFailed:
		level = slog.LevelWarn
		attrs = append(attrs, "err", ev.Err)
	case EventSuspended, EventReconnected, EventResigned:
		level = slog.LevelInfo
	}
	c.el.opts.logger.Log(context.Background(), level, "election "+ev.Type.String(), attrs...)
}
