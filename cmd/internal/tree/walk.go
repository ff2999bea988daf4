package tree

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/fanout"
)

// Node is a node found by Walk: its path and stat, or, for a node
// whose ACL does not let it be listed, Err (wrapping zkcoord.ErrNoAuth).
type Node struct {
	Path string
	Stat *zkcoord.Stat // nil if Err is set
	Err  error
}

// walkParallel bounds the listings Walk has in flight.
const walkParallel = 16

// walkHook, if set, runs before each listing of a Walk (for tests).
var walkHook func(path string)

// Walk lists path and every node below it, a level at a time, and returns
// them in that order: path, its children, their children, and so on. Each
// node is one getChildren2, which also gives the node's stat, with up to
// 16 in flight on the connection: a listing's size is known only once it
// has been read, so listings are not batched in one request, whose reply
// could pass what the Session accepts. A node deleted during the walk is
// left out; one that may not be listed (ErrNoAuth) is returned with its
// error and the walk goes on without what is below it. A missing path is
// zkcoord.ErrNoNode; any other error ends the walk. The walk is no snapshot: a
// node created meanwhile may be missed.
func Walk(ctx context.Context, sess *zkcoord.Session, path string) ([]Node, error) {
	if err := zkcoord.ValidatePath(path); err != nil {
		return nil, err
	}
	type listing struct {
		kids []string
		stat *zkcoord.Stat
		err  error
	}
	var out []Node
	for level := []string{path}; len(level) > 0; {
		got := make([]listing, len(level))
		fanout.Each(len(level), walkParallel, func(i int) {
			if walkHook != nil {
				walkHook(level[i])
			}
			kids, st, err := sess.Children(ctx, level[i])
			got[i] = listing{kids, st, err}
		})
		var next []string
		for i, p := range level {
			l := got[i]
			switch {
			case errors.Is(l.err, zkcoord.ErrNoNode) && p != path:
				continue // deleted meanwhile
			case errors.Is(l.err, zkcoord.ErrNoAuth):
				out = append(out, Node{Path: p, Err: l.err})
				continue
			case l.err != nil:
				return nil, l.err
			}
			out = append(out, Node{Path: p, Stat: l.stat})
			for _, k := range l.kids {
				next = append(next, zkcoord.Join(p, k))
			}
		}
		level = next
	}
	return out, nil
}
