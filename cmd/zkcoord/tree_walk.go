package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// treeNode is a node found by walkTree: its path and stat, or, for a node
// whose ACL does not let it be listed, the error.
type treeNode struct {
	path string
	stat *zkcoord.Stat // nil if err is set
	err  error
}

// walkParallel bounds the listings walkTree has in flight.
const walkParallel = 16

// walkTree lists root and every node below it, a level at a time, with up
// to walkParallel listings in flight (getChildren2, which also gives each
// node's own stat), and returns them in depth-first order of their names:
// a parent before its children, siblings sorted. A node deleted during the
// walk is left out; one that may not be listed (ErrNoAuth) is returned
// with its error and the walk goes on without what is below it. A missing
// root is ErrNoNode; any other error ends the walk.
func walkTree(ctx context.Context, sess *zkcoord.Session, root string) ([]treeNode, error) {
	type listing struct {
		kids []string
		stat *zkcoord.Stat
		err  error
	}
	var out []treeNode
	for level := []string{root}; len(level) > 0; {
		got := make([]listing, len(level))
		sem := make(chan struct{}, walkParallel)
		var wg sync.WaitGroup
		for i, p := range level {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				kids, st, err := sess.Children(ctx, p)
				got[i] = listing{kids, st, err}
			}()
		}
		wg.Wait()
		var next []string
		for i, p := range level {
			l := got[i]
			switch {
			case errors.Is(l.err, zkcoord.ErrNoNode) && p != root:
				continue // deleted meanwhile
			case errors.Is(l.err, zkcoord.ErrNoAuth):
				out = append(out, treeNode{path: p, err: l.err})
				continue
			case l.err != nil:
				return nil, l.err
			}
			out = append(out, treeNode{path: p, stat: l.stat})
			for _, k := range l.kids {
				next = append(next, zkcoord.Join(p, k))
			}
		}
		level = next
	}
	slices.SortFunc(out, func(a, b treeNode) int { return comparePaths(a.path, b.path) })
	return out, nil
}

// comparePaths orders paths depth first: a parent before its children,
// siblings by name ("/a", "/a/b", "/a-b").
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// unlisted reports the nodes of a walk that could not be listed, as an
// error that wraps ErrNoAuth, or nil if there are none.
func unlisted(nodes []treeNode) error {
	var paths []string
	for _, n := range nodes {
		if n.err != nil {
			paths = append(paths, n.path)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	more := ""
	if len(paths) > 5 {
		more = fmt.Sprintf(" and %d more nodes", len(paths)-5)
		paths = paths[:5]
	}
	return fmt.Errorf("not allowed to list what is below %s%s: %w", strings.Join(paths, ", "), more, zkcoord.ErrNoAuth)
}
