//go:build bench

package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cache"
)

// The tree cache workload: a cache of a 10,000-node tree is started on a
// client of its own (its connection is open before the clock starts), its
// initial load timed, then another client of the same process writes new
// data to nodes of the tree, one at a time, each write timed until the
// cache reports it. The cache and its client are closed at the end of the
// round, so that no watch of one implementation outlives its round.
const (
	mCacheLoad   = "cache-load"
	mCacheChange = "cache-change"
	cacheFanout  = 100 // children of the root, each with cacheFanout-1 children
)

// Implementation names of the cache workload.
const (
	zkCacheName      = zkcoordName + " cache.NewTree"
	curatorCacheName = curatorName + " CuratorCache"
	kazooCacheName   = kazooName + " TreeCache"
)

// cacheSizes are the writes per round and the rounds.
type cacheSizes struct {
	nodes, writes, rounds int
}

func cacheSizesFor(quick bool) cacheSizes {
	if quick {
		return cacheSizes{nodes: 1000, writes: 10, rounds: 1}
	}
	return cacheSizes{nodes: cacheFanout * cacheFanout, writes: 40, rounds: 3}
}

// cacheTree is the shape of the tree under a root: fanout parents, each
// with fanout-1 children, nodes in all.
type cacheTree struct{ fanout int }

func treeOf(nodes int) cacheTree {
	f := 1
	for f*f < nodes {
		f++
	}
	return cacheTree{fanout: f}
}

func (t cacheTree) parent(root string, i int) string { return fmt.Sprintf("%s/p%03d", root, i) }

func (t cacheTree) child(root string, i, j int) string {
	return fmt.Sprintf("%s/c%03d", t.parent(root, i), j)
}

// target is the node the k-th write of a round changes: a leaf, a
// different parent each time.
func (t cacheTree) target(root string, k int) string {
	return t.child(root, k%t.fanout, (k/t.fanout)%(t.fanout-1))
}

// build creates the tree under root (which must not exist), in
// transactions of a thousand creates.
func (t cacheTree) build(ctx context.Context, conn *zk.Conn, root string) error {
	if err := ensureRaw(conn, root); err != nil {
		return err
	}
	data := make([]byte, 16)
	var paths []string
	for i := range t.fanout {
		paths = append(paths, t.parent(root, i))
	}
	for i := range t.fanout {
		for j := range t.fanout - 1 {
			paths = append(paths, t.child(root, i, j))
		}
	}
	const per = 1000
	// Parents first: their transaction must come before their children's.
	parents := (t.fanout + per - 1) / per
	create := func(part []string) error {
		ops := make([]any, len(part))
		for i, p := range part {
			ops[i] = &zk.CreateRequest{Path: p, Data: data, Acl: zk.WorldACL(zk.PermAll)}
		}
		_, err := conn.Multi(ops...)
		return err
	}
	for i := range parents {
		if err := create(paths[i*per : min(t.fanout, (i+1)*per)]); err != nil {
			return err
		}
	}
	rest := paths[t.fanout:]
	return forEach(ctx, (len(rest)+per-1)/per, 4, func(ctx context.Context, i int) error {
		return create(rest[i*per : min(len(rest), (i+1)*per)])
	})
}

// cacheRoot is the one tree every implementation caches, built once per
// setting.
type cacheRoot struct {
	once sync.Once
	path string
	err  error
}

func (r *cacheRoot) ensure(ctx context.Context, t cacheTree) (string, error) {
	r.once.Do(func() {
		conn, err := connectRaw(ctx)
		if err != nil {
			r.err = err
			return
		}
		defer conn.Close()
		r.path = freshPath("shared", "cache")
		r.err = t.build(ctx, conn, r.path)
	})
	return r.path, r.err
}

// watchCount returns the watches the servers hold, from mntr.
func watchCount(ctx context.Context) (float64, error) {
	total := 0.0
	for i := range server.Len() {
		m, err := server.Server(i).Mntr(ctx)
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(m["zk_watch_count"], 64)
		if err != nil {
			return 0, fmt.Errorf("zk_watch_count %q: %w", m["zk_watch_count"], err)
		}
		total += v
	}
	return total, nil
}

// cacheLoadStep times a load and charges it with the watches it left on
// the servers.
func cacheLoadStep(ctx context.Context, rec *recorder, metric string, load func() (stepOut, error)) error {
	return rec.step(ctx, metric, func() (stepOut, error) {
		before, err := watchCount(ctx)
		if err != nil {
			return stepOut{}, err
		}
		out, err := load()
		if err != nil {
			return out, err
		}
		after, err := watchCount(ctx)
		if err != nil {
			return out, err
		}
		if out.extra == nil {
			out.extra = map[string]float64{}
		}
		out.extra["watches"] = after - before
		return out, nil
	})
}

