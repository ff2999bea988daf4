package elect

import (
	"context"
	"time"

	"github.com/zkcoord/zkcoord/internal/lockdelay"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// hold waits the contender's lock-delay before it takes office, if there
// is one to wait (Config.Delay): until it has passed, the own node is
// deleted (ErrMissing), the Session or ctx ends. waited reports whether it
// waited at all.
func (c *Contender) hold(ctx context.Context) (waited bool, err error) {
	d, err := c.delay.Wait(bg(ctx), c.sess, c.node)
	if err != nil || d <= 0 {
		return false, err
	}
	c.sess.Logger().Debug("elect: waiting the lock-delay", "path", c.node, "delay", d)
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.delay.Passed()
			return true, nil
		case <-c.ownW:
			return true, c.ownGone()
		case sc, ok := <-c.states.C:
			c.states.Handle(sc, ok)
		case <-c.sess.Done():
			return true, c.sess.Err()
		case <-ctx.Done():
			return true, context.Cause(ctx)
		}
	}
}

// deleteOwn deletes the contender's node, with the mark of a clean release
// when it has a lock-delay.
func (c *Contender) deleteOwn(ctx context.Context) error {
	if c.delay != nil {
		return lockdelay.Release(ctx, c.sess, c.node)
	}
	return recipe.EnsureDeleted(ctx, c.sess, c.node)
}
