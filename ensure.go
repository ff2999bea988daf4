package zkcoord

import (
	"context"
	"errors"
	"strings"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// EnsurePath creates path and any missing ancestors as persistent nodes with
// no data. Existing nodes are left as they are.
func (s *Session) EnsurePath(ctx context.Context, path string) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	return s.ensure(ctx, s.root, path, 0)
}

// EnsureContainers creates path and any missing ancestors as container
// nodes, which the server deletes once they become empty, so recipes leave
// no litter behind. Container nodes need ZooKeeper 3.5.3 or later; an older
// server rejects the request and closes the connection, and the error is
// returned. A recipe must be ready for a container to vanish between
// EnsureContainers and its next create (ErrNoNode): ensure again.
func (s *Session) EnsureContainers(ctx context.Context, path string) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	return s.ensure(ctx, s.root, path, flagContainer)
}

// flagContainer creates a container (createContainer).
const flagContainer int32 = 4

// ensure creates each missing node of path under root, top-down, after
// first checking whether path already exists (the common case: one read).
func (s *Session) ensure(ctx context.Context, root chroot, path string, flag int32) error {
	if path == "/" {
		return nil
	}
	exists := func(p string) (bool, error) {
		_, err := retryCall(s, ctx, func(ctx context.Context) (wire.Stat, error) {
			st, _, _, err := s.conn.Exists(ctx, root.add(p), false)
			return st, err
		})
		if errors.Is(err, ErrNoNode) {
			return false, nil
		}
		return err == nil, err
	}
	if ok, err := exists(path); err != nil || ok {
		return wrapPath(err, "ensure", path)
	}
	parts := strings.Split(path[1:], "/")
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		_, err := retryCall(s, ctx, func(ctx context.Context) (wire.Create2Response, error) {
			if flag == flagContainer {
				r, _, err := s.conn.CreateContainer(ctx, root.add(cur), nil, s.aclFor(cur))
				return r, err
			}
			r, _, err := s.conn.Create(ctx, root.add(cur), nil, s.aclFor(cur), wire.CreateMode(flag))
			return r, err
		})
		if err != nil && !errors.Is(err, ErrNodeExists) {
			return wrapPath(err, "ensure", cur)
		}
	}
	return nil
}

// ensureDeleted deletes the node at path if it exists, at any version,
// retrying on connection loss (internal/recipe.EnsureDeleted for the
// recipes).
func (s *Session) ensureDeleted(ctx context.Context, path string) error {
	return s.Retry(ctx, func(ctx context.Context) error {
		err := s.Delete(ctx, path, -1)
		if errors.Is(err, ErrNoNode) {
			return nil
		}
		return err
	})
}
