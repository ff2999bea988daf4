package failover

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
)

// bg is the context of ZooKeeper calls made while holding the lock: they
// are bounded by the Session's life, and the Session's calls must not be
// abandoned half-way through by a cancelled context.
var bg = context.Background()

// serve runs one tenure of the lock: fence, breadcrumb, active, clean up.
// It reports whether Run is done, and with what.
func (f *Failover) serve(ctx context.Context, l *election.Leadership, active ActiveFunc) (done bool, err error) {
	// The work ends with the lock, with ctx, or when the health check
	// starts failing.
	lctx, cancel := context.WithCancelCause(l.Context())
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	wctx, stopHealth := f.whileHealthy(lctx)
	defer func() {
		stopHealth()
		stop()
		cancel(nil)
	}()
	unhealthy := func() bool { return errors.Is(context.Cause(wctx), ErrUnhealthy) }
	resign := func() {
		if err := l.Resign(bg); err != nil && f.sess.Err() == nil {
			f.opts.logger.Warn("failover: could not give up the lock", "path", f.path, "err", err)
		}
	}
	failed := func(err error) (bool, error) {
		resign()
		switch {
		case f.sess.Err() != nil:
			return true, fmt.Errorf("failover: %w", l.Err())
		case ctx.Err() != nil:
			return true, nil
		case unhealthy():
			return false, nil // stand again once healthy
		}
		f.opts.logger.Warn("failover: activation failed", "path", f.path, "err", err)
		return false, errRetry
	}

	prev, err := f.readBreadcrumb(bg)
	if err != nil {
		return failed(err)
	}
	token := l.Token()
	fenced := false
	if prev != nil && !(f.lastToken != 0 && prev.ID == f.opts.id && prev.Token == f.lastToken) {
		f.emit(Event{Type: EventFencing, Token: token, Previous: prev})
		if err := f.fence(wctx, *prev); err != nil {
			f.emit(Event{Type: EventFenceFailed, Token: token, Previous: prev, Err: err})
			return failed(err)
		}
		if wctx.Err() != nil {
			return failed(context.Cause(wctx))
		}
		fenced = true
		f.emit(Event{Type: EventFenced, Token: token, Previous: prev})
	}

	mine := encodeBreadcrumb(Breadcrumb{ID: f.opts.id, Token: token, Session: f.sess.ID(), Data: f.opts.data})
	op := zkcoord.CreateOp(f.crumb, mine, zkcoord.FlagPersistent)
	if prev != nil {
		op = zkcoord.SetOp(f.crumb, mine, prev.Version)
	}
	res, err := f.sess.GuardedMulti(bg, l.Fence(), op)
	if err != nil {
		return failed(fmt.Errorf("write breadcrumb: %w", err))
	}
	var version int32
	if prev != nil {
		version = res[0].Stat.Version
	}

	a := Activation{
		ID: f.opts.id, Token: token, Term: l.Term(), Fence: l.Fence(),
		Previous: prev, Fenced: fenced, Leadership: l,
	}
	f.emit(Event{Type: EventActive, Token: token, Previous: prev})
	aerr := active(wctx, a)
	f.lastToken = token
	if lctx.Err() != nil && ctx.Err() == nil {
		// The leadership's context ends with the Session a moment before
		// the candidate closes Done: wait for it, so a loss is not taken
		// for a clean stop.
		<-l.Done()
	}
	lost := isClosed(l.Done())
	sick := unhealthy() && ctx.Err() == nil
	f.emit(Event{Type: EventInactive, Token: token, Err: aerr})

	// A clean stop leaves nothing for the next active to fence. Stepping
	// down for failing health is not one: the instance may be wedged.
	if !lost && !sick && (ctx.Err() != nil || aerr == nil) {
		// Clean stop: nothing for the next active to fence.
		_, err := f.sess.GuardedMulti(bg, l.Fence(), zkcoord.DeleteOp(f.crumb, version))
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			f.opts.logger.Warn("failover: could not delete breadcrumb", "path", f.crumb, "err", err)
		}
	}
	resign()
	switch {
	case ctx.Err() != nil:
		return true, nil
	case lost && f.sess.Err() != nil:
		return true, fmt.Errorf("failover: %w", l.Err())
	case lost:
		return false, nil // stand by again
	case sick:
		return false, nil // stand again once healthy
	}
	return true, aerr
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
