package cache

import (
	"context"
	"errors"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// This file is the cache on one persistent recursive watch (ZooKeeper 3.6
// and later) on its root, set before the first read. The watch reports
// every creation, data change and deletion at the root and below, so no
// node is listed to learn of a new child: each change is one read of the
// node it names, batched with the other changes that came together. Loads
// and resyncs read the tree level by level in batches (multiRead).

// addWatch sets the cache's recursive watch. A test replaces it to play a
// server without persistent watches.
var addWatch = func(ctx context.Context, s *zkcoord.Session, path string) (*zkcoord.PersistentWatch, error) {
	return s.AddWatch(ctx, path, true)
}

// refused holds the Sessions whose server did not know persistent
// watches, until they end, so that their next caches do not ask again: a
// server before 3.6 closes the connection on a request it does not know.
var refused sync.Map // *zkcoord.Session -> struct{}

// watchTree sets the recursive watch on the root and starts following it.
// A server that refuses it (before 3.6 it does not know the request)
// leaves the cache on one-shot watches; only the Session's end or Close is
// an error.
func (c *Cache) watchTree() error {
	if _, ok := refused.Load(c.sess); ok {
		c.oneShot = true
		return nil
	}
	w, err := addWatch(c.ctx, c.sess, c.root)
	if err != nil {
		if c.fatal(err) {
			return err
		}
		c.oneShot = true
		c.sess.Logger().Info("cache: no persistent watch; following with one-shot watches", "path", c.root, "err", err)
		if errors.Is(err, zkcoord.ErrUnimplemented) {
			if _, known := refused.LoadOrStore(c.sess, struct{}{}); !known {
				go func(s *zkcoord.Session) {
					<-s.Done()
					refused.Delete(s)
				}(c.sess)
			}
		}
		return nil
	}
	c.watchMu.Lock()
	c.watch = w
	c.watchMu.Unlock()
	c.wg.Add(1)
	go c.follow(c.sess, w)
	return nil
}

// followHook, when set by a test before a cache starts, runs after each
// event of the recursive watch is queued for the owner goroutine.
var followHook func(zkcoord.Event)

// follow hands the watch's events to the owner goroutine until the watch
// or the cache ends. EventRearmed is not passed on: the Session's
// Reconnected state that comes with it asks for the resync.
func (c *Cache) follow(sess *zkcoord.Session, w *zkcoord.PersistentWatch) {
	defer c.wg.Done()
	for {
		ev, err := w.Next(c.ctx)
		if err != nil {
			return // closed
		}
		if ev.Type == zkcoord.EventRearmed {
			continue
		}
		c.inbox.Push(fired{sess: sess, kind: treeWatch, ev: ev})
		if followHook != nil {
			followHook(ev)
		}
		if ev.Type == zkcoord.EventNotWatching {
			return
		}
	}
}

// watchEnded handles the end of the recursive watch while the cache runs.
// Removed by someone else (from ZooKeeper 3.9 a removal takes every
// recursive watch the Session holds on the path, another cache's too), it
// is set again and the tree read again, since changes may have gone
// unreported meanwhile. The Session's end is reported by its state.
func (c *Cache) watchEnded(ev zkcoord.Event) error {
	if !errors.Is(ev.Err, zkcoord.ErrWatchRemoved) {
		return nil
	}
	c.watchMu.Lock()
	c.watch = nil
	c.watchMu.Unlock()
	if err := c.watchTree(); err != nil {
		return err
	}
	if c.oneShot {
		return c.syncRootOneShot()
	}
	return c.syncTree([]string{c.root}, true)
}

// onChanges applies a run of the watch's events: it reads each node they
// name, within the depth limit, once, in the order of their first event.
func (c *Cache) onChanges(evs []zkcoord.Event) error {
	var paths []string
	seen := map[string]bool{}
	for _, ev := range evs {
		switch ev.Type {
		case zkcoord.EventNodeCreated, zkcoord.EventNodeDataChanged, zkcoord.EventNodeDeleted:
		default:
			continue
		}
		p := ev.Path
		if seen[p] || !within(c.root, p) || depthOf(c.root, p) > c.maxDepth {
			continue
		}
		seen[p] = true
		paths = append(paths, p)
	}
	return c.syncTree(paths, false)
}

// syncTree reads the nodes at paths and reconciles the cache with what it
// finds, level by level, each level in two rounds of batched reads: the
// nodes' data, then the children of those that have any. With deep (a load
// or a resync) it lists every node above the depth limit and reads every
// child; otherwise it lists only the nodes new to the cache, whose
// subtrees it loads: the watch reports every other change on its own.
//
// A node whose ancestor is found gone or replaced in the same round is
// left to that ancestor: its removal takes the node's cached subtree, and
// a new incarnation is listed and its children read afresh. So a subtree
// deleted and created again between two reads is reported once: Removed,
// deepest first, then Added, parents first.
func (c *Cache) syncTree(paths []string, deep bool) error {
	for len(paths) > 0 {
		data, err := c.readBatched(paths, false)
		if err != nil {
			return err
		}
		doomed := map[string]bool{}
		for i, p := range paths {
			e := c.nodes[p]
			if e != nil && (errors.Is(data[i].Err, zkcoord.ErrNoNode) ||
				data[i].Stat != nil && data[i].Stat.Czxid != e.node.Stat.Czxid) {
				doomed[p] = true
			}
		}
		var list []string
		for i, p := range paths {
			if hasAncestorIn(c.root, p, doomed) {
				continue
			}
			prev := c.nodes[p]
			e, err := c.record(p, depthOf(c.root, p), data[i].Data, data[i].Stat, data[i].Err)
			switch {
			case err != nil:
				return err
			case e == nil || e.kids == nil || !deep && e == prev:
				continue
			case e.node.Stat.NumChildren == 0:
				// Nothing to list: the read saw no child.
				if _, err := c.listed(e, p, nil, nil, deep); err != nil {
					return err
				}
				continue
			}
			list = append(list, p)
		}
		kids, err := c.readBatched(list, true)
		if err != nil {
			return err
		}
		var next []string
		for i, p := range list {
			e := c.nodes[p]
			if e == nil {
				continue
			}
			names, err := c.listed(e, p, kids[i].Children, kids[i].Err, deep)
			if err != nil {
				return err
			}
			for _, k := range names {
				next = append(next, zkcoord.Join(p, k))
			}
		}
		paths = next
	}
	return nil
}

// hasAncestorIn reports whether a proper ancestor of path, up to root, is
// in set.
func hasAncestorIn(root, path string, set map[string]bool) bool {
	for p := path; p != root && p != "/"; {
		p = zkcoord.Parent(p)
		if set[p] {
			return true
		}
	}
	return false
}
