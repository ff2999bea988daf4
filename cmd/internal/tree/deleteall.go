package tree

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// deleteBatch bounds the deletes of one DeleteAll transaction, well under
// the server's 1 MiB request limit for any valid paths.
const deleteBatch = 500

// deleteRounds bounds how often DeleteAll lists the tree again after
// another client changed it.
const deleteRounds = 5

// DeleteAll deletes path and every node below it, children before their
// parents, in transactions of up to 500 deletes, and returns how many nodes
// it deleted. A node that another client creates below path meanwhile
// fails a transaction (ErrNotEmpty), as does one it deletes first
// (ErrNoNode); DeleteAll then lists the tree again and goes on, up to five
// times, and otherwise fails with an error that says how many nodes were
// deleted before it stopped. A missing path is no error (0 deleted). It
// refuses "/".
func DeleteAll(ctx context.Context, sess *zkcoord.Session, path string) (int, error) {
	if err := zkcoord.ValidatePath(path); err != nil {
		return 0, err
	}
	if path == "/" {
		return 0, fmt.Errorf("%w: refusing to delete /", zkcoord.ErrInvalidPath)
	}
	deleted := 0
	for round := 0; ; round++ {
		nodes, err := subtree(ctx, sess, path)
		if err != nil {
			return deleted, fmt.Errorf("zkcoord: delete all %s: %d deleted, then: %w", path, deleted, err)
		}
		n, err := deleteBottomUp(ctx, sess, nodes)
		deleted += n
		switch {
		case err == nil:
			return deleted, nil
		case round+1 < deleteRounds && (errors.Is(err, zkcoord.ErrNotEmpty) || errors.Is(err, zkcoord.ErrNoNode) || zkcoord.IsRetryable(err)):
			continue // the tree changed, or a reply was lost: look again
		}
		return deleted, fmt.Errorf("zkcoord: delete all %s: %d deleted, then: %w", path, deleted, err)
	}
}

// subtree lists path and the nodes below it, parents before children
// (Walk's level order, so that the deepest go first); nothing if path
// does not exist. A node that may not be listed fails it: what is below
// it could not be deleted.
func subtree(ctx context.Context, sess *zkcoord.Session, path string) ([]string, error) {
	nodes, err := Walk(ctx, sess, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, len(nodes))
	for i, n := range nodes {
		if n.Err != nil {
			return nil, n.Err
		}
		out[i] = n.Path
	}
	return out, nil
}

// deleteBottomUp deletes nodes, listed parents first, children first, in
// transactions; it returns how many it deleted.
func deleteBottomUp(ctx context.Context, sess *zkcoord.Session, nodes []string) (int, error) {
	deleted := 0
	for end := len(nodes); end > 0; {
		start := max(end-deleteBatch, 0)
		ops := make([]zkcoord.Op, 0, end-start)
		for i := end - 1; i >= start; i-- {
			ops = append(ops, zkcoord.DeleteOp(nodes[i], -1))
		}
		if _, err := sess.Multi(ctx, ops...); err != nil {
			return deleted, err
		}
		deleted += len(ops)
		end = start
	}
	return deleted, nil
}
