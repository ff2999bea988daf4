package config

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord"
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
	return zkcoord.NewWatcher(ctx, n.sess, func(ctx context.Context) (V, bool, <-chan zkcoord.Event, error) {
		var zero V
		cur, fire, err := read(ctx, n)
		if err != nil {
			return zero, false, nil, err
		}
		changed := last == nil || cur.Exists != last.Exists || cur.Zxid != last.Zxid
		last = &cur
		if !changed {
			return zero, false, fire, nil
		}
		return conv(cur), true, fire, nil
	})
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
