package cache

import (
	"errors"
	"sort"
	"strings"

	"github.com/zkcoord/zkcoord"
)

// record applies a read of one node's data, whichever way the cache
// watches: it adds the node, replaces an earlier incarnation (another
// czxid: deleted and created again unseen), reports a change of its data,
// or removes it when the read found it gone. It returns the node's entry:
// nil when the cache does not hold it (gone, unreadable, or its parent is
// not cached); an entry other than the one cached before is new to the
// cache.
func (c *Cache) record(path string, depth int, data []byte, stat *zkcoord.Stat, err error) (*entry, error) {
	e := c.nodes[path]
	if err != nil {
		if !errors.Is(err, zkcoord.ErrNoNode) {
			if c.fatal(err) {
				return nil, err
			}
			c.emit(Event{Type: Failed, Node: Node{Path: path}, Err: err})
			return nil, nil
		}
		if e != nil {
			c.remove(path)
		}
		return nil, nil
	}
	c.largest = max(c.largest, int(stat.DataLength))
	if e != nil && e.node.Stat.Czxid != stat.Czxid {
		c.remove(path)
		e = nil
	}
	node := Node{Path: path, Data: data, Stat: *stat}
	switch {
	case e == nil:
		if path != c.root && c.nodes[zkcoord.Parent(path)] == nil {
			return nil, nil // its parent left the cache, or never entered it
		}
		e = &entry{node: node, depth: depth}
		if depth < c.maxDepth {
			e.kids = map[string]struct{}{}
		}
		c.put(path, e)
		c.emit(Event{Type: Added, Node: node})
	case e.node.Stat.Mzxid != stat.Mzxid:
		c.update(e, node)
		c.emit(Event{Type: Updated, Node: node})
	default:
		c.update(e, node) // the stat may differ in its children's fields
	}
	return e, nil
}

// listed compares the children read of a cached node with the cached
// ones: it removes those gone and returns those to read, every child with
// deep, else those the cache does not hold. The children a node's entry
// names are exactly those the cache holds (put and remove keep them so),
// so a child listed but not held, because its read found it gone or
// failed, is read again at the next listing.
func (c *Cache) listed(e *entry, path string, kids []string, err error, deep bool) ([]string, error) {
	if err != nil {
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil, nil // deleted just now: its deletion is reported on its own
		}
		if c.fatal(err) {
			return nil, err
		}
		c.emit(Event{Type: Failed, Node: e.node, Err: err})
		return nil, nil
	}
	now := make(map[string]struct{}, len(kids))
	for _, k := range kids {
		now[k] = struct{}{}
		c.longestName = max(c.longestName, len(k))
	}
	var gone, next []string
	for k := range e.kids {
		if _, ok := now[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		c.remove(zkcoord.Join(path, k))
	}
	sorted := append([]string(nil), kids...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if _, held := e.kids[k]; !held || deep {
			next = append(next, k)
		}
	}
	return next, nil
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
	switch root {
	case path:
		return 0
	case "/":
		return strings.Count(path, "/")
	}
	return strings.Count(path[len(root):], "/")
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	return path == root || root == "/" || strings.HasPrefix(path, root) && len(path) > len(root) && path[len(root)] == '/'
}
