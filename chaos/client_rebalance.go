package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/rebalance"
)

// rebalanceGroup is the group every rebalancer client of a run joins.
const rebalanceGroup = "g"

// rebalanceMinInterval is the coordinator's minimum time between two
// rebalancings in a run: short, so convergence is measured rather than
// coalescing.
const rebalanceMinInterval = 250 * time.Millisecond

func rebalanceMode(w Workload) rebalance.Mode {
	switch w {
	case RebalanceResource:
		return rebalance.ResourceBarrier
	case RebalanceGlobal:
		return rebalance.GlobalBarrier
	}
	return rebalance.Incremental
}

// rebalanceApp is a client of the rebalancer workloads: a rebalance.Client
// with auto-recovery whose handler uses every assigned resource until it is
// taken away.
type rebalanceApp struct {
	f   clientFlags
	em  *event.Emitter
	svc *serviceConn
	c   *rebalance.Client

	mu      sync.Mutex
	workers map[string]*worker
	late    sync.WaitGroup // late-stop bug: releases still to be reported
}

func startRebalance(ctx context.Context, f clientFlags, cfg zkcoord.Config, em *event.Emitter, svc *serviceConn) (*rebalanceApp, error) {
	a := &rebalanceApp{f: f, em: em, svc: svc, workers: map[string]*worker{}}
	h := rebalance.Handler{
		Assigned:   a.assigned,
		Unassigned: a.unassigned,
		Aborted: func(err error) {
			em.Emit(event.Event{Kind: event.Note, Detail: "aborted: " + err.Error()})
		},
	}
	events, stopEvents := fifo.Relay(16, func(ev zkcoord.RecoveryEvent) { em.Emit(recoveryNote(rebalanceGroup, ev)) })
	c, err := rebalance.StartConfig(ctx, cfg, zkcoord.Join(f.root, rebalanceGroup), h,
		rebalance.WithMode(rebalanceMode(f.workload)),
		rebalance.WithAutoRecovery(true), rebalance.WithName(f.name),
		rebalance.WithMinInterval(rebalanceMinInterval), rebalance.WithMaxRecoveryBackoff(time.Second),
		rebalance.WithLockDelay(f.lockDelay),
		rebalance.WithLogger(f.log), rebalance.WithRecoveryEvents(events))
	if err != nil {
		stopEvents()
		return nil, err
	}
	go func() {
		<-c.Done() // the client's last event is in the channel
		stopEvents()
	}()
	a.c = c
	return a, nil
}

// assigned records the acquire, then starts using the resource.
func (a *rebalanceApp) assigned(ctx context.Context, as rebalance.Assignment) error {
	a.em.Emit(event.Event{Kind: event.Acquire, Resource: as.Resource, Token: as.Token,
		Detail: fmt.Sprintf("%s gen %d", as.Client, as.Generation)})
	w := startWorker(ctx, a.svc, a.f.log, as.Resource, as.Token, a.f.useInterval, a.f.bug == BugLateStop)
	a.mu.Lock()
	a.workers[as.Resource] = w
	a.mu.Unlock()
	return nil
}

// unassigned stops using the resource, then records the release; it
// returns only after that, so the barrier is deleted after the last use.
// With the late-stop bug it returns at once and the worker goes on.
func (a *rebalanceApp) unassigned(as rebalance.Assignment, cause error) error {
	a.mu.Lock()
	w := a.workers[as.Resource]
	delete(a.workers, as.Resource)
	a.mu.Unlock()
	release := event.Event{Kind: event.Release, Resource: as.Resource, Token: as.Token, Detail: fmt.Sprint(cause)}
	if w == nil {
		a.em.Emit(release)
		return nil
	}
	if a.f.bug == BugLateStop {
		a.late.Add(1)
		go func() {
			defer a.late.Done()
			w.stopLate(lateStopLinger)
			a.em.Emit(release)
		}()
		return nil
	}
	w.stop()
	a.em.Emit(release)
	return nil
}

func (a *rebalanceApp) add(string)    {}
func (a *rebalanceApp) remove(string) {}

func (a *rebalanceApp) stop(ctx context.Context) error {
	err := a.c.Stop(ctx)
	a.late.Wait()
	return err
}

func (a *rebalanceApp) done() <-chan struct{} { return a.c.Done() }
func (a *rebalanceApp) err() error            { return a.c.Err() }
