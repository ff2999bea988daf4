//go:build bench

package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

// Metric ids of the lock workloads.
const (
	mFloor      = "floor"
	mRead       = "read"
	mLock       = "lock"
	mHandoff    = "handoff"
	mDistinct   = "distinct"
	handoffN    = 8  // sessions contending in the handoff workload
	distinctN   = 64 // goroutines (threads) on distinct locks
	zkcoordName = "zkcoord"
	gozkName    = "go-zookeeper"
	curatorName = "Curator"
	kazooName   = "Kazoo"
)

// A locker is one holder's view of a lock, whatever implements it.
type locker struct {
	lock   func(ctx context.Context) error
	unlock func(ctx context.Context) error
}

func zkcoordLocker(sess *zkcoord.Session, path string) (locker, error) {
	m, err := lock.NewMutex(sess, path)
	if err != nil {
		return locker{}, err
	}
	return locker{
		lock: func(ctx context.Context) error {
			_, err := m.Lock(ctx)
			return err
		},
		unlock: m.Unlock,
	}, nil
}

func gozkLocker(conn *zk.Conn, path string) locker {
	l := zk.NewLock(conn, path, zk.WorldACL(zk.PermAll))
	return locker{
		lock:   func(context.Context) error { return l.Lock() },
		unlock: func(context.Context) error { return l.Unlock() },
	}
}

// pairs times warm+n calls of op and returns the last n, in milliseconds.
func pairs(ctx context.Context, n, warm int, op func(ctx context.Context) error) ([]float64, error) {
	out := make([]float64, 0, n)
	for i := 0; i < warm+n; i++ {
		t := time.Now()
		if err := op(ctx); err != nil {
			return nil, err
		}
		if i >= warm {
			out = append(out, ms(int64(time.Since(t))))
		}
	}
	return out, nil
}

// handoff runs one goroutine per locker, all on the same lock, each
// acquiring and releasing in a loop, and returns the intervals between
// consecutive acquisitions after the first warm: each one is the time the
// lock took to pass from one holder to the next. ops counts every
// acquisition, warm-up included.
func handoff(ctx context.Context, ls []locker, n, warm int) (stepOut, error) {
	total := warm + n + 1
	var (
		mu    sync.Mutex
		times []float64
		done  atomic.Bool
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
		acqs  atomic.Int64
	)
	epoch := time.Now()
	for _, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				if err := l.lock(ctx); err != nil {
					errMu.Lock()
					first = errors.Join(first, err)
					errMu.Unlock()
					done.Store(true)
					return
				}
				t := ms(int64(time.Since(epoch)))
				acqs.Add(1)
				mu.Lock()
				if len(times) < total {
					times = append(times, t)
				}
				if len(times) >= total {
					done.Store(true)
				}
				mu.Unlock()
				if err := l.unlock(ctx); err != nil {
					errMu.Lock()
					first = errors.Join(first, err)
					errMu.Unlock()
					done.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return stepOut{}, first
	}
	return stepOut{values: intervals(times)[warm:], ops: int(acqs.Load())}, nil
}

// distinct runs one goroutine per locker, each on its own lock: warm pairs
// each, then, from a common start, per pairs each. The one sample is the
// wall time of the measured phase per pair.
func distinct(ctx context.Context, ls []locker, per, warm int) (stepOut, error) {
	var (
		warmed, wg sync.WaitGroup
		goCh       = make(chan struct{})
		errMu      sync.Mutex
		first      error
		lat        = make([][]float64, len(ls))
	)
	fail := func(err error) {
		errMu.Lock()
		first = errors.Join(first, err)
		errMu.Unlock()
	}
	for i, l := range ls {
		warmed.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := pairs(ctx, warm, 0, func(ctx context.Context) error {
				if err := l.lock(ctx); err != nil {
					return err
				}
				return l.unlock(ctx)
			})
			warmed.Done()
			if err != nil {
				fail(err)
				return
			}
			<-goCh
			lat[i], err = pairs(ctx, per, 0, func(ctx context.Context) error {
				if err := l.lock(ctx); err != nil {
					return err
				}
				return l.unlock(ctx)
			})
			if err != nil {
				fail(err)
			}
		}()
	}
	warmed.Wait()
	t0 := time.Now()
	close(goCh)
	wg.Wait()
	wall := time.Since(t0)
	if first != nil {
		return stepOut{}, first
	}
	var all []float64
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Float64s(all)
	ops := len(ls) * per
	return stepOut{
		values: []float64{ms(int64(wall)) / float64(ops)},
		ops:    len(ls) * (per + warm), // the requests of the warm-up are counted too
		extra:  map[string]float64{"op_p50_ms": median(all), "ops_per_s": float64(ops) / wall.Seconds()},
	}, nil
}

