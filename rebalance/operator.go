package rebalance

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkcoord/zkcoord"
)

// AddResource registers resource id in the group under root (creating the
// group's nodes if needed). The coordinator notices and rebalances. A
// resource that is already registered gives an error wrapping
// ErrResourceExists.
func AddResource(ctx context.Context, sess *zkcoord.Session, root, group, id string) error {
	lay, err := newLayout(root, group)
	if err != nil {
		return err
	}
	if err := validResource(id); err != nil {
		return err
	}
	if err := lay.ensure(ctx, sess); err != nil {
		return fmt.Errorf("rebalance: create group %s: %w", lay.base, err)
	}
	retried := false
	err = sess.Retry(ctx, func(ctx context.Context) error {
		_, err := sess.Create(ctx, lay.resource(id), nil, zkcoord.FlagPersistent)
		switch {
		case errors.Is(err, zkcoord.ErrNodeExists) && retried:
			return nil // our earlier attempt went through
		case zkcoord.IsRetryable(err):
			retried = true
		}
		return err
	})
	if errors.Is(err, zkcoord.ErrNodeExists) {
		return fmt.Errorf("%w: %s in %s", ErrResourceExists, id, lay.base)
	}
	return err
}

// RemoveResource unregisters resource id. Its current owner stops it after
// the next rebalancing and then deletes the resource's barrier; the barrier
// is never deleted here, so the resource stays protected until its owner
// has really stopped. An unknown resource gives an error wrapping
// ErrNoResource.
func RemoveResource(ctx context.Context, sess *zkcoord.Session, root, group, id string) error {
	lay, err := newLayout(root, group)
	if err != nil {
		return err
	}
	if err := validResource(id); err != nil {
		return err
	}
	retried := false
	err = sess.Retry(ctx, func(ctx context.Context) error {
		err := sess.Delete(ctx, lay.resource(id), -1)
		switch {
		case errors.Is(err, zkcoord.ErrNoNode) && retried:
			return nil
		case zkcoord.IsRetryable(err):
			retried = true
		}
		return err
	})
	if errors.Is(err, zkcoord.ErrNoNode) {
		return fmt.Errorf("%w: %s in %s", ErrNoResource, id, lay.base)
	}
	return err
}

// ListResources returns the registered resources of the group, sorted. A
// group that does not exist has none.
func ListResources(ctx context.Context, sess *zkcoord.Session, root, group string) ([]string, error) {
	lay, err := newLayout(root, group)
	if err != nil {
		return nil, err
	}
	kids, _, err := sess.Children(ctx, lay.resources())
	if errors.Is(err, zkcoord.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := parseResources(kids)
	slices.Sort(out)
	return out, nil
}
