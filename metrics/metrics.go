package metrics

import (
	"context"
	"time"

	"github.com/zkcoord/zkcoord"
)

// Recorder receives measurements.
type Recorder interface {
	// SessionState reports a transition of the process's ZooKeeper
	// session.
	SessionState(s zkcoord.State)
	// Leading reports whether this process leads the election at path, or
	// coordinates the rebalance group at path.
	Leading(path string, leading bool)
	// LockHeld reports whether this process holds the lock at path.
	LockHeld(path string, held bool)
	// Assigned reports how many resources of group this process runs.
	Assigned(group string, resources int)
	// Rebalanced reports one completed rebalancing of group and how long
	// it took, from the first sign that the group changed until every
	// resource was held by its allocated owner.
	Rebalanced(group string, d time.Duration)
	// ChildRestarted reports that a supervised child process (for example
	// one running a resource of group) was started again after it ended.
	ChildRestarted(group string)
}

// Nop is a Recorder that discards everything.
type Nop struct{}

func (Nop) SessionState(zkcoord.State)       {}
func (Nop) Leading(string, bool)             {}
func (Nop) LockHeld(string, bool)            {}
func (Nop) Assigned(string, int)             {}
func (Nop) Rebalanced(string, time.Duration) {}
func (Nop) ChildRestarted(string)            {}

var _ Recorder = Nop{}

// WatchSession reports every state transition of sess to r until the Session
// ends (its terminal state is reported too) or ctx ends. It blocks; run it in
// a goroutine of its own.
func WatchSession(ctx context.Context, sess *zkcoord.Session, r Recorder) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ch := range sess.Watch(ctx) {
		r.SessionState(ch.State)
	}
}
