package election

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Revocation asks an acting leader to give its leadership up; the leader
// decides. Curator has no layout for this (its Revoker writes into lock
// nodes, and neither LeaderLatch nor LeaderSelector watches for it), so
// zkcoord keeps its own, beside the term node: the revocation node
// (WithRevokePath; default the election path with "-revoke") holds the
// term a request is for, in decimal. Only the leader of that term sees it;
// a request left from an earlier term is stale and ignored, so the node is
// never deleted.

// ErrNotActing: the leader has not taken office, so it cannot be asked to
// give it up (a Curator LeaderLatch leader never takes office).
var ErrNotActing = errors.New("election: leader not acting")

// Revoke asks the acting leader to give its leadership up, and returns the
// leader it asked. The leader's Leadership.Revoked closes; whether and when
// it resigns is its own decision. Revoke does not wait. It fails with
// ErrNoLeader when the election has no participant and with ErrNotActing
// when its leader has not taken office.
func (e *Election) Revoke(ctx context.Context) (Leader, error) {
	l, err := e.Leader(ctx)
	if err != nil {
		return Leader{}, err
	}
	if !l.Acting {
		return l, fmt.Errorf("election: revoke %s: %w: %s", e.path, ErrNotActing, l.ID)
	}
	data := []byte(strconv.FormatInt(l.Term, 10))
	err = e.sess.Retry(ctx, func(ctx context.Context) error {
		_, err := e.sess.Set(ctx, e.opts.revokePath, data, -1)
		if errors.Is(err, zkcoord.ErrNoNode) {
			// The first request: create the node; one created meanwhile
			// by another request is written on the next attempt.
			if err := recipe.EnsureNode(ctx, e.sess, e.opts.revokePath, data, zkcoord.FlagPersistent); err != nil {
				return err
			}
			_, err = e.sess.Set(ctx, e.opts.revokePath, data, -1)
		}
		return err
	})
	if err != nil {
		return l, fmt.Errorf("election: revoke %s: %w", e.path, err)
	}
	return l, nil
}

// RevokePath returns the path of the revocation node.
func (e *Election) RevokePath() string { return e.opts.revokePath }

// Revoked is closed when another client asks this leader to give its
// leadership up (Election.Revoke, or `zkcoord election revoke`). The
// leadership goes on: the leader decides whether and when to Resign. The
// revocation node is watched from the first call of Revoked on, by a
// goroutine that ends with the leadership; a request made before that call
// is seen all the same.
func (l *Leadership) Revoked() <-chan struct{} {
	l.revokeWatch.Do(func() { go l.watchRevocation() })
	return l.revoked
}

// watchRevocation reads the revocation node, with a watch, until it names
// this leadership's term or the leadership ends.
func (l *Leadership) watchRevocation() {
	sess, path := l.c.el.sess, l.c.el.opts.revokePath
	for {
		data, _, w, err := sess.DataW(l.ctx, path)
		switch {
		case err != nil:
			if l.ctx.Err() == nil {
				l.c.el.opts.logger.Warn("election: revocation requests no longer watched", "path", path, "err", err)
			}
			return
		case requestFor(data, l.term):
			close(l.revoked) // the candidate's goroutine emits the event
			return
		}
		select {
		case <-w:
		case <-l.ctx.Done():
			return
		}
	}
}

// requestFor reports whether the revocation node's data asks the leader of
// term to give up.
func requestFor(data []byte, term int64) bool {
	return bytes.Equal(data, []byte(strconv.FormatInt(term, 10)))
}
