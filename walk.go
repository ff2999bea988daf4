package zkcoord

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord/internal/fanout"
)

// TreeNode is a node found by Walk: its path and stat, or, for a node
// whose ACL does not let it be listed, Err (wrapping ErrNoAuth).
type TreeNode struct {
	Path string
	Stat *Stat // nil if Err is set
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
// ErrNoNode; any other error ends the walk. The walk is no snapshot: a
// node created meanwhile may be missed.
func (s *Session) Walk(ctx context.Context, path string) ([]TreeNode, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	type listing struct {
		kids []string
		stat *Stat
		err  error
	}
	var out []TreeNode
	for level := []string{path}; len(level) > 0; {
		got := make([]listing, len(level))
		fanout.Each(len(level), walkParallel, func(i int) {
			if walkHook != nil {
				walkHook(level[i])
			}
			kids, st, err := s.Children(ctx, level[i])
			got[i] = listing{kids, st, err}
		})
		var next []string
		for i, p := range level {
			l := got[i]
			switch {
			case errors.Is(l.err, ErrNoNode) && p != path:
				continue // deleted meanwhile
			case errors.Is(l.err, ErrNoAuth):
				out = append(out, TreeNode{Path: p, Err: l.err})
				continue
			case l.err != nil:
				return nil, l.err
			}
			out = append(out, TreeNode{Path: p, Stat: l.stat})
			for _, k := range l.kids {
				next = append(next, Join(p, k))
			}
		}
		level = next
	}
	return out, nil
}
