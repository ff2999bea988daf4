package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
)

// WithLockDelay makes a Mutex wait d before it takes a lock whose last
// holder did not release it cleanly: its session expired, or its node was
// deleted by someone else. A holder paused past its session timeout (a GC
// pause, a stopped VM) cannot see its loss until it runs again; the delay
// gives it that time, so that with d longer than any pause the holder can
// suffer, two holders never act at once, even without fencing. Default: 0,
// none (as in Curator and Kazoo).
//
// A Mutex with a lock-delay releases with a mark: the delete of its node
// and a write of the node's name to the lock directory's data, in one
// transaction. A contender that finds its predecessor gone, or that finds
// the lock free on arrival, takes it at once only after such a release
// (see docs/protocol.md#lock-delay); any other disappearance counts as an
// expiry. So a release by a Curator or Kazoo client, by a Mutex without a
// lock-delay, or by `zkcoord lock break`, all of which only delete the
// node, is followed by the delay. A contender that gives up waiting
// leaves without a mark, so the contender behind it waits the delay too.
// The delay counts from the listing that showed the contender first,
// never earlier than the disappearance. During it the contender keeps its
// place; Lock waits it out, and TryLock returns ErrLocked.
//
// The option applies to a Mutex and a ReentrantMutex: NewRWMutex and
// NewSemaphore refuse it.
func WithLockDelay(d time.Duration) Option {
	return func(o *options) { o.delay = d }
}

// onlyForMutex refuses the options that only a Mutex takes.
func (o options) onlyForMutex(kind string) error {
	if o.delay != 0 {
		return fmt.Errorf("lock: %w: WithLockDelay is for a Mutex, not a %s", zkcoord.ErrInvalidConfig, kind)
	}
	return nil
}

// arrive reads the lock directory before the contender's node is created,
// when the lock has a lock-delay; its Tracker is nil otherwise.
func (c contention) arrive(ctx context.Context) (*lockdelay.Tracker, error) {
	return lockdelay.Arrive(ctx, c.sess, c.dir, c.delay, func(name string) bool {
		_, ok := c.recognise(name)
		return ok
	})
}

// hold waits the lock-delay, if there is one to wait, before the
// contender found first acts: until it has passed (then it reads its own
// node once more), or the contender's own node is deleted, ctx or the
// Session ends. With try it returns ErrLocked instead of waiting.
func (c contention) hold(ctx context.Context, s *self, try bool, t *lockdelay.Tracker) error {
	d, err := t.Wait(ctx, c.sess, s.node)
	switch {
	case err != nil:
		return fmt.Errorf("lock: %s: %w", c.dir, err)
	case d <= 0:
		return nil
	case try:
		return fmt.Errorf("lock: %s: %w (lock-delay after an expiry)", c.dir, ErrLocked)
	}
	c.sess.Logger().Debug("lock: waiting the lock-delay", "path", s.node, "delay", d)
	passed := make(chan zkcoord.Event)
	timer := time.AfterFunc(d, func() { close(passed) })
	defer timer.Stop()
	s.watchFrom(ctx, c.sess)
	if err := c.block(ctx, passed, nil, s, nil); err != nil {
		return err
	}
	// The own node's deletion may not have been told yet: read it, so
	// that a node deleted meanwhile is not taken for a held lock.
	ok, _, err := c.sess.Exists(ctx, s.node)
	switch {
	case err != nil:
		return ownErr(s.node, err)
	case !ok:
		return fmt.Errorf("lock: %s: %w", s.node, ErrNodeDeleted)
	}
	return nil
}
