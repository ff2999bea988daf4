package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
)

// lead takes office and holds it until loss.
func (c *candidate) lead(p elect.Place, states *elect.StateFeed) error {
	off, err := c.takeOffice(p)
	if err != nil {
		return err
	}
	termW, err := c.watchOffice(off)
	if err != nil {
		return err
	}
	return c.hold(c.begin(off), off, termW, states)
}

// takeOffice bumps the term and writes the leader node (see
// elect.Contender.TakeOffice).
func (c *candidate) takeOffice(p elect.Place) (elect.Office, error) {
	off, err := c.eng.TakeOffice(c.runCtx, p)
	if err != nil {
		return off, c.fail("take office in", err)
	}
	// From here on, finish deletes the leader node with the candidate's
	// node, guarded by the term, even if the checks below fail.
	c.office = &off
	return off, nil
}

// watchOffice watches the term (a bump by anyone else deposes this
// leader) and the candidate's node (deleted by someone else).
func (c *candidate) watchOffice(off elect.Office) (<-chan zkcoord.Event, error) {
	termW, data, err := c.eng.WatchTerm(c.runCtx, off)
	switch {
	case errors.Is(err, elect.ErrTermGone):
		// The leader node cannot be deleted under a term guard now; it
		// stays until the session ends but names a node that finish
		// deletes, so observers do not see it as Acting.
		return nil, fmt.Errorf("%w: term node deleted", ErrDeposed)
	case errors.Is(err, elect.ErrTermChanged):
		return nil, termChanged(data)
	case errors.Is(err, elect.ErrMissing):
		return nil, c.missing()
	case err != nil:
		return nil, c.wrap("watch term in", err)
	}
	return termW, nil
}

// begin starts the leadership and tells everyone.
func (c *candidate) begin(off elect.Office) *Leadership {
	l := newLeadership(c, off.Token, off)
	c.mu.Lock()
	c.leadership = l
	c.mu.Unlock()
	c.update(func(s *snapshot) {
		s.Role, s.Following, s.FollowingID, s.Token, s.Term = roleLeading, "", "", off.Token, off.Term
	})
	c.emit(Event{Type: EventElected, Token: off.Token, Term: off.Term})
	c.after(func() { close(c.elected) })
	c.place()
	return l
}

// hold keeps the leadership until a notification, the periodic re-check
// (which catches a lost notification), the Session's end or a stop.
func (c *candidate) hold(l *Leadership, off elect.Office, termW <-chan zkcoord.Event, states *elect.StateFeed) error {
	e := c.el
	t := c.eng.Keep(off, termW)
	defer t.Stop()
	revoked := l.revoked
	for {
		select {
		case <-revoked:
			revoked = nil
			c.emit(Event{Type: EventRevokeRequested, Token: off.Token, Term: off.Term})
		case end := <-t.Over():
			// The leadership ends at once; deposed and nodeDeleted read
			// only to explain why (Err).
			switch {
			case e.sess.Err() != nil:
				return c.lostErr()
			case errors.Is(end, elect.ErrMissing):
				return c.nodeDeleted(l)
			}
			return c.deposed(l)
		case sc, ok := <-states.C:
			states.Handle(sc, ok)
		case <-e.sess.Done():
			return c.lostErr()
		case <-c.runCtx.Done():
			return context.Cause(c.runCtx)
		}
	}
}

// deposed ends the leadership because the term changed, then reads the
// term node to say why.
func (c *candidate) deposed(l *Leadership) error {
	e := c.el
	if h := e.leaderNotified; h != nil {
		h(c.node)
	}
	l.end(fmt.Errorf("%w: the term node changed", ErrDeposed))
	data, _, err := e.sess.Get(bg, e.opts.termPath)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return fmt.Errorf("%w: term changed (%v)", ErrDeposed, err)
	}
	return termChanged(data)
}

// nodeDeleted ends the leadership because the candidate's node is gone.
func (c *candidate) nodeDeleted(l *Leadership) error {
	if h := c.el.leaderNotified; h != nil {
		h(c.node)
	}
	l.end(fmt.Errorf("%w: %s", ErrNodeDeleted, c.node))
	return c.missing()
}

// termChanged explains a change of the term node seen by a leader.
func termChanged(data []byte) error {
	r, err := decodeTerm(data)
	switch {
	case err != nil:
		return fmt.Errorf("%w: term node rewritten with data this package cannot read", ErrDeposed)
	case r.Ended:
		return ErrEnded
	}
	return fmt.Errorf("%w: term taken by %q (%s)", ErrDeposed, r.ID, r.Node)
}
