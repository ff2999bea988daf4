package rebalance

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// run is the client's top-level state machine for Start (one goroutine):
// it runs the roles on the caller's Session until Stop, a failure or the
// end of the Session.
//
//	NoRole --register--> Follower <--> Coordinator
//	   ^                     |              |
//	   +--- recover <--------+--------------+---> Stopped | Aborted
//
// With StartConfig, supervise runs the same machine once per Session, and
// zkcoord.Supervise provides the recover edge.
func (c *Client) run(sess *zkcoord.Session, reg registration) {
	c.finish(c.result(c.runSession(sess, reg)))
}

// supervise runs the client for StartConfig under zkcoord.Supervise: each
// Session it opens carries one incarnation of the client (a new client
// node, new barriers, new tokens), and with auto-recovery a loss or a
// recoverable error leads to the next Session and incarnation. started
// receives nil once the first incarnation is registered, or why it could
// not be.
func (c *Client) supervise(started chan<- error) {
	var (
		registered bool  // the first incarnation joined the group
		last       error // what ended the latest incarnation
	)
	work := func(ctx context.Context, sess *zkcoord.Session) error {
		c.setState(NoRole)
		reg, err := c.join(ctx, sess)
		if err != nil {
			return err
		}
		if !registered {
			registered = true
			started <- nil
		}
		last = c.runSession(sess, reg)
		c.setState(NoRole)
		return last
	}
	restart := func(err error) bool {
		if !registered || !c.opts.autoRecovery || !recoverable(err) {
			return false
		}
		c.log.Warn("rebalance: lost membership, recovering", "group", c.lay.base, "err", err)
		return true
	}
	opts := []zkcoord.SuperviseOption{zkcoord.WithRestartIf(restart), zkcoord.WithMaxBackoff(c.opts.maxBackoff)}
	if c.opts.events != nil {
		opts = append(opts, zkcoord.WithRecoveryEvents(c.opts.events))
	}
	err := zkcoord.Supervise(c.stopCtx, c.cfg, work, opts...)
	if !registered {
		// Never joined: StartConfig reports it, and there is no client to
		// abort.
		started <- err
		c.stopCause(ErrStopped)
		close(c.done)
		return
	}
	if c.stopCtx.Err() != nil {
		err = last // stopped: ErrStopped, or a handler that failed meanwhile
	}
	c.finish(c.result(err))
}

// result is how a client that ended with err ends: nil after Stop (unless a
// handler failed), otherwise err.
func (c *Client) result(err error) error {
	if errors.Is(err, ErrStopped) || (c.stopCtx.Err() != nil && !errors.Is(err, ErrHandler)) {
		return nil
	}
	return err
}

// runSession runs the member and the roles on one Session until Stop, a
// failure or the end of the Session, then stops everything. It returns
// ErrStopped after Stop, otherwise the cause of the end. Every resource has
// been stopped when it returns.
func (c *Client) runSession(sess *zkcoord.Session, reg registration) error {
	m := newMember(c, sess, reg)
	go m.run()
	roleCtx, cancelRole := context.WithCancel(context.Background())
	r := newRole(c, sess, reg)
	go r.run(roleCtx)

	var cause error
	select {
	case <-c.stopCtx.Done():
		cause = ErrStopped
	case <-m.done:
		cause = m.err
	case <-r.done:
		cause = r.err
	case <-sess.Done():
		cause = sess.Err()
	}
	cancelRole()
	<-r.done
	if sess.Err() == nil {
		// Leave first, so that the coordinator starts moving our resources
		// while we stop them; their barriers keep the new owners out until
		// our handlers have returned.
		c.deregister(sess, reg)
	}
	m.stop(cause)
	<-m.done
	if errors.Is(m.err, ErrHandler) {
		cause = m.err // a handler failed, possibly while stopping
	}
	if cause == nil {
		cause = ErrInconsistent
	}
	return cause
}

// deregister deletes the client node.
func (c *Client) deregister(sess *zkcoord.Session, reg registration) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
	defer cancel()
	if err := recipe.EnsureDeleted(ctx, sess, reg.path); err != nil {
		c.log.Warn("rebalance: could not delete client node", "path", reg.path, "err", err)
	}
}

// sessionEnded reports whether err comes from the end of a Session.
func sessionEnded(err error) bool {
	return errors.Is(err, zkcoord.ErrSessionLost) || errors.Is(err, zkcoord.ErrSessionExpired) ||
		errors.Is(err, zkcoord.ErrSessionClosed)
}

// recoverable reports whether auto-recovery may continue after err.
func recoverable(err error) bool {
	switch {
	case errors.Is(err, ErrHandler), errors.Is(err, ErrInvalidOption),
		errors.Is(err, zkcoord.ErrAuthFailed), errors.Is(err, zkcoord.ErrInvalidConfig),
		errors.Is(err, zkcoord.ErrNoAuth), errors.Is(err, zkcoord.ErrBadData),
		errors.Is(err, alloc.ErrCorrupt), errors.Is(err, alloc.ErrTooLarge):
		return false
	}
	return true
}
