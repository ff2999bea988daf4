package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/end"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/lock"
)

// holding is a leadership or a lock lease.
type holding interface {
	Token() int64
	Done() <-chan struct{}
	Err() error
	Release(ctx context.Context) error
}

type leadership struct{ *election.Leadership }

func (l leadership) Release(ctx context.Context) error { return l.Resign(ctx) }

// ownerKind describes the election and lock workloads: how to acquire a
// resource and how long to keep it.
type ownerKind struct {
	// acquire takes resource; delay is the lock-delay (Options.LockDelay).
	acquire   func(ctx context.Context, sess *zkcoord.Session, root, id, resource string, delay time.Duration) (holding, error)
	holdRange [2]time.Duration // how long a holder keeps the resource
	gapRange  [2]time.Duration // pause before competing again
}

var ownerKinds = map[Workload]ownerKind{
	Election: {
		acquire: func(ctx context.Context, sess *zkcoord.Session, root, id, resource string, delay time.Duration) (holding, error) {
			e, err := election.New(sess, zkcoord.Join(root, "elections", resource), election.WithID(id), election.WithLockDelay(delay))
			if err != nil {
				return nil, err
			}
			l, err := e.Campaign(ctx)
			if err != nil {
				return nil, err
			}
			return leadership{l}, nil
		},
		holdRange: [2]time.Duration{time.Second, 4 * time.Second},
		gapRange:  [2]time.Duration{50 * time.Millisecond, 500 * time.Millisecond},
	},
	Lock: {
		acquire: func(ctx context.Context, sess *zkcoord.Session, root, id, resource string, delay time.Duration) (holding, error) {
			m, err := lock.NewMutex(sess, zkcoord.Join(root, "locks", resource), lock.WithLockDelay(delay))
			if err != nil {
				return nil, err
			}
			return m.Lock(ctx)
		},
		holdRange: [2]time.Duration{100 * time.Millisecond, 600 * time.Millisecond},
		gapRange:  [2]time.Duration{0, 300 * time.Millisecond},
	},
}

// recoveryKind is what the recovery workload does with resource r: an
// election for even-numbered resources, a lock for the others.
func recoveryKind(r string) ownerKind {
	if r != "" && (r[len(r)-1]-'0')%2 == 0 {
		return ownerKinds[Election]
	}
	return ownerKinds[Lock]
}

// ownerApp is a client of the election, lock and recovery workloads: one
// loop per resource acquires it, uses it for a while, gives it up and
// competes again, on Sessions that a sessions manager renews after each
// loss or (recovery) under zkcoord.Supervise.
type ownerApp struct {
	f    clientFlags
	cfg  zkcoord.Config
	kind ownerKind
	em   *event.Emitter
	svc  *serviceConn
	sm   *sessions // nil for the recovery workload

	mu    sync.Mutex
	loops map[string]*ownerLoop
	wg    sync.WaitGroup
	ended *end.End // ends if a supervised loop gave up (recovery)
}

type ownerLoop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startOwner(ctx context.Context, f clientFlags, cfg zkcoord.Config, em *event.Emitter, svc *serviceConn) (*ownerApp, error) {
	a := &ownerApp{f: f, cfg: cfg, kind: ownerKinds[f.workload], em: em, svc: svc, loops: map[string]*ownerLoop{},
		ended: end.New()}
	if f.workload == Recovery {
		for _, r := range f.resources {
			a.add(r)
		}
		return a, nil
	}
	a.sm = startSessions(cfg, em, f.log)
	if _, err := a.sm.get(ctx); err != nil {
		a.sm.close()
		return nil, err
	}
	for _, r := range f.resources {
		a.add(r)
	}
	return a, nil
}

func (a *ownerApp) add(r string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.loops[r]; ok || r == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &ownerLoop{cancel: cancel, done: make(chan struct{})}
	a.loops[r] = l
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(l.done)
		a.loop(ctx, r)
	}()
}

func (a *ownerApp) remove(r string) {
	a.mu.Lock()
	l := a.loops[r]
	delete(a.loops, r)
	a.mu.Unlock()
	if l != nil {
		l.cancel()
		<-l.done
	}
}

func (a *ownerApp) stop(ctx context.Context) error {
	a.mu.Lock()
	loops := a.loops
	a.loops = map[string]*ownerLoop{}
	a.mu.Unlock()
	for _, l := range loops {
		l.cancel()
	}
	waited := make(chan struct{})
	go func() {
		a.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-ctx.Done():
		return fmt.Errorf("chaos: stop: %w", ctx.Err())
	}
	if a.sm != nil {
		a.sm.close()
	}
	return nil
}

