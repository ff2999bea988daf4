package rebalance

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// run is the client's top-level state machine (one goroutine): it runs the
// roles on one Session at a time and, after a loss, either opens a new
// Session and joins again (auto-recovery) or ends.
//
//	NoRole --register--> Follower <--> Coordinator
//	   ^                     |              |
//	   +--- recover <--------+--------------+---> Stopped | Aborted
func (c *Client) run(sess *zkcoord.Session, reg registration) {
	backoff := 50 * time.Millisecond
	for {
		err := c.runSession(sess, reg)
		if c.ownsSess {
			ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout()+closeGrace)
			sess.Close(ctx)
			cancel()
		}
		if errors.Is(err, ErrStopped) || (c.stopCtx.Err() != nil && !errors.Is(err, ErrHandler)) {
			err = nil // ended by Stop
		}
		if err == nil || !c.recover || !recoverable(err) {
			c.finish(err)
			return
		}
		c.log.Warn("rebalance: lost membership, recovering", "group", c.lay.base, "err", err)
		c.setState(NoRole)
		for {
			wait := backoff/2 + rand.N(backoff/2+1)
			backoff = min(backoff*2, c.opts.maxBackoff)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.stopCtx.Done():
				t.Stop()
				c.finish(nil)
				return
			}
			sess, reg, err = c.connect(c.stopCtx)
			if err == nil {
				break
			}
			if c.stopCtx.Err() != nil {
				c.finish(nil)
				return
			}
			if !recoverable(err) {
				c.finish(err)
				return
			}
			c.log.Info("rebalance: recovery attempt failed", "group", c.lay.base, "err", err)
		}
		backoff = 50 * time.Millisecond
	}
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
	err := sess.Retry(ctx, func(ctx context.Context) error {
		err := sess.Delete(ctx, reg.path, -1)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		return err
	})
	if err != nil {
		c.log.Warn("rebalance: could not delete client node", "path", reg.path, "err", err)
	}
}

// closeGrace bounds how long closing a Session may take beyond its timeout.
const closeGrace = 5 * time.Second

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
