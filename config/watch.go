package config

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Watcher delivers a configuration node's versions as values of type V
// (Version for a Node, Value[T] for a JSON). Its channel always ends up
// holding the newest version: a reader that falls behind skips intermediate
// versions but never misses the latest. It is the toolkit's one watcher,
// zkcoord.Watcher.
type Watcher[V any] = zkcoord.Watcher[V]

// Watch starts watching the node. The channel first receives the current
// version (Exists false if the node does not exist), then every newer one,
// including deletions. It is closed when ctx ends, Stop is called or the
// Session ends; Err then says why.
func (n *Node) Watch(ctx context.Context) *Watcher[Version] {
	return watch(ctx, n, func(v Version) Version { return v })
}

func watch[V any](ctx context.Context, n *Node, conv func(Version) V) *Watcher[V] {
	var last *Version // the newest version read
	return zkcoord.NewWatcher(ctx, n.sess, readNew(n, &last, conv))
}

// WatchConfig watches the node at path, as Node.Watch does, across
// Sessions it opens itself from cfg, through zkcoord.Supervise: when a
// Session is Lost or Expired, a new one is opened (with backoff) and the
// watch carries on from the version the node holds then, which is
// delivered if it is newer than the last one delivered (a deletion
// meanwhile is delivered as a Version with Exists false). The channel is
// closed when ctx ends or Stop is called; Err then says why. A bad path is
// reported at once.
func WatchConfig(ctx context.Context, cfg zkcoord.Config, path string, opts ...Option) (*Watcher[Version], error) {
	return watchConfig(ctx, cfg, path, opts, func(*Node) func(Version) Version {
		return func(v Version) Version { return v }
	})
}

// WatchJSONConfig is WatchConfig for a JSON node: it delivers decoded
// versions, as JSON.Watch does.
func WatchJSONConfig[T any](ctx context.Context, cfg zkcoord.Config, path string, opts ...Option) (*Watcher[Value[T]], error) {
	return watchConfig(ctx, cfg, path, opts, func(n *Node) func(Version) Value[T] {
		return (&JSON[T]{node: n}).convert
	})
}

func watchConfig[V any](ctx context.Context, cfg zkcoord.Config, path string, opts []Option, conv func(*Node) func(Version) V) (*Watcher[V], error) {
	if err := recipe.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var last *Version // the newest version read, on any Session
	return zkcoord.NewWatcherConfig(ctx, cfg, func(sess *zkcoord.Session) zkcoord.ReadFunc[V] {
		n := &Node{sess: sess, path: path}
		return readNew(n, &last, conv(n))
	}, o.supervise()...), nil
}

// readNew returns the ReadFunc of a watch: it delivers versions other than
// *last, converted, and records them there.
func readNew[V any](n *Node, last **Version, conv func(Version) V) zkcoord.ReadFunc[V] {
	return func(ctx context.Context) (V, bool, <-chan zkcoord.Event, error) {
		var zero V
		cur, fire, err := read(ctx, n)
		if err != nil {
			return zero, false, nil, err
		}
		prev := *last
		changed := prev == nil || cur.Exists != prev.Exists || cur.Zxid != prev.Zxid
		*last = &cur
		if !changed {
			return zero, false, fire, nil
		}
		return conv(cur), true, fire, nil
	}
}

// read returns the node's current version and a watch that fires when it
// changes (including creation and deletion).
func read(ctx context.Context, n *Node) (Version, <-chan zkcoord.Event, error) {
	data, st, fire, err := n.sess.DataW(ctx, n.path)
	switch {
	case err != nil:
		return Version{}, nil, fmt.Errorf("config: watch %s: %w", n.path, err)
	case st == nil:
		return Version{Version: -1}, fire, nil
	}
	return versionOf(data, st), fire, nil
}
