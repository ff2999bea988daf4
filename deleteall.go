package zkcoord

import (
	"context"
	"errors"
	"fmt"
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
func (s *Session) DeleteAll(ctx context.Context, path string) (int, error) {
	if err := ValidatePath(path); err != nil {
		return 0, err
	}
	if path == "/" {
		return 0, fmt.Errorf("%w: refusing to delete /", ErrInvalidPath)
	}
	deleted := 0
	for round := 0; ; round++ {
		nodes, err := s.subtree(ctx, path)
		if err != nil {
			return deleted, fmt.Errorf("zkcoord: delete all %s: %d deleted, then: %w", path, deleted, err)
		}
		n, err := s.deleteBottomUp(ctx, nodes)
		deleted += n
		switch {
		case err == nil:
			return deleted, nil
		case round+1 < deleteRounds && (errors.Is(err, ErrNotEmpty) || errors.Is(err, ErrNoNode) || IsRetryable(err)):
			continue // the tree changed, or a reply was lost: look again
		}
		return deleted, fmt.Errorf("zkcoord: delete all %s: %d deleted, then: %w", path, deleted, err)
	}
}

// subtree lists path and the nodes below it, parents before children
// (Walk's level order, so that the deepest go first); nothing if path
// does not exist. A node that may not be listed fails it: what is below
// it could not be deleted.
func (s *Session) subtree(ctx context.Context, path string) ([]string, error) {
	nodes, err := s.Walk(ctx, path)
	if errors.Is(err, ErrNoNode) {
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
func (s *Session) deleteBottomUp(ctx context.Context, nodes []string) (int, error) {
	deleted := 0
	for end := len(nodes); end > 0; {
		start := max(end-deleteBatch, 0)
		ops := make([]Op, 0, end-start)
		for i := end - 1; i >= start; i-- {
			ops = append(ops, DeleteOp(nodes[i], -1))
		}
		if _, err := s.Multi(ctx, ops...); err != nil {
			return deleted, err
		}
		deleted += len(ops)
		end = start
	}
	return deleted, nil
}
