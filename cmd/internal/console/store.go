package console

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cache"
	"github.com/zkcoord/zkcoord/internal/fifo"
)

// A key names what a read depended on, followed by a path: "n:" a node
// (its data, its stat, whether it exists), "c:" a node's children, "l:"
// the initial load of the cache rooted there.
type key string

func nodeKey(p string) key    { return key("n:" + p) }
func kidsKey(p string) key    { return key("c:" + p) }
func loadKey(root string) key { return key("l:" + root) }

// errLoading is returned by a read of a node whose cache has not finished
// its initial load; the reader is marked dirty once it has.
var errLoading = errors.New("console: loading")

// store is the model's copy of the tree, kept by caches of package cache:
// one tree cache for each of the console's roots and of the paths named
// in Options.Paths outside them, each on one persistent recursive watch
// where the server has them, started when first read. A path outside
// every tree (an election's <path>-term and <path>-leader siblings, when
// the election is at a root) is followed by a node cache of its own,
// which holds its data only.
//
// Reads never wait for ZooKeeper. owners records who read what; when the
// caches report a change, they are marked dirty, and read again. Only the
// model's goroutine uses a store, except that the caches' events reach it
// through a queue.
type store struct {
	sess   *zkcoord.Session
	trees  []string
	caches map[string]*followed // by root
	events *fifo.Queue[change]
	wg     sync.WaitGroup // the goroutines forwarding the caches' events
	// failed holds why a node could not be read (a Failed event), until
	// it is added or removed.
	failed map[string]error
	owners map[key]map[string]struct{}
	// owner is who reads now: a recipe path or a walk id.
	owner string
}

// followed is one cache and what the store knows of it.
type followed struct {
	c      *cache.Cache
	loaded bool // Initialized was received
	// resyncs counts its Reconnected states not yet followed by Resynced.
	resyncs int
}

// change is one event of the cache rooted at root.
type change struct {
	root string
	ev   cache.Event
}

// newStore returns a store of what sess shows at and under paths: the
// fewest trees that hold them all.
func newStore(sess *zkcoord.Session, paths []string) *store {
	var trees []string
	for _, p := range paths {
		if !slices.ContainsFunc(paths, func(q string) bool { return q != p && under(q, p) }) && !slices.Contains(trees, p) {
			trees = append(trees, p)
		}
	}
	return &store{sess: sess, trees: trees, caches: map[string]*followed{}, events: fifo.New[change](),
		failed: map[string]error{}, owners: map[key]map[string]struct{}{}}
}

// under reports whether p is root or below it.
func under(root, p string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

func (s *store) own(k key) {
	o := s.owners[k]
	if o == nil {
		o = map[string]struct{}{}
		s.owners[k] = o
	}
	o[s.owner] = struct{}{}
}

// cacheOf returns the cache that holds p, started if need be, once it
// has loaded; errLoading until then.
func (s *store) cacheOf(p string) (*cache.Cache, error) {
	root, tree := p, false
	if i := slices.IndexFunc(s.trees, func(t string) bool { return under(t, p) }); i >= 0 {
		root, tree = s.trees[i], true
	}
	f := s.caches[root]
	if f == nil {
		var c *cache.Cache
		var err error
		if tree {
			c, err = cache.NewTree(s.sess, root)
		} else {
			c, err = cache.NewNode(s.sess, root)
		}
		if err != nil {
			return nil, err
		}
		f = &followed{c: c}
		s.caches[root] = f
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for ev := range c.Events() {
				s.events.Push(change{root, ev})
			}
		}()
	}
	if !f.loaded {
		s.own(loadKey(root))
		return nil, errLoading
	}
	return f.c, nil
}

// node returns the cached node at p and its cache: ErrNoNode if it does
// not exist, or why it could not be read.
func (s *store) node(p string) (cache.Node, *cache.Cache, error) {
	c, err := s.cacheOf(p)
	if err != nil {
		return cache.Node{}, nil, err
	}
	s.own(nodeKey(p))
	n, ok := c.Get(p)
	if !ok {
		if err := s.failed[p]; err != nil {
			return cache.Node{}, nil, err
		}
		return cache.Node{}, nil, zkcoord.ErrNoNode
	}
	return n, c, nil
}

// get reads a node's data and stat.
func (s *store) get(p string) ([]byte, *zkcoord.Stat, error) {
	n, _, err := s.node(p)
	if err != nil {
		return nil, nil, err
	}
	return n.Data, &n.Stat, nil
}

// children lists a node's children, sorted; a node outside every tree
// has none listed.
func (s *store) children(p string) ([]string, error) {
	_, c, err := s.node(p)
	if err != nil {
		return nil, err
	}
	s.own(kidsKey(p))
	return c.Children(p), nil
}

// childrenOpt is children with a missing node read as no children.
func (s *store) childrenOpt(p string) ([]string, error) {
	kids, err := s.children(p)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// has reports whether a node exists.
func (s *store) has(p string) (bool, error) {
	_, _, err := s.node(p)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return false, nil
	}
	return err == nil, err
}

// apply takes in one event of a cache and marks dirty who read what it
// changed.
func (s *store) apply(ch change, dirty map[string]struct{}) {
	fire := func(keys ...key) {
		for _, k := range keys {
			for o := range s.owners[k] {
				dirty[o] = struct{}{}
			}
			delete(s.owners, k)
		}
	}
	f := s.caches[ch.root]
	p := ch.ev.Node.Path
	switch ch.ev.Type {
	case cache.Added, cache.Removed:
		delete(s.failed, p)
		fire(nodeKey(p), kidsKey(p), kidsKey(zkcoord.Parent(p)))
	case cache.Updated:
		fire(nodeKey(p))
	case cache.Failed:
		s.failed[p] = ch.ev.Err
		fire(nodeKey(p), kidsKey(p), kidsKey(zkcoord.Parent(p)))
	case cache.Initialized:
		f.loaded = true
		fire(loadKey(ch.root))
	case cache.StateChanged:
		if ch.ev.State == zkcoord.Reconnected {
			f.resyncs++
		}
	case cache.Resynced:
		f.resyncs--
	}
}

// busy reports whether a cache is loading or resyncing: what it holds may
// then be part old, part new.
func (s *store) busy() bool {
	for _, f := range s.caches {
		if !f.loaded || f.resyncs > 0 {
			return true
		}
	}
	return false
}

// close closes the caches, bounded by ctx, and waits for the goroutines
// that forward their events.
func (s *store) close(ctx context.Context) {
	for _, f := range s.caches {
		_ = f.c.Close(ctx) // the Session may have ended; nothing to do about an error
	}
	s.wg.Wait()
}
