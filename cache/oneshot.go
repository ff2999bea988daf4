package cache

import (
	"github.com/zkcoord/zkcoord"
)

// This file is the cache on one-shot watches: a data watch on every cached
// node and a child watch on every node above the depth limit, each set
// again by the read its event causes. Node caches and depth-0 trees use
// it on every server, the others on servers without persistent watches
// (before ZooKeeper 3.6).

// handleOneShot applies the event of one of the cache's one-shot watches.
func (c *Cache) handleOneShot(f fired) error {
	if f.ev.Type == zkcoord.EventNotWatching {
		return nil // the Session is ending; its state change follows
	}
	if f.kind == existsWatch {
		if f.id != c.rootWatch {
			return nil
		}
		c.rootWatch = 0
		return c.syncRootOneShot()
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
				return c.syncRootOneShot()
			}
			return nil
		}
		// A deletion is read again rather than applied: the node may have
		// been created again, and its parent listed since, naming the new
		// node as one the cache holds. The read finds the node gone, or a
		// new incarnation (another czxid) that replaces the cached one.
		if f.path == c.root && f.ev.Type == zkcoord.EventNodeDeleted {
			return c.syncRootOneShot() // and, if it is gone, wait for it again
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

// syncRootOneShot brings the whole cache in line with the server, or, if
// the root does not exist, waits for its creation.
func (c *Cache) syncRootOneShot() error {
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
	prev := c.nodes[r.path]
	e := prev
	if r.readData {
		if e, err = c.record(r.path, r.depth, r.data, r.stat, r.err); e == nil || err != nil {
			return nil, false, err
		}
		if prev != nil && e != prev {
			// A new incarnation. The watches outstanding on the path are
			// not asked for again by this read; they fire for the new
			// node (the server reports the old node's deletion, or the
			// change when the watches are set again after a
			// reconnection), so the new entry keeps their ids.
			e.dataWatch, e.kidsWatch = prev.dataWatch, prev.kidsWatch
		}
		if r.dataW != nil {
			e.dataWatch = c.arm(r.path, dataWatch, r.dataW)
		}
	}
	if e == nil {
		return nil, false, nil
	}
	if !r.listKids {
		// A node that replaced a cached one while only its data was read
		// still needs its children read.
		return nil, r.readData && prev != nil && e != prev && e.kids != nil, nil
	}
	if r.kidsErr == nil && r.kidsW != nil {
		e.kidsWatch = c.arm(r.path, kidsWatch, r.kidsW)
	}
	next, err = c.listed(e, r.path, r.kids, r.kidsErr, deep)
	return next, false, err
}
