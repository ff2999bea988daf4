package election

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// AdoptForTest runs a candidate on an existing node, as if this Election
// had created it: tests use it for nodes that cannot be made by a
// sequential create (a wrapped sequence number) or that belong to another
// session.
func AdoptForTest(ctx context.Context, e *Election, node string) (*Candidate, error) {
	c := newCandidate(e)
	if err := e.register(c); err != nil {
		return nil, err
	}
	c.node, c.name = node, zkcoord.Base(node)
	c.update(func(s *State) { s.Node = node })
	go c.run()
	select {
	case <-c.placed:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// SetAfterTakeOfficeForTest makes every candidate of e call f with its node
// once its transaction taking office is written, before it reads the term
// and its node back and before its leadership begins. Call it before
// nominating.
func SetAfterTakeOfficeForTest(e *Election, f func(node string)) {
	e.hooks.AfterBump = f
}

// SetLeaderNotifiedForTest makes every leader of e call f with its node
// when a watch on its term node or its own node fires, before it reacts.
// Call it before nominating.
func SetLeaderNotifiedForTest(e *Election, f func(node string)) {
	e.leaderNotified = f
}

// DropNextNotificationForTest makes the next notification a follower of e
// receives from its predecessor's watch be swallowed, as if ZooKeeper had
// lost it: only the periodic re-check can then move the follower on.
func DropNextNotificationForTest(e *Election) {
	e.hooks.DropNextNotification()
}

// NotificationDroppedForTest reports whether a notification asked to be
// dropped by DropNextNotificationForTest has been dropped.
func NotificationDroppedForTest(e *Election) bool {
	return e.hooks.Dropped()
}

// The candidate machinery is unexported; tests drive it directly.
type (
	Candidate = candidate
	State     = snapshot
	Role      = role
)

const (
	Offering  = roleOffering
	Following = roleFollowing
	Leading   = roleLeading
	Finished  = roleFinished
)

// Nominate joins the election without waiting to lead and returns the
// candidate once its first role is known.
func (e *Election) Nominate(ctx context.Context) (*Candidate, error) { return e.nominate(ctx) }

// Candidate returns the candidate that holds this leadership.
func (l *Leadership) Candidate() *Candidate { return l.c }
