// Package recipe holds the steps the recipe packages share on top of the
// Session: validating a recipe's arguments, creating a node whose
// existence is all that matters, deleting one whose absence is (now or in
// the background), waiting for a watch, watching a node's children, and
// the herd-free wait for a predecessor. They are not the Session's
// business and not the user's, so they live here.
package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lifetime"
)

// Validate checks what every recipe's constructor takes: a Session, and a
// valid path of the recipe's own below the root. The error wraps
// zkcoord.ErrNilSession or zkcoord.ErrInvalidPath; recipes prefix it with
// their name.
func Validate(sess *zkcoord.Session, path string) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	if sess == nil {
		return zkcoord.ErrNilSession
	}
	return nil
}

// ValidatePath checks the path a recipe's constructor takes: a valid path
// of the recipe's own below the root. The recipes' forms that open their
// own Sessions (the ...Config constructors) check it before the first
// Session opens. The error wraps zkcoord.ErrInvalidPath.
func ValidatePath(path string) error {
	if err := zkcoord.ValidatePath(path); err != nil {
		return err
	}
	if path == "/" {
		return fmt.Errorf("%w: a recipe needs a node of its own, not /", zkcoord.ErrInvalidPath)
	}
	return nil
}

// EnsureDeleted deletes the node at path if it exists, at any version,
// retrying on connection loss; a node that is already gone is success. It
// is the one way recipes remove a node they own when the node's absence is
// all that matters. A node with children fails with zkcoord.ErrNotEmpty.
func EnsureDeleted(ctx context.Context, sess *zkcoord.Session, path string) error {
	return sess.Retry(ctx, func(ctx context.Context) error {
		err := sess.Delete(ctx, path, -1)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		return err
	})
}

// EnsureDeletedLater deletes the node at path in the background, as
// EnsureDeleted does, for as long as the Session lives. It is for a node
// whose creator gave up on it and must not wait. It runs on one of the
// Session's own goroutines (internal/lifetime), which Close waits for; an
// ended Session starts none. A failure while the Session lives is logged
// on the Session's logger; an ephemeral node that could not be deleted
// goes with the Session.
func EnsureDeletedLater(sess *zkcoord.Session, path string) {
	ctx := sess.Context()
	lifetime.Go(sess, func() {
		if err := EnsureDeleted(ctx, sess, path); err != nil && sess.Err() == nil {
			sess.Logger().Warn("could not delete abandoned node", "path", path, "err", err)
		}
	})
}

// WatchPredecessor is the step of the herd-free wait that locks and
// elections share. look lists the contenders and returns the path of the
// node to wait for, or "" when there is none; WatchPredecessor then sets a
// data watch on that node, reading it as Curator does rather than calling
// exists, so that a node already gone leaves no watch behind. A node gone
// before its watch is set means the order has changed: look runs again,
// until it names a node that is there, names none, or fails. It returns
// the node, its data and the watch, or look's error, or the read's.
func WatchPredecessor(ctx context.Context, sess *zkcoord.Session, look func() (string, error)) (string, []byte, <-chan zkcoord.Event, error) {
	for {
		pred, err := look()
		if err != nil || pred == "" {
			return pred, nil, nil, err
		}
		data, _, w, err := sess.GetW(ctx, pred)
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return "", nil, nil, err
		}
		return pred, data, w, nil
	}
}
