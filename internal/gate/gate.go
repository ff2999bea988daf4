// Package gate holds a yes-or-no verdict that goroutines wait on: until it
// is open, or for as long as it stays open. A health check's verdict
// (failover.WithHealthCheck, and zkcoord elect --health without --fence)
// is kept in one.
package gate

import (
	"context"
	"sync"
)

// Gate is an open-or-shut verdict and a channel closed at its next change.
// It is safe for concurrent use.
type Gate struct {
	mu      sync.Mutex
	open    bool
	changed chan struct{}
}

// New returns a Gate, open or not.
func New(open bool) *Gate { return &Gate{open: open, changed: make(chan struct{})} }

// Set records the verdict and wakes the waiters if it changed.
func (g *Gate) Set(open bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if open != g.open {
		g.open = open
		close(g.changed)
		g.changed = make(chan struct{})
	}
}

// State returns the verdict and a channel closed when it next changes.
func (g *Gate) State() (open bool, changed <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open, g.changed
}

// Wait waits until the gate is open or ctx ends; it returns ctx's error in
// the latter case.
func (g *Gate) Wait(ctx context.Context) error {
	for {
		open, changed := g.State()
		if open {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// While returns a context that ends, with cause shut, once the gate is
// shut, or when parent ends. Its cancel function ends it with cause
// context.Canceled.
func (g *Gate) While(parent context.Context, shut error) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		for {
			open, changed := g.State()
			if !open {
				cancel(shut)
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