// lockSizes are the iteration counts of the lock suites.
type lockSizes struct {
	n, warm, rounds int
	per, perWarm    int // distinct: pairs per goroutine
}

func lockSizesFor(e *env) lockSizes {
	switch {
	case e.quick:
		return lockSizes{n: 30, warm: 5, rounds: 2, per: 3, perWarm: 1}
	case !e.set.loopback():
		// A pair costs milliseconds here, not a fraction of one.
		return lockSizes{n: 100, warm: 20, rounds: 6}
	}
	return lockSizes{n: 500, warm: 100, rounds: 8, per: 40, perWarm: 5}
}

// peerImpl is a peer taking part in a suite through one command per round.
func peerImpl(p *peer, metric, cmd string, args func() map[string]any) *impl {
	return &impl{
		name: p.name,
		round: func(ctx context.Context, rec *recorder) error {
			return rec.step(ctx, metric, func() (stepOut, error) {
				r, err := p.call(ctx, 10*time.Minute, cmd, args())
				return r.out(), err
			})
		},
	}
}

func floorSuite(e *env) *suite {
	sz := lockSizesFor(e)
	var conn *zk.Conn
	var sess *zkcoord.Session
	rawDir := freshPath(gozkName, "floor")
	sessDir := freshPath(zkcoordName, "floor")
	mf, mr := e.set.metric(mFloor), e.set.metric(mRead)
	s := &suite{id: mf, rounds: sz.rounds}
	s.impls = append(s.impls,
		&impl{
			name: gozkName,
			setup: func(ctx context.Context) (err error) {
				if conn, err = connectRaw(ctx); err != nil {
					return err
				}
				return ensureRaw(conn, rawDir)
			},
			round: func(ctx context.Context, rec *recorder) error {
				err := rec.step(ctx, mf, func() (stepOut, error) {
					v, err := pairs(ctx, sz.n, sz.warm, func(context.Context) error {
						p, err := conn.Create(rawDir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
						if err != nil {
							return err
						}
						return conn.Delete(p, -1)
					})
					return stepOut{values: v, ops: sz.n + sz.warm}, err
				})
				if err != nil {
					return err
				}
				// One read: the round trip as clients see it, the proxy's
				// own cost included.
				return rec.step(ctx, mr, func() (stepOut, error) {
					v, err := pairs(ctx, sz.n, sz.warm, func(context.Context) error {
						_, _, err := conn.Exists(rawDir)
						return err
					})
					return stepOut{values: v, ops: sz.n + sz.warm}, err
				})
			},
			teardown: func(context.Context) error { conn.Close(); return nil },
		},
		&impl{
			name: zkcoordName,
			setup: func(ctx context.Context) (err error) {
				if sess, err = connect(ctx); err != nil {
					return err
				}
				return sess.EnsurePath(ctx, sessDir)
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mf, func() (stepOut, error) {
					v, err := pairs(ctx, sz.n, sz.warm, func(ctx context.Context) error {
						p, err := sess.Create(ctx, sessDir+"/n-", nil, zkcoord.FlagEphemeralSequential)
						if err != nil {
							return err
						}
						return sess.Delete(ctx, p, -1)
					})
					return stepOut{values: v, ops: sz.n + sz.warm}, err
				})
			},
			teardown: func(ctx context.Context) error { return sess.Close(ctx) },
		},
	)
	for _, p := range e.peers() {
		dir := freshPath(p.name, "floor")
		s.impls = append(s.impls, peerImpl(p, mf, "floor", func() map[string]any {
			return map[string]any{"path": dir, "n": sz.n, "warm": sz.warm}
		}))
	}
	return s
}

func lockSuite(e *env) *suite {
	sz := lockSizesFor(e)
	ml := e.set.metric(mLock)
	s := &suite{id: ml, rounds: sz.rounds}
	var (
		sess *zkcoord.Session
		conn *zk.Conn
		zl   locker
		gl   locker
	)
	pair := func(l *locker) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			if err := l.lock(ctx); err != nil {
				return err
			}
			return l.unlock(ctx)
		}
	}
	s.impls = append(s.impls,
		&impl{
			name: zkcoordName,
			setup: func(ctx context.Context) (err error) {
				if sess, err = connect(ctx); err != nil {
					return err
				}
				zl, err = zkcoordLocker(sess, freshPath(zkcoordName, "lock"))
				return err
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, ml, func() (stepOut, error) {
					v, err := pairs(ctx, sz.n, sz.warm, pair(&zl))
					return stepOut{values: v, ops: sz.n + sz.warm}, err
				})
			},
			teardown: func(ctx context.Context) error { return sess.Close(ctx) },
		},
		&impl{
			name: gozkName,
			setup: func(ctx context.Context) (err error) {
				if conn, err = connectRaw(ctx); err != nil {
					return err
				}
				gl = gozkLocker(conn, freshPath(gozkName, "lock"))
				return nil
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, ml, func() (stepOut, error) {
					v, err := pairs(ctx, sz.n, sz.warm, pair(&gl))
					return stepOut{values: v, ops: sz.n + sz.warm}, err
				})
			},
			teardown: func(context.Context) error { conn.Close(); return nil },
		},
	)
	for _, p := range e.peers() {
		dir := freshPath(p.name, "lock")
		s.impls = append(s.impls, peerImpl(p, ml, "lock", func() map[string]any {
			return map[string]any{"path": dir, "n": sz.n, "warm": sz.warm}
		}))
	}
	return s
}

