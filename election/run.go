package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
)

// run is the candidate's state machine.
func (c *candidate) run() {
	e := c.el
	states := &elect.StateFeed{C: e.sess.Watch(c.runCtx), On: c.sessionEvent}
	c.eng = elect.New(e.sess, &e.lay, c.node, elect.Config{Recheck: e.opts.recheck, States: states, Hooks: &e.hooks, Delay: c.delay})
	cause := c.loop(states)
	c.finish(cause)
}

// loop follows until the candidate leads, then leads until loss. The
// engine (internal/elect) finds the candidate's place, watches its
// predecessor and re-checks periodically.
func (c *candidate) loop(states *elect.StateFeed) error {
	notified := false
	for {
		c.emit(Event{Type: EventDetermine, Notified: notified})
		p, err := c.eng.Determine(c.runCtx)
		if err != nil {
			return c.fail("read participants of", err)
		}
		if p.Leads() {
			return c.lead(p, states)
		}
		pred, predID := p.Pred, string(p.PredData)
		c.update(func(s *snapshot) { s.Role, s.Following, s.FollowingID = roleFollowing, pred, predID })
		c.emit(Event{Type: EventFollowing, Following: pred, FollowingID: predID})
		c.place()
		if notified, err = c.eng.Wait(c.runCtx, p); err != nil {
			return c.fail("wait in", err)
		}
	}
}

// fail turns an engine error into the candidate's error.
func (c *candidate) fail(op string, err error) error {
	switch {
	case errors.Is(err, elect.ErrMissing):
		return c.missing()
	case errors.Is(err, ErrEnded), errors.Is(err, zkcoord.ErrNotOwner):
		return err
	}
	return c.wrap(op, err)
}

// missing explains why the candidate's node is gone.
func (c *candidate) missing() error {
	if c.el.sess.Err() != nil {
		return c.lostErr()
	}
	if ended, err := c.el.isEnded(bg); err == nil && ended {
		return ErrEnded
	}
	if cause := context.Cause(c.runCtx); cause != nil {
		return cause
	}
	return fmt.Errorf("%w: %s", ErrNodeDeleted, c.node)
}

func (c *candidate) sessionEvent(sc zkcoord.StateChange) {
	switch sc.State {
	case zkcoord.Suspended:
		c.emit(Event{Type: EventSuspended})
	case zkcoord.Reconnected:
		c.emit(Event{Type: EventReconnected})
	}
}
