package console

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord"
)

// A watch key names one armed watch: "d:" data, "c:" children, "e:"
// existence, followed by the node's path.
type watchKey string

func dataKey(p string) watchKey   { return watchKey("d:" + p) }
func kidsKey(p string) watchKey   { return watchKey("c:" + p) }
func existsKey(p string) watchKey { return watchKey("e:" + p) }

func (k watchKey) path() string { return string(k[2:]) }

// cached is a node's data and stat, valid while its data watch is armed.
type cached struct {
	data []byte
	stat *zkcoord.Stat
}

// cache holds what the model read, each entry guarded by a watch: an entry
// stays until its watch fires, so reading it again costs nothing and a
// watch is never armed twice. owners records who read each entry; when its
// watch fires they are marked dirty. Only the model's goroutine uses it.
type cache struct {
	m      *model
	data   map[string]cached
	kids   map[string][]string
	exists map[string]bool
	owners map[watchKey]map[string]struct{}
	// owner is who reads now: a recipe path or a walk id.
	owner string
}

func newCache(m *model) *cache {
	return &cache{m: m, data: map[string]cached{}, kids: map[string][]string{},
		exists: map[string]bool{}, owners: map[watchKey]map[string]struct{}{}}
}

func (c *cache) own(k watchKey) {
	o := c.owners[k]
	if o == nil {
		o = map[string]struct{}{}
		c.owners[k] = o
	}
	o[c.owner] = struct{}{}
}

// get reads a node's data and stat. A missing node gives ErrNoNode and
// arms no watch; whoever listed it learns of its return from the parent.
func (c *cache) get(ctx context.Context, p string) ([]byte, *zkcoord.Stat, error) {
	k := dataKey(p)
	if n, ok := c.data[p]; ok {
		c.own(k)
		return n.data, n.stat, nil
	}
	data, st, w, err := c.m.sess.GetW(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	c.data[p] = cached{data, st}
	c.own(k)
	c.m.arm(k, w)
	return data, st, nil
}

// children lists a node's children (unsorted, shared: do not modify).
func (c *cache) children(ctx context.Context, p string) ([]string, error) {
	k := kidsKey(p)
	if kids, ok := c.kids[p]; ok {
		c.own(k)
		return kids, nil
	}
	kids, _, w, err := c.m.sess.ChildrenW(ctx, p)
	if err != nil {
		return nil, err
	}
	c.kids[p] = kids
	c.own(k)
	c.m.arm(k, w)
	return kids, nil
}

// childrenOpt is children with a missing node read as no children.
func (c *cache) childrenOpt(ctx context.Context, p string) ([]string, error) {
	kids, err := c.children(ctx, p)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// has reports whether a node exists, watching for its creation or deletion.
func (c *cache) has(ctx context.Context, p string) (bool, error) {
	k := existsKey(p)
	if ok, cached := c.exists[p]; cached {
		c.own(k)
		return ok, nil
	}
	ok, _, w, err := c.m.sess.ExistsW(ctx, p)
	if err != nil {
		return false, err
	}
	c.exists[p] = ok
	c.own(k)
	c.m.arm(k, w)
	return ok, nil
}

// fired drops the entry of a watch that fired and returns who read it.
func (c *cache) fired(k watchKey) map[string]struct{} {
	switch k[0] {
	case 'd':
		delete(c.data, k.path())
	case 'c':
		delete(c.kids, k.path())
	case 'e':
		delete(c.exists, k.path())
	}
	o := c.owners[k]
	delete(c.owners, k)
	return o
}
