package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord/internal/gate"
)

// ErrUnhealthy is the cause with which an active instance's context ends
// when its health check has failed too often in a row.
var ErrUnhealthy = errors.New("failover: health check failing")

// HealthFunc reports whether this instance can serve: nil if it can.
type HealthFunc func(ctx context.Context) error

// WithHealthCheck gates the instance on check, run every interval: while
// the last failures checks in a row failed, the instance does not stand
// for the lock, and an active instance steps down (its context ends with
// ErrUnhealthy, its breadcrumb stays for the next active to fence, and it
// gives the lock up). It stands again after the first check that passes.
// Each check gets at most interval to answer.
func WithHealthCheck(check HealthFunc, interval time.Duration, failures int) Option {
	return func(o *options) {
		o.health = check
		o.healthEvery = interval
		o.healthFailures = failures
	}
}

// health runs the checks and holds their verdict. Its goroutine is the only
// writer of the gate; it stays shut until the first check has answered.
type health struct {
	check    HealthFunc
	every    time.Duration
	failures int
	ok       *gate.Gate
}

func newHealth(o options) *health {
	if o.health == nil {
		return nil
	}
	return &health{check: o.health, every: o.healthEvery, failures: o.healthFailures, ok: gate.New(false)}
}

func (o options) validateHealth() error {
	if o.health == nil {
		return nil
	}
	if o.healthEvery <= 0 || o.healthFailures < 1 {
		return fmt.Errorf("failover: health check every %v after %d failures: both must be positive", o.healthEvery, o.healthFailures)
	}
	return nil
}

// run checks until ctx ends.
func (h *health) run(ctx context.Context) {
	failed := 0
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		cctx, cancel := context.WithTimeout(ctx, h.every)
		err := h.check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failed++
		} else {
			failed = 0
		}
		h.ok.Set(failed < h.failures)
		t.Reset(h.every)
	}
}

// waitHealthy waits until the instance is healthy or ctx ends.
func (h *health) waitHealthy(ctx context.Context) error { return h.ok.Wait(ctx) }

// whileHealthy returns a context that ends, with cause ErrUnhealthy, when
// the instance becomes unhealthy, or when parent ends.
func (h *health) whileHealthy(parent context.Context) (context.Context, context.CancelFunc) {
	return h.ok.While(parent, ErrUnhealthy)
}
