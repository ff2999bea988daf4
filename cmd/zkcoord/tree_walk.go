package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/tree"
)

// walkTree is tree.Walk in depth-first order of the names: a parent
// before its children, siblings sorted.
func walkTree(ctx context.Context, sess *zkcoord.Session, root string) ([]tree.Node, error) {
	nodes, err := tree.Walk(ctx, sess, root)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(nodes, func(a, b tree.Node) int { return comparePaths(a.Path, b.Path) })
	return nodes, nil
}

// comparePaths orders paths depth first: a parent before its children,
// siblings by name ("/a", "/a/b", "/a-b").
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// unlisted reports the nodes of a walk that could not be listed, as an
// error that wraps ErrNoAuth, or nil if there are none.
func unlisted(nodes []tree.Node) error {
	var paths []string
	for _, n := range nodes {
		if n.Err != nil {
			paths = append(paths, n.Path)
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
