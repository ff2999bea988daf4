package recipe

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// Read reads path with readW, which also sets a watch, when watch is set,
// and with read otherwise (the watch is then nil): a recipe that reads a
// node once to look and then again to wait passes a Session's read and
// its W form, for example sess.Children and sess.ChildrenW.
func Read[T any](ctx context.Context, path string, watch bool,
	read func(context.Context, string) (T, *zkcoord.Stat, error),
	readW func(context.Context, string) (T, *zkcoord.Stat, <-chan zkcoord.Event, error),
) (T, *zkcoord.Stat, <-chan zkcoord.Event, error) {
	if watch {
		return readW(ctx, path)
	}
	v, st, err := read(ctx, path)
	return v, st, nil, err
}
