package main

import (
	"context"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/gate"
)

// healthCheck runs elect's --health command: nil if it exits 0 within the
// interval. It has failover.HealthFunc's signature, so a failover group
// (--fence) uses it through failover.WithHealthCheck.
func healthCheck(a *app, o *electOptions, t commandTemplate) failover.HealthFunc {
	return func(ctx context.Context) error {
		env := []string{"ZKCOORD_PATH=" + o.path, "ZKCOORD_ID=" + o.id}
		return runToEnd(ctx, supervise.Spec{Name: "health", Argv: t.argv(nil), Env: env, Stdout: a.Stderr}, 0, "health check")
	}
}

// runToEnd runs a command that elect waits for (FENCE, HEALTH) until it
// exits: an error, named what, if it fails, or if ctx ends first, when
// the command is stopped with grace.
func runToEnd(ctx context.Context, spec supervise.Spec, grace time.Duration, what string) error {
	c, err := supervise.Start(spec)
	if err != nil {
		return err
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		c.Stop(grace, nil, nil)
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	if c.Status() != 0 {
		return fmt.Errorf("%s failed: %s", what, c.Describe())
	}
	return nil
}

// newHealthGate runs a health check every interval and says whether the
// instance may stand: not while the last failures checks in a row failed
// (the rule of failover.WithHealthCheck, for elect without --fence). It
// stands until the first checks have failed.
func newHealthGate(check failover.HealthFunc, every time.Duration, failures int,
	log func(string, ...any)) *gate.Health {
	return gate.NewHealth(check, every, failures, true, func(err error, n int) {
		log("health check failed", "err", err, "in a row", n)
	})
}
