package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/rebalance"
)

// maxRestartDelay bounds the wait between restarts of a failing CMD.
const maxRestartDelay = time.Minute

// runSet is the resources a worker runs, one supervised CMD each. start and
// stop are called from the rebalance client's handler goroutine; each
// resource's CMD is watched by a goroutine of its own.
type runSet struct {
	w    *worker
	mu   sync.Mutex
	runs map[string]*resourceRun
}

// resourceRun is one resource held by the worker.
type resourceRun struct {
	as   rebalance.Assignment
	done chan struct{} // closed when the supervising goroutine ended: no CMD runs
}

func newRunSet(w *worker) *runSet {
	return &runSet{w: w, runs: map[string]*resourceRun{}}
}

// start runs the resource's CMD until ctx (the assignment's) ends.
func (s *runSet) start(ctx context.Context, sess *zkcoord.Session, as rebalance.Assignment) {
	r := &resourceRun{as: as, done: make(chan struct{})}
	s.mu.Lock()
	s.runs[as.Resource] = r
	n := len(s.runs)
	s.mu.Unlock()
	s.w.a.Rec.Assigned(s.w.o.group, n)
	s.emit(event.Event{Kind: event.Acquire, Resource: as.Resource, Token: as.Token})
	s.w.a.Log.Info("resource assigned", "resource", as.Resource, "token", as.Token, "generation", as.Generation)
	go s.supervise(ctx, sess, r)
}

// stop waits until the resource's CMD has stopped (its context was cancelled
// before stop is called) and forgets the resource.
func (s *runSet) stop(as rebalance.Assignment, cause error) {
	s.mu.Lock()
	r := s.runs[as.Resource]
	s.mu.Unlock()
	if r == nil {
		return
	}
	<-r.done
	s.emit(event.Event{Kind: event.Release, Resource: as.Resource, Token: as.Token})
	s.mu.Lock()
	delete(s.runs, as.Resource)
	n := len(s.runs)
	s.mu.Unlock()
	s.w.a.Rec.Assigned(s.w.o.group, n)
	s.w.a.Log.Info("resource released", "resource", as.Resource, "why", cause)
}

func (s *runSet) emit(e event.Event) {
	if s.w.em != nil {
		if err := s.w.em.Emit(e); err != nil {
			s.w.a.Log.Error("writing an event", "err", err)
		}
	}
}

// supervise runs the resource's CMD, restarting it as the policy says,
// until ctx ends; then it stops CMD.
func (s *runSet) supervise(ctx context.Context, sess *zkcoord.Session, r *resourceRun) {
	defer close(r.done)
	w, a, o := s.w, s.w.a, s.w.o
	res := r.as.Resource
	backoff := o.restartDelay
	restarts := 0
	for {
		started := time.Now()
		var stdout = a.Stdout
		if w.em != nil {
			stdout = a.Stderr // standard output carries the events
		}
		argv := w.childArgv(res)
		c, err := supervise.Start(supervise.Spec{Name: argv[0], Argv: argv, Env: w.childEnv(r.as), Stdout: stdout, Stderr: a.Stderr})
		failed := err != nil
		if err != nil {
			a.Log.Error("could not start the command", "resource", res, "err", err)
		} else {
			a.Log.Info("command started", "resource", res, "pid", c.Pid())
			select {
			case <-c.Done():
				failed = c.Status() != 0
				a.Log.Warn("command exited", "resource", res, "pid", c.Pid(), "how", c.Describe())
			case <-ctx.Done():
				cause := context.Cause(ctx)
				g := o.grace
				if !handedOver(cause) {
					g = supervise.LossGrace(sess, cause, o.grace)
				}
				c.Stop(g, sess, nil)
				a.Log.Info("command stopped", "resource", res, "pid", c.Pid(), "why", cause, "how", c.Describe())
				return
			}
		}
		if o.restart == "never" || (o.restart == "on-failure" && !failed) {
			a.Log.Info("not restarting the command; the resource stays idle until it moves", "resource", res)
			<-ctx.Done()
			return
		}
		restarts++
		if o.maxRestarts > 0 && restarts > o.maxRestarts {
			select {
			case w.giveUp <- fmt.Errorf("the command of resource %s failed %d times", res, restarts):
			default:
			}
			<-ctx.Done()
			return
		}
		if time.Since(started) > maxRestartDelay {
			backoff = o.restartDelay // it ran well for a while
		}
		a.Log.Info("restarting the command", "resource", res, "in", backoff, "restarts", restarts)
		if !delay.Sleep(ctx, backoff, nil) {
			return
		}
		a.Rec.ChildRestarted(o.group)
		backoff = min(2*backoff, maxRestartDelay)
	}
}

// handedOver reports whether a resource is being taken away in an orderly
// way: its barrier stays until the CMD has stopped, so the CMD may take its
// full grace period.
func handedOver(cause error) bool {
	return errors.Is(cause, rebalance.ErrMoved) || errors.Is(cause, rebalance.ErrRemoved) ||
		errors.Is(cause, rebalance.ErrRebalancing) || errors.Is(cause, rebalance.ErrStopped)
}
