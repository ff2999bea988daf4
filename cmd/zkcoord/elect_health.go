package main

import (
	"context"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/gate"
)

// healthCheck runs elect's --health command: nil if it exits 0 within the
// interval. It has failover.HealthFunc's signature, so a failover group
// (--fence) uses it through failover.WithHealthCheck.
func healthCheck(a *app, o *electOptions, t commandTemplate) failover.HealthFunc {
	return func(ctx context.Context) error {
		env := []string{"ZKCOORD_PATH=" + o.path, "ZKCOORD_ID=" + o.id}
		c, err := startChild(childSpec{name: "health", argv: t.argv(nil), env: env, stdout: a.stderr})
		if err != nil {
			return err
		}
		select {
		case <-c.Done():
		case <-ctx.Done():
			c.Stop(0, owner{})
			return fmt.Errorf("health check: %w", context.Cause(ctx))
		}
		if c.Status() != 0 {
			return fmt.Errorf("health check failed: %s", c.Describe())
		}
		return nil
	}
}

// healthGate runs a health check every interval and says whether the
// instance may stand: not while the last failures checks in a row failed
// (the rule of failover.WithHealthCheck, for elect without --fence).
type healthGate struct {
	check    failover.HealthFunc
	every    time.Duration
	failures int
	log      func(msg string, args ...any)
	ok       *gate.Gate // open until the checks fail too often in a row
}

func newHealthGate(check failover.HealthFunc, every time.Duration, failures int,
	log func(string, ...any)) *healthGate {
	return &healthGate{check: check, every: every, failures: failures, log: log, ok: gate.New(true)}
}

// run checks until ctx ends.
func (h *healthGate) run(ctx context.Context) {
	t := time.NewTicker(h.every)
	defer t.Stop()
	failed := 0
	for {
		cctx, cancel := context.WithTimeout(ctx, h.every)
		err := h.check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failed++
			h.log("health check failed", "err", err, "in a row", failed)
		} else {
			failed = 0
		}
		h.ok.Set(failed < h.failures)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// waitHealthy waits until the instance may stand; false if ctx ended.
func (h *healthGate) waitHealthy(ctx context.Context) bool { return h.ok.Wait(ctx) == nil }

// whileHealthy returns a context that ends with failover.ErrUnhealthy as
// its cause once the checks fail too often in a row.
func (h *healthGate) whileHealthy(ctx context.Context) (context.Context, context.CancelFunc) {
	return h.ok.While(ctx, failover.ErrUnhealthy)
}
