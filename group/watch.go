package group

import (
	"context"
	"fmt"
	"slices"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Watcher follows a group's membership. Its channel always ends up holding
// the newest snapshot: a reader that falls behind skips intermediate
// snapshots but never misses the latest. It is the toolkit's one watcher,
// zkcoord.Watcher.
type Watcher = zkcoord.Watcher[[]Member]

// Watch starts following the group at path. The channel first receives the
// current members (empty if the group does not exist), then a snapshot
// after every change. It is closed when ctx ends, Stop is called or the
// Session ends; Err then says why.
func Watch(ctx context.Context, sess *zkcoord.Session, path string) (*Watcher, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	var last []string // paths of the newest snapshot, nil before the first
	return zkcoord.NewWatcher(ctx, sess, func(ctx context.Context) ([]Member, bool, <-chan zkcoord.Event, error) {
		snap, fire, err := read(ctx, sess, path)
		if err != nil {
			return nil, false, nil, err
		}
		paths := pathsOf(snap)
		if last != nil && slices.Equal(paths, last) {
			return nil, false, fire, nil
		}
		last = paths
		return snap, true, fire, nil
	}), nil
}

func pathsOf(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Path
	}
	return out
}

// read returns the current members and a watch on the group's children (or
// on the group node's creation, if it does not exist).
func read(ctx context.Context, sess *zkcoord.Session, path string) ([]Member, <-chan zkcoord.Event, error) {
	children, ok, fire, err := recipe.WatchChildren(ctx, sess, path)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("group: watch %s: %w", path, err)
	case !ok:
		return []Member{}, fire, nil
	}
	ms, err := members(ctx, sess, path, children)
	return ms, fire, err
}
