package cache

import (
	"github.com/zkcoord/zkcoord"
)

// run is the owner goroutine: it sets the watch, loads the tree, then
// applies watch events and resyncs until the cache is closed or the
// Session ends.
func (c *Cache) run(states <-chan zkcoord.StateChange) error {
	c.wg.Add(1)
	go c.relay(states)
	if !c.oneShot {
		if err := c.watchTree(); err != nil {
			return c.ended(err)
		}
	}
	if err := c.syncRoot(); err != nil {
		return c.ended(err)
	}
	c.emit(Event{Type: Initialized})
	for {
		select {
		case <-c.ctx.Done():
			return c.ctx.Err()
		case <-c.sess.Done():
			return c.sess.Err()
		case <-c.inbox.Ready():
			if err := c.handle(c.inbox.PopAll()); err != nil {
				return c.ended(err)
			}
		}
	}
}

// relay reports the Session's states as they come, even while the owner
// goroutine waits for a read, and asks the owner for a resync after each
// reconnection. The first state, the one at the start, is not reported.
func (c *Cache) relay(states <-chan zkcoord.StateChange) {
	defer c.wg.Done()
	first := true
	for st := range states {
		if first {
			first = false
			continue
		}
		c.out.Push(Event{Type: StateChanged, State: st.State, Err: st.Err})
		if st.State == zkcoord.Reconnected {
			c.inbox.Push(fired{kind: resync})
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
