package election

import (
	"context"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
)

// Leadership is a candidate's term as leader. Act as leader only while
// Done is open, and pass Token to every resource the leader writes, so that
// a resource can reject a stale leader (one that paused past the end of its
// session). Safe for concurrent use.
type Leadership struct {
	c     *candidate
	token int64
	term  int64

	lost     chan struct{}
	ctx      context.Context
	cancel   context.CancelCauseFunc
	unfollow func() bool // stops following the Session's context

	revoked     chan struct{} // closed when revocation is requested
	revokeWatch sync.Once     // starts watching for it

	// proclaiming holds a token while a Proclaim writes; its holder owns
	// ackVersion, the leader node's version as this leader last wrote it
	// (it created the node at version 0), -1 when not known.
	proclaiming chan struct{}
	ackVersion  int32

	mu  sync.Mutex
	err error
}

func newLeadership(c *candidate, token int64, off elect.Office) *Leadership {
	l := &Leadership{c: c, token: token, term: off.Term, lost: make(chan struct{}), revoked: make(chan struct{}),
		proclaiming: make(chan struct{}, 1)}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	// The Session's end cancels the context at once, with the loss as its
	// cause, whatever the candidate's goroutine is doing. (A context derived
	// from the Session's directly would carry context.Canceled instead.)
	sess := c.el.sess
	l.unfollow = context.AfterFunc(sess.Context(), func() {
		l.cancel(fmt.Errorf("%w: %w", ErrLost, sess.Err()))
	})
	return l
}

// end ends the leadership with cause. It is called by the candidate's
// goroutine: first as soon as the leadership is over, then, when the
// candidate finishes, with the cause it found, which Err reports from then
// on.
func (l *Leadership) end(cause error) {
	l.mu.Lock()
	first := l.err == nil
	l.err = cause
	l.mu.Unlock()
	if first {
		// The context first: whoever sees Done closed finds it cancelled.
		l.cancel(cause)
		close(l.lost)
		l.unfollow()
	}
}

// Done is closed when leadership ends: the Session was declared Lost (or
// expired, or closed), another leader bumped the term, the node was
// deleted, the election ended, or Resign was called. It closes before the
// candidate's node is deleted, so before any successor can be elected.
func (l *Leadership) Done() <-chan struct{} { return l.lost }

// Err returns nil while leading, then why leadership ended. When a
// notification ends it (the term node or the leader's node changed), Done
// closes before the leader asks ZooKeeper what happened, and Err first
// says what changed (ErrDeposed or ErrNodeDeleted); once the candidate has
// finished it reports the cause found (ErrEnded after Election.End, or
// ErrDeposed naming the new term's holder).
func (l *Leadership) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Context returns a context cancelled when leadership ends, with the
// first Err as its cause: run the leader's work under it. It follows the
// Session's context: the Session's end cancels it at once (cause ErrLost,
// wrapping the Session's error), whatever the candidate's goroutine is
// doing.
func (l *Leadership) Context() context.Context { return l.ctx }

// Token returns the fencing token: the creation zxid of the leader's node.
// ZooKeeper orders all writes, so a later leader of this election has a
// larger token. No zkcoord candidate leads once the election's sequence
// counter wrapped; a Curator participant may, with a smaller token (see
// docs/protocol.md#sequence-numbers-and-their-wrap).
func (l *Leadership) Token() int64 { return l.token }

// Term returns the term number: the version of the term node after this
// leader bumped it.
func (l *Leadership) Term() int64 { return l.term }

// Fence returns the fence of the leader's node, for Session.GuardedMulti
// and Session.GuardedSet: writes that succeed only while this leader's node
// exists.
func (l *Leadership) Fence() zkcoord.Fence {
	return zkcoord.Fence{Path: l.c.node, Token: l.token, Version: 0, Unique: true}
}

// Node returns the path of the leader's node and ID its participant id.
func (l *Leadership) Node() string { return l.c.node }
func (l *Leadership) ID() string   { return l.c.el.opts.id }

// Resign ends the leadership (Done closes) and then deletes the leader's
// node, so no successor can overlap with it. It waits, bounded by ctx,
// until the node is deleted, and reports if it could not be: then the node
// stays until the Session ends, blocking the candidates behind it. Resign
// after leadership ended deletes the node if it is still there; it returns
// nil once the node is gone.
func (l *Leadership) Resign(ctx context.Context) error { return l.c.Resign(ctx) }

var _ zkcoord.Ownership = (*Leadership)(nil)