func (a *ownerApp) done() <-chan struct{} { return a.ended.Done() }
func (a *ownerApp) err() error            { return a.ended.Err() }

// end ends the app on its own: a supervised loop gave up.
func (a *ownerApp) end(err error) { a.ended.End(err) }

// loop competes for resource r until ctx ends.
func (a *ownerApp) loop(ctx context.Context, r string) {
	rng := rand.New(rand.NewPCG(seedFor(a.f.seed, a.f.name, r), uint64(time.Now().UnixNano())))
	draw := func(rg [2]time.Duration) time.Duration {
		if rg[1] <= rg[0] {
			return rg[0]
		}
		return rg[0] + time.Duration(rng.Int64N(int64(rg[1]-rg[0])))
	}
	if a.sm == nil {
		a.supervised(ctx, r, draw)
		return
	}
	for ctx.Err() == nil {
		sess, err := a.sm.get(ctx)
		if err != nil {
			return
		}
		a.round(ctx, sess, a.kind, r, draw)
	}
}

// supervised competes for r under zkcoord.Supervise (the recovery
// workload): each Session runs the competition until it is lost, then
// Supervise opens a new one and the competition starts again from scratch.
func (a *ownerApp) supervised(ctx context.Context, r string, draw func([2]time.Duration) time.Duration) {
	kind := recoveryKind(r)
	events, stopEvents := fifo.Relay(16, func(ev zkcoord.RecoveryEvent) { a.em.Emit(recoveryNote(r, ev)) })
	err := zkcoord.Supervise(ctx, a.cfg, func(ctx context.Context, sess *zkcoord.Session) error {
		for ctx.Err() == nil {
			a.round(ctx, sess, kind, r, draw)
		}
		return ctx.Err()
	}, zkcoord.WithRecoveryEvents(events), zkcoord.WithMaxBackoff(time.Second))
	stopEvents()
	if ctx.Err() == nil {
		a.end(fmt.Errorf("chaos: %s: supervisor gave up: %w", r, err))
	}
}

// recoveryNote records a recovery event of the supervisor running what; the
// checker counts the recoveries from these notes.
func recoveryNote(what string, ev zkcoord.RecoveryEvent) event.Event {
	d := fmt.Sprintf("%s: %s session 0x%x", what, ev.Kind, ev.Session)
	if ev.Err != nil {
		d += fmt.Sprint(": ", ev.Err)
	}
	return event.Event{Kind: event.Note, Detail: d}
}

// round acquires r once on sess, holds it for a while, gives it up, and
// pauses before the next round.
func (a *ownerApp) round(ctx context.Context, sess *zkcoord.Session, kind ownerKind, r string,
	draw func([2]time.Duration) time.Duration) {
	h, err := kind.acquire(ctx, sess, a.f.root, a.f.name, r, a.f.lockDelay)
	if err != nil {
		if ctx.Err() == nil && sess.Err() == nil {
			a.f.log.Warn("acquire failed", "resource", r, "err", err)
		}
		delay.Sleep(ctx, draw([2]time.Duration{100 * time.Millisecond, 300 * time.Millisecond}), nil)
		return
	}
	a.hold(ctx, r, h, draw(kind.holdRange))
	delay.Sleep(ctx, draw(kind.gapRange), nil)
}

// hold uses r from its acquisition until the holding is lost, hold time has
// passed or ctx ends, then gives it up.
func (a *ownerApp) hold(ctx context.Context, r string, h holding, hold time.Duration) {
	token := h.Token()
	if token == 0 { // lost before its token could be read
		a.giveUp(h)
		return
	}
	a.em.Emit(event.Event{Kind: event.Acquire, Resource: r, Token: token})
	wctx, cancel := whileHeld(h.Done())
	defer cancel()
	w := startWorker(wctx, a.svc, a.f.log, r, token, a.f.useInterval, a.f.bug == BugLateStop)
	t := time.NewTimer(hold)
	defer t.Stop()
	why := "held long enough"
	select {
	case <-h.Done():
		why = fmt.Sprint("lost: ", h.Err())
	case <-t.C:
	case <-ctx.Done():
		why = "stopping"
	}
	if a.f.bug == BugLateStop {
		a.giveUp(h)
		w.stopLate(lateStopLinger)
		a.em.Emit(event.Event{Kind: event.Release, Resource: r, Token: token, Detail: why})
		return
	}
	w.stop()
	a.em.Emit(event.Event{Kind: event.Release, Resource: r, Token: token, Detail: why})
	a.giveUp(h)
}

func (a *ownerApp) giveUp(h holding) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Release(ctx); err != nil {
		select {
		case <-h.Done():
			// already lost; nothing to give up
		default:
			a.f.log.Warn("release failed", "err", err)
		}
	}
}
