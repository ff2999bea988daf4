package cache

import (
	"errors"
	"sort"

	"github.com/zkcoord/zkcoord"
)

// run is the owner goroutine: it loads the tree, then applies watch events
// and resyncs, one at a time, until the cache is closed or the Session
// ends.
func (c *Cache) run(states <-chan zkcoord.StateChange) error {
	c.wg.Add(1)
	go c.relay(states)
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
			for _, f := range c.inbox.PopAll() {
				if err := c.handle(f); err != nil {
					return c.ended(err)
				}
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

// handle applies one watch event.
func (c *Cache) handle(f fired) error {
	if f.kind == resync {
		if err := c.syncRoot(); err != nil {
			return err
		}
		c.emit(Event{Type: Resynced})
		return nil
	}
	if f.ev.Type == zkcoord.EventNotWatching {
		return nil // the Session is ending; its state change follows
	}
	if f.kind == existsWatch {
		if f.id != c.rootWatch {
			return nil
		}
		c.rootWatch = 0
		return c.syncRoot()
	}
	e := c.nodes[f.path]
	switch {
	case e == nil:
		return nil // the node left the cache since
	case f.kind == dataWatch && f.id == e.dataWatch:
		e.dataWatch = 0
		if brokenDeletion && f.ev.Type == zkcoord.EventNodeDeleted {
			c.remove(f.path)
			if f.path == c.root {
				return c.syncRoot()
			}
			return nil
		}
		// A deletion is read again rather than applied: the node may have
		// been created again, and its parent listed since, naming the new
		// node as one the cache holds. The read finds the node gone, or a
		// new incarnation (another czxid) that replaces the cached one.
		if f.path == c.root && f.ev.Type == zkcoord.EventNodeDeleted {
			return c.syncRoot() // and, if it is gone, wait for it again
		}
		return c.sync([]string{f.path}, false)
	case f.kind == kidsWatch && f.id == e.kidsWatch:
		e.kidsWatch = 0
		// Listed again even after a deletion: the node may exist again,
		// its entry replaced while this watch was outstanding. If it is
		// gone, the data watch reports it.
		return c.sync([]string{f.path}, false)
	}
	return nil
}

// syncRoot brings the whole cache in line with the server, or, if the root
// does not exist, waits for its creation.
func (c *Cache) syncRoot() error {
	for {
		if err := c.sync([]string{c.root}, true); err != nil {
			return err
		}
		if c.nodes[c.root] != nil || c.rootWatch != 0 {
			return nil
		}
		ok, _, w, err := c.sess.ExistsW(c.ctx, c.root)
		if err != nil {
			if c.fatal(err) {
				return err
			}
			c.emit(Event{Type: Failed, Node: Node{Path: c.root}, Err: err})
			return nil
		}
		c.rootWatch = c.arm(c.root, existsWatch, w)
		if !ok {
			return nil
		}
		// Created meanwhile: the watch just set is a data watch that the
		// next load would duplicate; forget it and load.
		c.rootWatch = 0
	}
}

// sync reads the nodes at paths and reconciles the cache with what it
// finds, level by level, reporting each difference. With deep, it descends
// into every child (a load or a resync); otherwise only into new children,
// whose subtrees it loads.
func (c *Cache) sync(paths []string, deep bool) error {
	level := make([]read, 0, len(paths))
	for _, p := range paths {
		level = append(level, c.readFor(p, depthOf(c.root, p), deep))
	}
	for len(level) > 0 {
		var next []read
		for _, r := range c.fetch(c.ctx, level) {
			kids, again, err := c.apply(r, deep)
			if err != nil {
				return err
			}
			if again {
				next = append(next, c.readFor(r.path, r.depth, true))
			}
			for _, k := range kids {
				next = append(next, c.readFor(zkcoord.Join(r.path, k), r.depth+1, true))
			}
		}
		level = next
	}
	return nil
}

// readFor says what to read of path. A node not cached yet is read whole,
// with watches. Of a cached node, a load or resync (deep) reads everything
// again; otherwise only what a fired watch is no longer guarding. New
// watches are asked for only where none is set, so that no watch is ever
// set twice.
func (c *Cache) readFor(path string, depth int, deep bool) read {
	r := read{path: path, depth: depth, readData: true, watchData: true, listKids: depth < c.maxDepth, watchKids: true}
	if e := c.nodes[path]; e != nil {
		r.readData = deep || e.dataWatch == 0
		r.watchData = e.dataWatch == 0
		r.listKids = r.listKids && (deep || e.kidsWatch == 0)
		r.watchKids = e.kidsWatch == 0
	}
	return r
}

// apply records one node's read and returns the children to read next;
// again asks to read the node once more, whole.
func (c *Cache) apply(r result, deep bool) (next []string, again bool, err error) {
	e := c.nodes[r.path]
	if !r.readData {
		if e == nil {
			return nil, false, nil
		}
		return c.applyKids(e, r, deep)
	}
	if r.err != nil {
		if !errors.Is(r.err, zkcoord.ErrNoNode) {
			if c.fatal(r.err) {
				return nil, false, r.err
			}
			c.emit(Event{Type: Failed, Node: Node{Path: r.path}, Err: r.err})
			return nil, false, nil
		}
		if e != nil {
			c.remove(r.path)
		}
		return nil, false, nil
	}
	var replaced *entry
	if e != nil && e.node.Stat.Czxid != r.stat.Czxid {
		// Deleted and created again while unobserved: a different node.
		// The watches outstanding on the path are not asked for again by
		// this read; they fire for the new node (the server reports the
		// deletion, or the change when the watches are set again after a
		// reconnection), so the new entry keeps their ids.
		c.remove(r.path)
		replaced, e = e, nil
	}
	node := Node{Path: r.path, Data: r.data, Stat: *r.stat}
	switch {
	case e == nil:
		e = &entry{node: node, depth: r.depth}
		if r.depth < c.maxDepth {
			e.kids = map[string]struct{}{}
		}
		if replaced != nil {
			e.dataWatch, e.kidsWatch = replaced.dataWatch, replaced.kidsWatch
		}
		c.put(r.path, e)
		c.emit(Event{Type: Added, Node: node})
	case e.node.Stat.Mzxid != r.stat.Mzxid:
		c.update(e, node)
		c.emit(Event{Type: Updated, Node: node})
	default:
		c.update(e, node) // the stat may differ in its children's fields
	}
	if r.dataW != nil {
		e.dataWatch = c.arm(r.path, dataWatch, r.dataW)
	}
	if !r.listKids {
		// A node that replaced a cached one while only its data was
		// read still needs its children read.
		return nil, replaced != nil && e.kids != nil, nil
	}
	return c.applyKids(e, r, deep)
}

// applyKids compares the children read of a cached node with the cached
// ones: it removes those gone and returns those to read. The children a
// node's entry names are exactly those the cache holds (put and remove
// keep them so), so a child listed but not held, because its read found
// it gone or failed, is read again at the next listing.
func (c *Cache) applyKids(e *entry, r result, deep bool) ([]string, bool, error) {
	if !r.listKids {
		return nil, false, nil
	}
	if r.kidsErr != nil {
		if errors.Is(r.kidsErr, zkcoord.ErrNoNode) {
			return nil, false, nil // deleted just now: its data watch reports it
		}
		if c.fatal(r.kidsErr) {
			return nil, false, r.kidsErr
		}
		c.emit(Event{Type: Failed, Node: e.node, Err: r.kidsErr})
		return nil, false, nil
	}
	if r.kidsW != nil {
		e.kidsWatch = c.arm(r.path, kidsWatch, r.kidsW)
	}
	now := make(map[string]struct{}, len(r.kids))
	for _, k := range r.kids {
		now[k] = struct{}{}
	}
	var gone, next []string
	for k := range e.kids {
		if _, ok := now[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		c.remove(zkcoord.Join(r.path, k))
	}
	sorted := append([]string(nil), r.kids...)
	sort.Strings(sorted)
	for _, k := range sorted {
		_, held := e.kids[k]
		if !held || deep {
			next = append(next, k)
		}
	}
	return next, false, nil
}

// put adds an entry, and its name to its parent's children, under the lock
// readers take.
func (c *Cache) put(path string, e *entry) {
	c.mu.Lock()
	c.nodes[path] = e
	if path != c.root {
		if p := c.nodes[zkcoord.Parent(path)]; p != nil && p.kids != nil {
			p.kids[zkcoord.Base(path)] = struct{}{}
		}
	}
	c.mu.Unlock()
}

func (c *Cache) update(e *entry, n Node) {
	c.mu.Lock()
	e.node = n
	c.mu.Unlock()
}

// remove drops a node and its cached descendants, reporting the deepest
// first.
func (c *Cache) remove(path string) {
	e := c.nodes[path]
	if e == nil {
		return
	}
	kids := make([]string, 0, len(e.kids))
	for k := range e.kids {
		kids = append(kids, k)
	}
	sort.Strings(kids)
	for _, k := range kids {
		c.remove(zkcoord.Join(path, k))
	}
	c.mu.Lock()
	delete(c.nodes, path)
	if p := c.nodes[zkcoord.Parent(path)]; p != nil && path != c.root {
		delete(p.kids, zkcoord.Base(path))
	}
	c.mu.Unlock()
	c.emit(Event{Type: Removed, Node: e.node})
}

// depthOf returns how many levels path is below root.
func depthOf(root, path string) int {
	if path == root {
		return 0
	}
	n := 0
	for _, ch := range path[len(root):] {
		if ch == '/' {
			n++
		}
	}
	return n
}
