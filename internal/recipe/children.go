package recipe

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord"
)

// WatchChildren lists the children of path with a one-shot watch that
// fires when they change. If path does not exist (yet, or again: a
// container the server removed when it became empty), it returns no
// children, exists false, and a watch that fires when path is created.
//
// A node created between the two reads is listed again: an existence
// watch on a node that exists is a data watch, which never fires for a
// change of its children.
func WatchChildren(ctx context.Context, sess *zkcoord.Session, path string) (children []string, exists bool, w <-chan zkcoord.Event, err error) {
	for {
		children, _, w, err := sess.ChildrenW(ctx, path)
		if err == nil {
			return children, true, w, nil
		}
		if !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, false, nil, err
		}
		if betweenReads != nil {
			betweenReads()
		}
		ok, _, w, err := sess.ExistsW(ctx, path)
		if err != nil {
			return nil, false, nil, err
		}
		if !ok {
			return nil, false, w, nil
		}
	}
}

// betweenReads, when a test sets it, runs between a listing that found no
// node and the existence check that follows.
var betweenReads func()