func cacheSuite(e *env) *suite {
	sz := cacheSizesFor(e.quick)
	tree := treeOf(sz.nodes)
	root := &cacheRoot{}
	ml, mc := e.set.metric(mCacheLoad), e.set.metric(mCacheChange)
	s := &suite{id: ml, rounds: sz.rounds}

	var writer *zkcoord.Session
	s.impls = append(s.impls, &impl{
		name: zkCacheName,
		setup: func(ctx context.Context) (err error) {
			if _, err := root.ensure(ctx, tree); err != nil {
				return err
			}
			writer, err = connect(ctx)
			return err
		},
		round: func(ctx context.Context, rec *recorder) error {
			path, _ := root.ensure(ctx, tree)
			sess, err := connect(ctx)
			if err != nil {
				return err
			}
			defer sess.Close(context.WithoutCancel(ctx))
			var c *cache.Cache
			err = cacheLoadStep(ctx, rec, ml, func() (stepOut, error) {
				t := time.Now()
				if c, err = cache.NewTree(sess, path); err != nil {
					return stepOut{}, err
				}
				n := 0
				for ev := range c.Events() {
					switch ev.Type {
					case cache.Added:
						n++
					case cache.Initialized:
						return stepOut{values: []float64{ms(int64(time.Since(t)))}, ops: 1,
							extra: map[string]float64{"nodes": float64(n)}}, nil
					}
				}
				return stepOut{}, fmt.Errorf("cache ended before its load: %w", c.Err())
			})
			if c != nil {
				defer c.Close(context.WithoutCancel(ctx))
			}
			if err != nil {
				return err
			}
			return rec.step(ctx, mc, func() (stepOut, error) {
				out := make([]float64, 0, sz.writes)
				for k := range sz.writes {
					p := tree.target(path, k)
					data := []byte(fmt.Sprintf("v-%d", time.Now().UnixNano()))
					t := time.Now()
					if _, err := writer.Set(ctx, p, data, -1); err != nil {
						return stepOut{}, err
					}
					if err := awaitChange(ctx, c, p, data); err != nil {
						return stepOut{}, err
					}
					out = append(out, ms(int64(time.Since(t))))
				}
				return stepOut{values: out}, nil
			})
		},
		teardown: func(ctx context.Context) error { return writer.Close(ctx) },
	})
	for _, p := range []struct {
		peer *peer
		name string
	}{{e.curator, curatorCacheName}, {e.kazoo, kazooCacheName}} {
		if p.peer == nil {
			continue
		}
		s.impls = append(s.impls, peerCacheImpl(p.peer, p.name, root, tree, sz, ml, mc))
	}
	return s
}

// awaitChange reads c's events until p shows data.
func awaitChange(ctx context.Context, c *cache.Cache, p string, data []byte) error {
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				return fmt.Errorf("cache ended: %w", c.Err())
			}
			if ev.Type == cache.Updated && ev.Node.Path == p && bytes.Equal(ev.Node.Data, data) {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Minute):
			return errors.New("no event for a write after a minute")
		}
	}
}

// peerCacheImpl runs the workload in a peer: cache_start (its own client,
// connected before the clock starts; the load timed), cache_change (writes
// from the peer's main client, each timed until the cache's listener sees
// it), cache_stop.
func peerCacheImpl(p *peer, name string, root *cacheRoot, tree cacheTree, sz cacheSizes, ml, mc string) *impl {
	return &impl{
		name: name,
		setup: func(ctx context.Context) error {
			_, err := root.ensure(ctx, tree)
			return err
		},
		round: func(ctx context.Context, rec *recorder) error {
			path, _ := root.ensure(ctx, tree)
			if _, err := p.call(ctx, time.Minute, "cache_client", nil); err != nil {
				return err
			}
			err := cacheLoadStep(ctx, rec, ml, func() (stepOut, error) {
				r, err := p.call(ctx, 10*time.Minute, "cache_start", map[string]any{"path": path})
				return r.out(), err
			})
			if err == nil {
				err = rec.step(ctx, mc, func() (stepOut, error) {
					var paths string
					for k := range sz.writes {
						if k > 0 {
							paths += ","
						}
						paths += tree.target(path, k)
					}
					r, err := p.call(ctx, 5*time.Minute, "cache_change", map[string]any{"paths": paths})
					return r.out(), err
				})
			}
			if _, serr := p.call(ctx, time.Minute, "cache_stop", nil); err == nil {
				err = serr
			}
			return err
		},
	}
}

// cacheDefs lists the cache metrics.
func cacheDefs(quick bool) []metricDef {
	sz := cacheSizesFor(quick)
	f := treeOf(sz.nodes).fanout
	return []metricDef{
		{id: mCacheLoad, title: fmt.Sprintf("Tree cache: initial load of %d nodes", f*f+1), unit: "ms",
			extras: []string{"nodes", "watches"},
			what: fmt.Sprintf("A cache of a tree of %d nodes (the root, %d children, each with %d children of 16 bytes) "+
				"is started on a client of its own, connected beforehand: zkcoord's cache.NewTree, Curator's "+
				"CuratorCache, Kazoo's TreeCache. A sample is the time from the start until the cache reports its "+
				"initial load complete (zkcoord: Initialized; Curator: initialized; Kazoo: INITIALIZED). Requests per "+
				"load are the server's packets; watches on the servers are mntr's zk_watch_count (summed over the servers) "+
				"after the load less before it: what one cache holds on the servers. The server counts a persistent "+
				"watch in both its data and its child watch tables, so one persistent recursive watch shows as 2, and a "+
				"one-shot data watch and child watch on every node as 2 per node. Each round closes the cache and its client.",
				f*f+1, f, f-1)},
		{id: mCacheChange, title: "Tree cache: a write until the cache reports it", unit: "ms",
			what: fmt.Sprintf("With the cache loaded, another client of the same process sets new data on a leaf of "+
				"the tree, %d leaves one after the other (a different parent each time); a sample is the time from "+
				"the write's call until the cache's event carrying the new data (zkcoord: Updated; Curator: the "+
				"changes listener; Kazoo: NODE_UPDATED). Requests per change include the write itself (one).", sz.writes)},
	}
}