func handoffSuite(e *env) *suite {
	sz := lockSizesFor(e)
	mh := e.set.metric(mHandoff)
	s := &suite{id: mh, rounds: sz.rounds}
	var (
		sessions []*zkcoord.Session
		conns    []*zk.Conn
		zls, gls []locker
	)
	s.impls = append(s.impls,
		&impl{
			name: zkcoordName,
			setup: func(ctx context.Context) (err error) {
				if sessions, err = connectN(ctx, handoffN); err != nil {
					return err
				}
				dir := freshPath(zkcoordName, "handoff")
				for _, ss := range sessions {
					l, err := zkcoordLocker(ss, dir)
					if err != nil {
						return err
					}
					zls = append(zls, l)
				}
				return nil
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mh, func() (stepOut, error) { return handoff(ctx, zls, sz.n, sz.warm) })
			},
			teardown: func(context.Context) error { closeAll(sessions); return nil },
		},
		&impl{
			name: gozkName,
			setup: func(ctx context.Context) error {
				dir := freshPath(gozkName, "handoff")
				for i := 0; i < handoffN; i++ {
					c, err := connectRaw(ctx)
					if err != nil {
						return err
					}
					conns = append(conns, c)
					gls = append(gls, gozkLocker(c, dir))
				}
				return nil
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mh, func() (stepOut, error) { return handoff(ctx, gls, sz.n, sz.warm) })
			},
			teardown: func(context.Context) error {
				for _, c := range conns {
					c.Close()
				}
				return nil
			},
		},
	)
	for _, p := range e.peers() {
		dir := freshPath(p.name, "handoff")
		s.impls = append(s.impls, peerImpl(p, mh, "handoff", func() map[string]any {
			return map[string]any{"path": dir, "sessions": handoffN, "n": sz.n, "warm": sz.warm}
		}))
	}
	return s
}

func distinctSuite(e *env) *suite {
	sz := lockSizesFor(e)
	// One sample per round: run more rounds than the other lock suites.
	s := &suite{id: "distinct", rounds: sz.rounds * 7 / 4}
	var (
		sess     *zkcoord.Session
		conn     *zk.Conn
		zls, gls []locker
	)
	s.impls = append(s.impls,
		&impl{
			name: zkcoordName,
			setup: func(ctx context.Context) (err error) {
				if sess, err = connect(ctx); err != nil {
					return err
				}
				dir := freshPath(zkcoordName, "distinct")
				for i := 0; i < distinctN; i++ {
					l, err := zkcoordLocker(sess, fmt.Sprintf("%s/l%d", dir, i))
					if err != nil {
						return err
					}
					zls = append(zls, l)
				}
				return nil
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mDistinct, func() (stepOut, error) {
					return distinct(ctx, zls, sz.per, sz.perWarm)
				})
			},
			teardown: func(ctx context.Context) error { return sess.Close(ctx) },
		},
		&impl{
			name: gozkName,
			setup: func(ctx context.Context) (err error) {
				if conn, err = connectRaw(ctx); err != nil {
					return err
				}
				dir := freshPath(gozkName, "distinct")
				for i := 0; i < distinctN; i++ {
					gls = append(gls, gozkLocker(conn, fmt.Sprintf("%s/l%d", dir, i)))
				}
				return nil
			},
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mDistinct, func() (stepOut, error) {
					return distinct(ctx, gls, sz.per, sz.perWarm)
				})
			},
			teardown: func(context.Context) error { conn.Close(); return nil },
		},
	)
	for _, p := range e.peers() {
		dir := freshPath(p.name, "distinct")
		s.impls = append(s.impls, peerImpl(p, mDistinct, "distinct", func() map[string]any {
			return map[string]any{"path": dir, "threads": distinctN, "per": sz.per, "warm": sz.perWarm}
		}))
	}
	return s
}
