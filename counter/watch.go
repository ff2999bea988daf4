package counter

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Watcher delivers the counter's changes. Its channel always ends up
// holding the newest count: a reader that falls behind skips intermediate
// counts but never misses the latest. It is the toolkit's one watcher,
// zkcoord.Watcher.
type Watcher = zkcoord.Watcher[Count]

// Watcher64 delivers a 64-bit counter's changes, as Watcher does.
type Watcher64 = zkcoord.Watcher[Count64]

// Watch starts watching the counter. The channel first receives the current
// count, then each newer one. It is closed when ctx ends, Stop is called,
// the Session ends, or the node holds corrupt data; Err then says which.
// A node that does not exist (yet, or any more) is waited for; it is not
// created.
func (c *Of[T]) Watch(ctx context.Context) *zkcoord.Watcher[CountOf[T]] {
	last := CountOf[T]{Version: -1} // the newest count read
	return zkcoord.NewWatcher(ctx, c.sess, c.readNew(&last))
}

// WatchConfig watches the counter at path, as Counter.Watch does, across
// Sessions it opens itself from cfg, through zkcoord.Supervise: when a
// Session is Lost or Expired, a new one is opened (with backoff) and the
// watch carries on from the count the node holds then, which is delivered
// if it is newer than the last one delivered. T is int32 for a Counter,
// int64 for a Counter64. WithRecoveryEvents passes on Supervise's events.
// The channel is closed when ctx ends, Stop is called, or the node holds
// corrupt data; Err then says which. Bad options or path are reported at
// once.
func WatchConfig[T Int](ctx context.Context, cfg zkcoord.Config, path string, opts ...Option) (*zkcoord.Watcher[CountOf[T]], error) {
	o, err := newOptions[T](path, opts)
	if err != nil {
		return nil, err
	}
	last := CountOf[T]{Version: -1} // the newest count read, on any Session
	return zkcoord.NewWatcherConfig(ctx, cfg, func(sess *zkcoord.Session) zkcoord.ReadFunc[CountOf[T]] {
		c := &Of[T]{sess: sess, path: path, seed: T(o.seed)}
		return c.readNew(&last)
	}, o.supervise()...), nil
}

// readNew returns the ReadFunc of a watch: it delivers counts other than
// *last, and records them there.
func (c *Of[T]) readNew(last *CountOf[T]) zkcoord.ReadFunc[CountOf[T]] {
	return func(ctx context.Context) (CountOf[T], bool, <-chan zkcoord.Event, error) {
		cur, fire, err := c.read(ctx)
		if err != nil || cur == nil || *cur == *last {
			return CountOf[T]{}, false, fire, err
		}
		*last = *cur
		return *cur, true, fire, nil
	}
}

// read returns the current count (nil if the node does not exist) and a
// watch that fires on its next change.
func (c *Of[T]) read(ctx context.Context) (*CountOf[T], <-chan zkcoord.Event, error) {
	sess := c.sess
	data, st, fire, err := sess.DataW(ctx, c.path)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("counter: watch %s: %w", c.path, err)
	case st == nil:
		return nil, fire, nil
	}
	cur, err := c.decode(data, st)
	if err != nil {
		return nil, nil, err
	}
	return &cur, fire, nil
}
