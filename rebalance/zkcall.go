package rebalance

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// The Session methods below are called through detach whenever their
// context may be cancelled: the request then runs to completion on a
// context that only the Session's end interrupts, on its own goroutine,
// while the caller returns as soon as its context ends. (The Session's own
// early return on cancellation leaves its request goroutine writing the
// method's results after the method returned, which the race detector
// reports.)
func detach[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f(ctx)
	}
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f(context.WithoutCancel(ctx))
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// reply holds the results of one Session call.
type reply struct {
	data     []byte
	children []string
	ok       bool
	stat     *zkcoord.Stat
	w        <-chan zkcoord.Event
	multi    []zkcoord.MultiResponse
}

func zGet(ctx context.Context, s *zkcoord.Session, p string) ([]byte, *zkcoord.Stat, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		d, st, err := s.Get(ctx, p)
		return reply{data: d, stat: st}, err
	})
	return r.data, r.stat, err
}

func zGetW(ctx context.Context, s *zkcoord.Session, p string) ([]byte, *zkcoord.Stat, <-chan zkcoord.Event, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		d, st, w, err := s.GetW(ctx, p)
		return reply{data: d, stat: st, w: w}, err
	})
	return r.data, r.stat, r.w, err
}

func zChildren(ctx context.Context, s *zkcoord.Session, p string) ([]string, *zkcoord.Stat, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		c, st, err := s.Children(ctx, p)
		return reply{children: c, stat: st}, err
	})
	return r.children, r.stat, err
}

func zChildrenW(ctx context.Context, s *zkcoord.Session, p string) ([]string, *zkcoord.Stat, <-chan zkcoord.Event, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		c, st, w, err := s.ChildrenW(ctx, p)
		return reply{children: c, stat: st, w: w}, err
	})
	return r.children, r.stat, r.w, err
}

func zExists(ctx context.Context, s *zkcoord.Session, p string) (bool, *zkcoord.Stat, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		ok, st, err := s.Exists(ctx, p)
		return reply{ok: ok, stat: st}, err
	})
	return r.ok, r.stat, err
}

func zExistsW(ctx context.Context, s *zkcoord.Session, p string) (bool, *zkcoord.Stat, <-chan zkcoord.Event, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		ok, st, w, err := s.ExistsW(ctx, p)
		return reply{ok: ok, stat: st, w: w}, err
	})
	return r.ok, r.stat, r.w, err
}

func zCreate(ctx context.Context, s *zkcoord.Session, p string, data []byte, flags int32) error {
	_, err := detach(ctx, func(ctx context.Context) (reply, error) {
		_, err := s.Create(ctx, p, data, flags)
		return reply{}, err
	})
	return err
}

func zSet(ctx context.Context, s *zkcoord.Session, p string, data []byte, version int32) (*zkcoord.Stat, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		st, err := s.Set(ctx, p, data, version)
		return reply{stat: st}, err
	})
	return r.stat, err
}

func zDelete(ctx context.Context, s *zkcoord.Session, p string, version int32) error {
	_, err := detach(ctx, func(ctx context.Context) (reply, error) {
		return reply{}, s.Delete(ctx, p, version)
	})
	return err
}

func zMulti(ctx context.Context, s *zkcoord.Session, ops ...any) ([]zkcoord.MultiResponse, error) {
	r, err := detach(ctx, func(ctx context.Context) (reply, error) {
		res, err := s.Multi(ctx, ops...)
		return reply{multi: res}, err
	})
	return r.multi, err
}

func zEnsurePath(ctx context.Context, s *zkcoord.Session, p string) error {
	_, err := detach(ctx, func(ctx context.Context) (reply, error) {
		return reply{}, s.EnsurePath(ctx, p)
	})
	return err
}
