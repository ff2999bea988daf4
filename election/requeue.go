package election

import (
	"context"
	"errors"
	"fmt"
)

// Lead campaigns, calls lead with each Leadership won and campaigns again
// once that leadership has ended, as Curator's LeaderSelector does with
// auto-requeue. lead's ctx is cancelled when the leadership ends or Lead's
// ctx does: run the leader's work under it and return then. Returning nil
// earlier gives the leadership up too. Lead resigns each leadership before
// it campaigns again, so other candidates get a turn.
//
// Lead returns when ctx ends (with ctx's error), when lead returns an error
// (after resigning), and when campaigning can no longer succeed on this
// Session: the Session ended (ErrLost), the election ended (ErrEnded) or
// its sequence counter wrapped (zkcoord.ErrSequenceWrapped). To campaign
// again after a Session loss too, run Lead under zkcoord.Supervise.
func (e *Election) Lead(ctx context.Context, lead func(ctx context.Context, l *Leadership) error) error {
	for {
		l, err := e.Campaign(ctx)
		if err != nil {
			return err
		}
		lctx, cancel := context.WithCancelCause(l.Context())
		unfollow := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
		err = lead(lctx, l)
		unfollow()
		cancel(nil)
		rctx, done := context.WithTimeout(context.WithoutCancel(ctx), e.sess.Timeout())
		rerr := l.Resign(rctx)
		done()
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return fmt.Errorf("election: lead %s: %w", e.path, ctx.Err())
		case e.sess.Err() != nil:
			return fmt.Errorf("%w: %w", ErrLost, e.sess.Err())
		case errors.Is(l.Err(), ErrEnded):
			return l.Err()
		case rerr != nil:
			// The node stays: campaigning again would queue behind it.
			return rerr
		}
	}
}
