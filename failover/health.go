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

// newHealth returns the health check's verdict, shut until the first
// check has answered, or nil without WithHealthCheck.
func newHealth(o options) *gate.Health {
	if o.health == nil {
		return nil
	}
	return gate.NewHealth(o.health, o.healthEvery, o.healthFailures, false, nil)
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
