package lock

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Thin wrappers around the Session's requests, shaped for this package.

func listChildren(ctx context.Context, sess *zkcoord.Session, dir string) ([]string, error) {
	c, _, err := sess.Children(ctx, dir)
	return c, err
}

func listChildrenW(ctx context.Context, sess *zkcoord.Session, dir string) ([]string, <-chan zkcoord.Event, error) {
	c, _, w, err := sess.ChildrenW(ctx, dir)
	return c, w, err
}

// dataWatch sets a data watch on path and returns the node's data and stat.
func dataWatch(ctx context.Context, sess *zkcoord.Session, path string) ([]byte, *zkcoord.Stat, <-chan zkcoord.Event, error) {
	return sess.GetW(ctx, path)
}

// createNode creates a protected ephemeral sequential node. If ctx ends
// before the outcome is known, CreateProtected deletes the node in the
// background once it turns out to exist, for as long as the Session lives.
func createNode(ctx context.Context, sess *zkcoord.Session, dir, name string, data []byte) (string, error) {
	p, err := sess.CreateProtected(ctx, dir, name, data, zkcoord.FlagEphemeralSequential)
	if err != nil {
		return "", fmt.Errorf("lock: %s: %w", dir, err)
	}
	return p, nil
}
