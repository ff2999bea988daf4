package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// EnsureNode creates the node at path with data and flags unless a node is
// already there (whatever its data: then nothing is written), creating
// missing parents as containers, and retrying on connection loss: a create
// that finds the node afterwards has succeeded, whoever made it. It is the
// one create-with-parents of the recipes, for nodes whose existence is what
// matters (not sequential nodes, whose creates cannot be repeated).
func EnsureNode(ctx context.Context, sess *zkcoord.Session, path string, data []byte, flags int32) error {
	if flags&zkcoord.FlagSequence != 0 {
		return fmt.Errorf("zkcoord: ensure %s: a sequential create cannot be repeated", path)
	}
	return sess.Retry(ctx, func(ctx context.Context) error {
		for {
			_, err := sess.Create(ctx, path, data, flags)
			if errors.Is(err, zkcoord.ErrNoNode) {
				if err := sess.EnsureContainers(ctx, zkcoord.Parent(path)); err != nil {
					return err
				}
				continue
			}
			if errors.Is(err, zkcoord.ErrNodeExists) {
				return nil
			}
			return err
		}
	})
}
