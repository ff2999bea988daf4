package rebalance

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// job is one handler call: Assigned (assign) or Unassigned followed by the
// deletion of the barrier (del).
type job struct {
	s      *slot
	assign bool
	cause  error
	del    bool
}

// executor runs handler calls one at a time, in order, on its own
// goroutine, so that user code never blocks the member's loop.
type executor struct {
	m      *member
	mu     sync.Mutex
	queue  []job
	closed bool
	notify chan struct{}
}

func (e *executor) push(j job) {
	e.mu.Lock()
	e.queue = append(e.queue, j)
	e.mu.Unlock()
	e.wake()
}

// close makes run return once the queue is empty.
func (e *executor) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.wake()
}

func (e *executor) wake() {
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

func (e *executor) run() {
	defer e.m.wg.Done()
	for {
		e.mu.Lock()
		q, closed := e.queue, e.closed
		e.queue = nil
		e.mu.Unlock()
		for _, j := range q {
			e.do(j)
		}
		if len(q) == 0 {
			if closed {
				return
			}
			<-e.notify
		}
	}
}

func (e *executor) do(j job) {
	m, s := e.m, j.s
	if j.assign {
		var err error
		if s.ctx.Err() == nil { // not already taken away
			if m.h.Assigned != nil {
				err = m.callHandler("Assigned", s.res, func() error { return m.h.Assigned(s.ctx, s.a) })
			}
			if err != nil && stoppedByContext(s.ctx, err) {
				err = nil // the Go idiom for "stopped because you asked": a normal return
			}
			s.run.started = err == nil
		}
		m.send(evAssigned{res: s.res, attempt: s.attempt, err: err})
		return
	}
	var err error
	if s.run.started && m.h.Unassigned != nil {
		err = m.callHandler("Unassigned", s.res, func() error { return m.h.Unassigned(s.a, j.cause) })
	}
	if err != nil {
		// The resource may still be in use: it stays fenced (its barrier,
		// and so the Session, are kept) and Unassigned is called again
		// until it succeeds.
		s.run.failures++
		m.stopFailed(s.a, s.run.failures, err)
		m.send(evStopFailed{res: s.res, attempt: s.attempt, failures: s.run.failures, err: err})
		return
	}
	if !j.del {
		m.send(evReleased{res: s.res, attempt: s.attempt})
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		err := releaseBarrier(m.ctx, m.sess, m.lay.barrier(s.res), m.lay.handover(s.res), s.a.Token, s.held, errors.Is(j.cause, ErrRemoved), s.served)
		m.send(evReleased{res: s.res, attempt: s.attempt, err: err})
	}()
}

// stopFailed reports a failed call of Unassigned to Handler.StopFailed;
// a panic there is logged, never passed on.
func (m *member) stopFailed(a Assignment, failures int, err error) {
	if m.h.StopFailed == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			m.log.Error("rebalance: StopFailed handler panicked", "resource", a.Resource, "panic", fmt.Sprint(r))
		}
	}()
	m.h.StopFailed(a, failures, err)
}

// callHandler runs a handler function, turning an error or a panic into an
// error wrapping ErrHandler.
func (m *member) callHandler(name, res string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			m.log.Error("rebalance: handler panicked", "handler", name, "resource", res,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %s(%s) panicked: %v", ErrHandler, name, res, r)
		}
	}()
	if err := f(); err != nil {
		return fmt.Errorf("%w: %s(%s): %w", ErrHandler, name, res, err)
	}
	return nil
}

// stoppedByContext reports whether err, returned by a handler given ctx,
// only says that ctx ended: ctx is cancelled and err is its error or its
// cause.
func stoppedByContext(ctx context.Context, err error) bool {
	if ctx.Err() == nil {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Cause(ctx))
}
