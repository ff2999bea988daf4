package cache

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// supervise runs the cache for NewTreeConfig: one runSession per Session
// that zkcoord.Supervise opens, on the same copy. started is closed once
// the first Session is open. When Supervise ends for another reason than
// Close, a StateChanged Closed event with the cause is the last event.
func (c *Cache) supervise(cfg zkcoord.Config, o options, started chan<- struct{}) error {
	var opts []zkcoord.SuperviseOption
	if o.events != nil {
		opts = append(opts, zkcoord.WithRecoveryEvents(o.events))
	}
	first := true
	err := zkcoord.Supervise(c.ctx, cfg, func(_ context.Context, sess *zkcoord.Session) error {
		initial := first
		if first {
			first = false
			close(started)
		}
		return c.runSession(sess, initial)
	}, opts...)
	if c.ctx.Err() == nil {
		c.out.Push(Event{Type: StateChanged, State: zkcoord.Closed, Err: err})
	}
	return err
}

// last reports whether e is the cache's last event: the terminal state of
// its Session, or with NewTreeConfig the end of Supervise.
func (c *Cache) last(e Event) bool {
	if c.supervised {
		return e.Type == StateChanged && e.State == zkcoord.Closed
	}
	return e.last()
}

// runSession is the owner goroutine's work on one Session: it sets the
// watch, loads the tree (or, on a Session after the first, resyncs the
// copy with it), then applies watch events and resyncs until the cache is
// closed or the Session ends.
func (c *Cache) runSession(sess *zkcoord.Session, initial bool) error {
	c.sess = sess
	sctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	states := sess.Watch(sctx)
	st, ok := <-states // the state at the start, reported for a new Session only
	if !ok {
		return c.ctx.Err()
	}
	if !initial {
		c.renew()
		c.emit(Event{Type: StateChanged, State: st.State, Err: st.Err})
	}
	relayed := make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer close(relayed)
		c.relay(sess, states)
	}()
	err := c.run(sess, initial)
	if sess.Err() != nil {
		// Its terminal state comes before the next Session's events.
		select {
		case <-relayed:
		case <-c.ctx.Done():
		}
	}
	return err
}

// renew readies the copy for a new Session: the old Session's watches
// are gone with it, so every node is to be watched again; events of the
// old watches still on their way are ignored (handle drops them).
func (c *Cache) renew() {
	for _, e := range c.nodes {
		e.dataWatch, e.kidsWatch = 0, 0
	}
	c.rootWatch = 0
	c.watchMu.Lock()
	c.watch = nil
	c.watchMu.Unlock()
}

// run sets the watch, loads the tree (initial) or resyncs it, then applies
// watch events and resyncs until the cache is closed or the Session ends.
func (c *Cache) run(sess *zkcoord.Session, initial bool) error {
	if !c.oneShot {
		if err := c.watchTree(); err != nil {
			return c.ended(err)
		}
	}
	if err := c.syncRoot(); err != nil {
		return c.ended(err)
	}
	if initial {
		c.emit(Event{Type: Initialized})
	} else {
		c.emit(Event{Type: Resynced})
	}
	for {
		select {
		case <-c.ctx.Done():
			return c.ctx.Err()
		case <-sess.Done():
			return sess.Err()
		case <-c.inbox.Ready():
			if err := c.handle(c.inbox.PopAll()); err != nil {
				return c.ended(err)
			}
		}
	}
}

// relay reports the Session's states as they come, even while the owner
// goroutine waits for a read, and asks the owner for a resync after each
// reconnection. The state at the start has been taken by runSession. With
// NewTreeConfig, a Closed state is not passed on: Supervise closes the
// Sessions, and the cache's last event is its own.
func (c *Cache) relay(sess *zkcoord.Session, states <-chan zkcoord.StateChange) {
	defer c.wg.Done()
	for st := range states {
		if c.supervised && st.State == zkcoord.Closed {
			continue
		}
		c.out.Push(Event{Type: StateChanged, State: st.State, Err: st.Err})
		if st.State == zkcoord.Reconnected {
			c.inbox.Push(fired{sess: sess, kind: resync})
		}
	}
}

// ended returns why the run ends after a read failed because the cache
// was closed or the Session ended.
func (c *Cache) ended(err error) error {
	if c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	if s := c.sess.Err(); s != nil {
		return s
	}
	return err
}

// emit queues an event for the reader; it never blocks.
func (c *Cache) emit(ev Event) {
	if c.hideRoot && ev.Node.Path == c.root && ev.Type != Failed {
		return
	}
	c.out.Push(ev)
}

// fatal reports whether a read error ends the cache: the Session ended or
// the cache was closed.
func (c *Cache) fatal(err error) bool {
	return c.ctx.Err() != nil || c.sess.Err() != nil
}

// handle applies what the inbox held, in order. The recursive watch's
// events that came together are applied together, their reads batched.
func (c *Cache) handle(fs []fired) error {
	var changes []zkcoord.Event
	flush := func() error {
		if len(changes) == 0 {
			return nil
		}
		err := c.onChanges(changes)
		changes = changes[:0]
		return err
	}
	for _, f := range fs {
		if f.sess != c.sess {
			continue // of an earlier Session's watch
		}
		if f.kind == treeWatch && f.ev.Type != zkcoord.EventNotWatching {
			changes = append(changes, f.ev)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		var err error
		switch {
		case f.kind == resync:
			if err = c.syncRoot(); err == nil {
				c.emit(Event{Type: Resynced})
			}
		case f.kind == treeWatch:
			err = c.watchEnded(f.ev)
		default:
			err = c.handleOneShot(f)
		}
		if err != nil {
			return err
		}
	}
	return flush()
}

// syncRoot brings the whole cache in line with the server: a load or a
// resync.
func (c *Cache) syncRoot() error {
	if c.oneShot {
		return c.syncRootOneShot()
	}
	return c.syncTree([]string{c.root}, true)
}
